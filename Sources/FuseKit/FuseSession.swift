internal import CFuse
import Foundation
import ShelfSystem

/// How a filesystem is mounted and served.
public struct MountOptions: Sendable {
    /// The source shown by `mount` and `df` (`fsname=`).
    public var filesystemName: String
    /// The type suffix shown as `fuse.<subtype>` (`subtype=`).
    public var subtype: String?
    /// Let users other than the mounting one in (`allow_other`; non-root needs
    /// `user_allow_other` in /etc/fuse.conf).
    public var allowOther: Bool
    /// Let the kernel check permissions from the mode bits instead of asking `access`.
    public var defaultPermissions: Bool
    public var readOnly: Bool
    /// libfuse's request trace on stderr.
    public var debug: Bool
    /// Mount with `noatime`. Otherwise the kernel marks a file's access time stale after every
    /// read and asks `getattr` on the next `stat`, a request per file for nothing a
    /// generated-file system can answer better than its modification time.
    public var noAccessTime: Bool
    /// Worker threads kept idle before they are ended.
    public var maximumIdleThreads: Int
    /// Upper bound on concurrent worker threads.
    public var maximumThreads: Int
    /// Give each worker its own `/dev/fuse` descriptor (less contention).
    public var cloneDevice: Bool

    public init(filesystemName: String, subtype: String? = nil, allowOther: Bool = false,
                defaultPermissions: Bool = false, readOnly: Bool = false, debug: Bool = false,
                noAccessTime: Bool = true,
                maximumIdleThreads: Int = 4, maximumThreads: Int = 16, cloneDevice: Bool = true) {
        self.filesystemName = filesystemName
        self.subtype = subtype
        self.allowOther = allowOther
        self.defaultPermissions = defaultPermissions
        self.readOnly = readOnly
        self.debug = debug
        self.noAccessTime = noAccessTime
        self.maximumIdleThreads = maximumIdleThreads
        self.maximumThreads = maximumThreads
        self.cloneDevice = cloneDevice
    }

    /// The `-o` list libfuse parses.
    var mountOptionList: String {
        var options = ["fsname=" + Self.escaped(filesystemName)]
        if let subtype { options.append("subtype=" + Self.escaped(subtype)) }
        if allowOther { options.append("allow_other") }
        if defaultPermissions { options.append("default_permissions") }
        if readOnly { options.append("ro") }
        if noAccessTime { options.append("noatime") }
        return options.joined(separator: ",")
    }

    /// libfuse splits options at commas and treats backslash as an escape.
    private static func escaped(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: ",", with: "\\,")
    }
}

/// Why a session could not start. Each description is one line: what is wrong and how to fix it.
public enum FuseSessionError: Error, Equatable, CustomStringConvertible {
    case mountpointMissing(String)
    case mountpointNotDirectory(String)
    case mountpointNotEmpty(String)
    case alreadyMounted(String)
    /// A FUSE mount whose filesystem process died ("Transport endpoint is not connected").
    case staleMount(String)
    case fuseDeviceMissing
    case invalidOptions(String)
    case mountFailed(String)
    case sessionAlreadyUsed
    /// The request loop ended with an error.
    case loopFailed(Errno)

    public var description: String {
        switch self {
        case .mountpointMissing(let path):
            "mountpoint \(path) does not exist; create it with `mkdir -p \(path)` or choose an existing folder"
        case .mountpointNotDirectory(let path):
            "mountpoint \(path) is not a directory; choose an empty folder to mount on"
        case .mountpointNotEmpty(let path):
            "mountpoint \(path) is not empty; mounting would hide its files — choose an empty folder"
        case .alreadyMounted(let path):
            "\(path) is already a mountpoint; unmount it first with `fusermount3 -u \(path)`"
        case .staleMount(let path):
            "\(path) is a dead FUSE mount (its process exited); clear it with `fusermount3 -u \(path)`"
        case .fuseDeviceMissing:
            "/dev/fuse is missing or not accessible; load the module with `modprobe fuse` (in a container, pass `--device /dev/fuse`)"
        case .invalidOptions(let options):
            "libfuse rejected the mount options \(options); check the filesystem name and subtype"
        case .mountFailed(let path):
            "mounting on \(path) failed (see the libfuse message above); check permissions and /etc/fuse.conf"
        case .sessionAlreadyUsed:
            "this FuseSession was already mounted or run; create a new session for each mount"
        case .loopFailed(let errno):
            "the FUSE request loop failed: \(errno)"
        }
    }
}

/// One FUSE mount of one filesystem: create it, ``mount(at:)``, then ``run(handlingSignals:)``.
///
/// `run` blocks while serving requests on libfuse's worker threads and returns normally when
/// the mount goes away (`fusermount3 -u`, `umount`) or, with signal handling, on SIGINT,
/// SIGTERM or SIGHUP; it then unmounts and calls the filesystem's `destroy`.
public final class FuseSession: @unchecked Sendable {
    /// Pushes invalidations to the kernel; valid for the whole life of the session.
    public let notifier = Notifier()
    /// Reports closes of files written through the mount, for filesystems with stateless opens.
    public let closeWatcher = CloseWatcher()
    public let options: MountOptions
    /// The mount path, once ``mount(at:)`` succeeded.
    public private(set) var mountpoint: String?

    private let dispatcher: Dispatcher
    private var session: OpaquePointer?
    private var hasRun = false

    /// The FUSE device checked before mounting; only tests point it elsewhere.
    private let devicePath: String

    public convenience init(filesystem: some FuseOperations, options: MountOptions) throws(FuseSessionError) {
        try self.init(filesystem: filesystem, options: options, devicePath: "/dev/fuse")
    }

    package init(filesystem: some FuseOperations, options: MountOptions, devicePath: String) throws(FuseSessionError) {
        self.options = options
        self.devicePath = devicePath
        dispatcher = Dispatcher(filesystem: filesystem, notifier: notifier, closeWatcher: closeWatcher)
        var arguments = ["fusekit", "-o", options.mountOptionList]
        if options.debug { arguments.append("-d") }
        session = Self.makeSession(arguments: arguments, dispatcher: dispatcher)
        guard session != nil else { throw .invalidOptions(options.mountOptionList) }
        dispatcher.session = session
    }

    /// A session mounted but never run is unmounted here, so it leaves no dead mount behind.
    deinit {
        guard let session else { return }
        if mountpoint != nil { fuse_session_unmount(session) }
        fuse_session_destroy(session)
    }

    private static func makeSession(arguments: [String], dispatcher: Dispatcher) -> OpaquePointer? {
        let cStrings = arguments.map { strdup($0) }
        defer { cStrings.forEach { free($0) } }
        var argv = cStrings
        return argv.withUnsafeMutableBufferPointer { buffer in
            var args = fuse_args(argc: Int32(buffer.count), argv: buffer.baseAddress, allocated: 0)
            var operations = Dispatcher.operationTable
            return fuse_session_new(&args, &operations, MemoryLayout<fuse_lowlevel_ops>.size,
                                    Unmanaged.passUnretained(dispatcher).toOpaque())
        }
    }

    /// Mounts on `path`, which must be an existing, empty directory that is not a mountpoint.
    public func mount(at path: String) throws(FuseSessionError) {
        guard let session, mountpoint == nil, !hasRun else { throw .sessionAlreadyUsed }
        try Self.checkMountpoint(path)
        guard access(devicePath, R_OK | W_OK) == 0 else { throw .fuseDeviceMissing }
        guard fuse_session_mount(session, path) == 0 else { throw .mountFailed(path) }
        mountpoint = path
        dispatcher.mountpoint = path
    }

    /// Serves requests until the mount goes away or (with `handlingSignals`) a SIGINT, SIGTERM
    /// or SIGHUP arrives; then unmounts. Signal handlers are process-wide: pass false when
    /// several sessions share a process (tests).
    ///
    /// `whenReady` runs once, on another thread, when the kernel has connected and the close
    /// watcher has its first watches: from then on the close watcher looks the mount up only
    /// for a folder made later, so an unmount right after is not refused as busy by its lookups.
    public func run(handlingSignals: Bool = true,
                    whenReady: (@Sendable () -> Void)? = nil) throws(FuseSessionError) {
        guard let session, mountpoint != nil, !hasRun else { throw .sessionAlreadyUsed }
        hasRun = true
        dispatcher.whenReady = whenReady
        let installedSignals = handlingSignals && fuse_set_signal_handlers(session) == 0
        if installedSignals { Self.unblockExitSignals() }
        dispatcher.requestWatch.start()
        defer { dispatcher.requestWatch.stop() }
        let result = cfuse_session_loop_mt(session, options.cloneDevice ? 1 : 0,
                                           UInt32(options.maximumIdleThreads),
                                           UInt32(options.maximumThreads))
        if installedSignals { fuse_remove_signal_handlers(session) }
        closeWatcher.stop()
        let notifierStopped = notifier.stop()
        fuse_session_unmount(session)
        if notifierStopped {
            fuse_session_destroy(session)  // calls the filesystem's destroy()
        } else {
            // A notification is stuck in the kernel and still uses the session: leak it rather
            // than free memory that thread will touch.
            fuseKitLogger.error("notifier did not stop; leaving the FUSE session allocated")
            dispatcher.filesystem.destroy()
        }
        self.session = nil
        // A positive result is the signal that ended the loop: a requested, clean exit.
        if result < 0 { throw .loopFailed(Errno(-result)) }
    }

    /// The loop's waiting thread only notices an exit request when a signal interrupts it,
    /// so this thread must not block the exit signals (threads made by Foundation or Dispatch
    /// may start with them blocked).
    private static func unblockExitSignals() {
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
    }

    private static func checkMountpoint(_ path: String) throws(FuseSessionError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            switch errno {
            case ENOTCONN: throw .staleMount(path)
            case ENOENT: throw .mountpointMissing(path)
            default: throw .mountFailed(path)
            }
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw .mountpointNotDirectory(path) }
        guard MountTable.mount(at: path) == nil else { throw .alreadyMounted(path) }
        let contents = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        guard contents.isEmpty else { throw .mountpointNotEmpty(path) }
    }
}
