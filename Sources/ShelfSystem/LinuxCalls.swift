import Glibc

/// Linux system calls that Swift's Glibc module does not import (`<sys/xattr.h>`, `<malloc.h>`,
/// `renameat2`, `gettid` and `fallocate`, which need `_GNU_SOURCE`), resolved once from the C
/// library by name.
public enum LinuxCalls {
    public static let xattrCreate: Int32 = 1  // XATTR_CREATE
    public static let xattrReplace: Int32 = 2  // XATTR_REPLACE
    public static let timeOmit = (1 << 30) - 2  // UTIME_OMIT
    public static let openPath: Int32 = 0o10000000  // O_PATH: a descriptor that only names a file
    public static let keepSize: Int32 = 1  // FALLOC_FL_KEEP_SIZE

    public typealias GetAttribute = @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeMutableRawPointer?, Int) -> Int
    public typealias SetAttribute = @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeRawPointer?, Int, Int32) -> Int32
    public typealias ListAttributes = @convention(c) (UnsafePointer<CChar>, UnsafeMutablePointer<CChar>?, Int) -> Int
    public typealias RemoveAttribute = @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>) -> Int32
    public typealias RenameAt2 = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
    public typealias GetThreadID = @convention(c) () -> Int32
    public typealias MallocOption = @convention(c) (Int32, Int32) -> Int32
    public typealias Allocate = @convention(c) (Int32, Int32, off_t, off_t) -> Int32

    nonisolated(unsafe) public static let lgetxattr: GetAttribute = resolve("lgetxattr")
    nonisolated(unsafe) public static let lsetxattr: SetAttribute = resolve("lsetxattr")
    nonisolated(unsafe) public static let llistxattr: ListAttributes = resolve("llistxattr")
    nonisolated(unsafe) public static let lremovexattr: RemoveAttribute = resolve("lremovexattr")
    nonisolated(unsafe) public static let renameat2: RenameAt2 = resolve("renameat2")
    /// The calling thread's kernel id: what FUSE requests carry as their pid.
    nonisolated(unsafe) public static let gettid: GetThreadID = resolve("gettid")
    nonisolated(unsafe) public static let mallopt: MallocOption = resolve("mallopt")
    nonisolated(unsafe) public static let fallocate: Allocate = resolve("fallocate")

    /// Puts the calling thread behind the request handlers (nice 10): for work nobody waits on,
    /// which then takes the cores the programs using the mount leave free.
    public static func yieldToRequestHandlers() {
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(gettid()), 10)
    }

    /// Two malloc arenas for the whole process (`M_ARENA_MAX`): glibc otherwise gives threads
    /// that allocate at once arenas of their own, each keeping what it freed, so the daemon's
    /// memory would grow with every thread that ever saved or read a large file.
    public static func limitMallocArenas() {
        _ = mallopt(-8, 2)  // M_ARENA_MAX
    }

    private static func resolve<F>(_ name: String) -> F {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
            fatalError("the C library lacks \(name) (glibc 2.28 or newer is required)")
        }
        return unsafeBitCast(symbol, to: F.self)
    }
}
