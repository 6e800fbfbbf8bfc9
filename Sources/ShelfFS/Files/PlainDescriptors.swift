import Glibc
import Synchronization
import FuseKit
import ShelfSystem

/// Open descriptors of plain files, by inode.
///
/// Opens are stateless, so reads and writes of a plain file arrive by inode with no open of
/// their own: the real file is opened on first use and kept, up to ``capacity`` files (the
/// least recently used is closed beyond that). A descriptor follows its file through renames.
/// A file unlinked while the kernel still knows its inode is held open until the kernel
/// forgets it, so programs that still have it open read and write it as on a disk filesystem.
final class PlainDescriptors: Sendable {
    /// One open of a real file; closed when the last user lets go of it. Every call made on it
    /// is one of its methods, so each is written once.
    final class Descriptor: Sendable {
        private let fd: Int32
        let isWritable: Bool

        fileprivate init(fd: Int32, isWritable: Bool) {
            self.fd = fd
            self.isWritable = isWritable
        }

        deinit { close(fd) }

        /// Up to `count` bytes at `offset` (fewer at the end of the file).
        func read(count: Int, at offset: Int64) throws(Errno) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: count)
            let read = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            guard read >= 0 else { throw Errno.current }
            bytes.removeSubrange(read...)
            return bytes
        }

        /// Writes `bytes` at `offset`, or at the file's end when nil (`O_APPEND`); returns the count written.
        func write(_ bytes: [UInt8], at offset: Int64?) throws(Errno) -> Int {
            let position = if let offset { off_t(offset) } else { try status().st_size }
            let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, bytes.count, position) }
            guard written >= 0 else { throw Errno.current }
            return written
        }

        func status() throws(Errno) -> stat {
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw Errno.current }
            return info
        }

        func resize(to size: UInt64) throws(Errno) {
            guard ftruncate(fd, off_t(size)) == 0 else { throw Errno.current }
        }

        func synchronize() throws(Errno) {
            guard fsync(fd) == 0 else { throw Errno.current }
        }

        /// `setattr` through the descriptor: of a file unlinked while open, whose path is gone
        /// (or names another file).
        func apply(_ changes: AttributeChanges) throws(Errno) {
            if let permissions = changes.permissions, fchmod(fd, mode_t(permissions)) != 0 { throw Errno.current }
            if changes.uid != nil || changes.gid != nil,
               fchown(fd, changes.uid ?? UInt32.max, changes.gid ?? UInt32.max) != 0 { throw Errno.current }
            if let size = changes.size { try resize(to: size) }
            if changes.accessTime != nil || changes.modificationTime != nil {
                let omit = timespec(tv_sec: 0, tv_nsec: LinuxCalls.timeOmit)
                let times = [changes.accessTime.map { timespec($0.resolved) } ?? omit,
                             changes.modificationTime.map { timespec($0.resolved) } ?? omit]
                guard futimens(fd, times) == 0 else { throw Errno.current }
            }
        }
    }

    private struct Held {
        var descriptor: Descriptor
        var lastUse: UInt64
        /// The file is unlinked: keep it until the kernel forgets the inode.
        var pinned: Bool
    }

    private struct State {
        var held: [UInt64: Held] = [:]
        var clock: UInt64 = 0
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int = 256) {
        self.capacity = capacity
    }

    /// The descriptor of `inode`'s file at `path` in `area`, opened read-write where allowed
    /// (read-only otherwise); a read-only one is reopened when `writable` is needed — except
    /// for an unlinked file, whose path is gone or names another file by now.
    func descriptor(of inode: UInt64, path: MountPath, in area: PlainFileArea, writable: Bool) throws(Errno) -> Descriptor {
        if let held = use(inode), held.isWritable || !writable { return held }
        if unlinked(inode) != nil { throw .badHandle }
        let descriptor = try Self.open(path, in: area, writable: writable)
        state.withLock { state in
            state.clock += 1
            let pinned = state.held[inode]?.pinned ?? false
            state.held[inode] = Held(descriptor: descriptor, lastUse: state.clock, pinned: pinned)
            evictBeyondCapacity(&state)
        }
        return descriptor
    }

    /// Creates the file at `path` in `area` (`exclusive`ly when asked), open read-write whatever
    /// `mode` says: the creator may write a file it makes read-only.
    static func create(_ path: MountPath, in area: PlainFileArea, exclusive: Bool, mode: UInt32) throws(Errno) -> Descriptor {
        Descriptor(fd: try area.open(path, flags: O_RDWR | O_CREAT | (exclusive ? O_EXCL : 0), mode: mode_t(mode)),
                   isWritable: true)
    }

    /// Keeps `descriptor`, of a file just created (``create(_:in:exclusive:mode:)``), as `inode`'s.
    func keep(_ descriptor: Descriptor, for inode: UInt64) {
        state.withLock { state in
            state.clock += 1
            state.held[inode] = Held(descriptor: descriptor, lastUse: state.clock, pinned: false)
            evictBeyondCapacity(&state)
        }
    }

    /// Keeps `inode`'s file open until ``forget(_:)``: it is about to be unlinked while the
    /// kernel may still have it open, and programs may go on reading and writing it. Regular
    /// files only (opening a device node or a FIFO is not without effects).
    func pin(_ inode: UInt64, path: MountPath, in area: PlainFileArea) {
        let held = use(inode)
        if held?.isWritable != true, (try? area.status(path)).map({ $0.st_mode & S_IFMT == S_IFREG }) == true,
           let descriptor = try? Self.open(path, in: area, writable: false) {
            state.withLock { $0.held[inode] = Held(descriptor: descriptor, lastUse: $0.clock, pinned: true) }
        }
        state.withLock { $0.held[inode]?.pinned = true }
    }

    /// The descriptor of `inode`'s file if it was unlinked while the kernel knew it: its
    /// attributes and changes go through it, not through a path.
    func unlinked(_ inode: UInt64) -> Descriptor? {
        state.withLock { state in
            guard let held = state.held[inode], held.pinned else { return nil }
            return held.descriptor
        }
    }

    /// The kernel forgot `inode`, or it stopped being a plain file: close its file.
    func forget(_ inode: UInt64) {
        _ = state.withLock { $0.held.removeValue(forKey: inode) }
    }

    private func use(_ inode: UInt64) -> Descriptor? {
        state.withLock { state in
            guard state.held[inode] != nil else { return nil }
            state.clock += 1
            state.held[inode]!.lastUse = state.clock
            return state.held[inode]!.descriptor
        }
    }

    /// Closes the least recently used half of the unpinned files once over capacity (in one go,
    /// so the sort is paid rarely).
    private func evictBeyondCapacity(_ state: inout State) {
        guard state.held.count > capacity else { return }
        let unpinned = state.held.filter { !$0.value.pinned }.sorted { $0.value.lastUse < $1.value.lastUse }
        for (inode, _) in unpinned.prefix(max(1, unpinned.count / 2)) { state.held[inode] = nil }
    }

    private static func open(_ path: MountPath, in area: PlainFileArea, writable: Bool) throws(Errno) -> Descriptor {
        do {
            return Descriptor(fd: try area.open(path, flags: O_RDWR), isWritable: true)
        } catch let error where !writable && (error.code == EACCES || error.code == EROFS || error.code == ETXTBSY) {
            return Descriptor(fd: try area.open(path, flags: O_RDONLY), isWritable: false)
        }
    }
}
