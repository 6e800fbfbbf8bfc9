import Foundation
import Glibc
import Synchronization

/// One open of an item file: a snapshot of one version, and the program's writes on top of it.
///
/// Reads of this open always see one complete version (plus its own writes), whatever the store
/// does meanwhile; the writes reach the store only when the program flushes, syncs or closes.
final class ItemOpenFile: Sendable {
    struct Buffer {
        var bytes: [UInt8]
        /// The store version `bytes` started from (nil for a file not yet saved as an item).
        var baseVersion: Int64?
        /// Written to since the last commit.
        var dirty: Bool
    }

    let inode: UInt64
    let writable: Bool
    /// Opened with `O_APPEND`: every write goes to the end, whatever offset the kernel sends.
    let appends: Bool
    private let buffer: Mutex<Buffer>

    init(inode: UInt64, bytes: [UInt8], baseVersion: Int64?, writable: Bool, appends: Bool, dirty: Bool) {
        self.inode = inode
        self.writable = writable
        self.appends = appends
        self.buffer = Mutex(Buffer(bytes: bytes, baseVersion: baseVersion, dirty: dirty))
    }

    func read(offset: Int, size: Int) -> [UInt8] {
        buffer.withLock { buffer in
            guard offset < buffer.bytes.count else { return [] }
            return Array(buffer.bytes[offset..<min(buffer.bytes.count, offset + size)])
        }
    }

    /// Writes `data` at `offset` (zero-filling any gap); returns the byte count written.
    func write(_ data: [UInt8], at offset: Int) -> Int {
        buffer.withLock { buffer in
            let start = appends ? buffer.bytes.count : offset
            if start > buffer.bytes.count {
                buffer.bytes += [UInt8](repeating: 0, count: start - buffer.bytes.count)
            }
            let overlap = min(data.count, buffer.bytes.count - start)
            buffer.bytes.replaceSubrange(start..<start + overlap, with: data)
            buffer.dirty = true
            return data.count
        }
    }

    func truncate(to size: Int) {
        buffer.withLock { buffer in
            if size < buffer.bytes.count {
                buffer.bytes.removeSubrange(size...)
            } else {
                buffer.bytes += [UInt8](repeating: 0, count: size - buffer.bytes.count)
            }
            buffer.dirty = true
        }
    }

    /// The size a `stat` must show while this open has unsaved writes.
    var unsavedSize: Int? {
        buffer.withLock { $0.dirty ? $0.bytes.count : nil }
    }

    /// Runs `save` on the unsaved bytes, if any, and marks them saved at the version it returns.
    ///
    /// The buffer stays locked during the save, so this open's writes never interleave with its
    /// own commit; other files are not affected.
    func commitIfDirty(_ save: (_ bytes: [UInt8], _ baseVersion: Int64?) throws -> Int64) throws {
        try buffer.withLock { buffer in
            guard buffer.dirty else { return }
            buffer.baseVersion = try save(buffer.bytes, buffer.baseVersion)
            buffer.dirty = false
        }
    }
}

/// An open of a plain file: a real descriptor in the plain-file area.
final class PlainOpenFile: Sendable {
    let inode: UInt64
    let descriptor: Int32
    /// Written to since it was opened, or since the file became an item by a rename.
    private let written = Mutex(false)

    init(inode: UInt64, descriptor: Int32) {
        self.inode = inode
        self.descriptor = descriptor
    }

    func noteWrite() { written.withLock { $0 = true } }

    /// Whether it was written to since the last call.
    func takeWritten() -> Bool {
        written.withLock { written in
            defer { written = false }
            return written
        }
    }

    deinit { close(descriptor) }
}

/// What a file handle stands for.
enum OpenFile: Sendable {
    case item(ItemOpenFile)
    case plain(PlainOpenFile)
    /// A status file, generated at open.
    case status([UInt8])
}

/// The mount's open file handles, by the number handed to the kernel.
final class OpenFileTable: Sendable {
    private struct State {
        var files: [UInt64: OpenFile] = [:]
        var next: UInt64 = 1
    }
    private let state = Mutex(State())

    func add(_ file: OpenFile) -> UInt64 {
        state.withLock { state in
            let handle = state.next
            state.next += 1
            state.files[handle] = file
            return handle
        }
    }

    func file(_ handle: UInt64) -> OpenFile? {
        state.withLock { $0.files[handle] }
    }

    @discardableResult
    func remove(_ handle: UInt64) -> OpenFile? {
        state.withLock { $0.files.removeValue(forKey: handle) }
    }

    /// The item opens of `inode`.
    func itemFiles(of inode: UInt64) -> [ItemOpenFile] {
        state.withLock { state in
            state.files.values.compactMap { file in
                if case .item(let open) = file, open.inode == inode { return open }
                return nil
            }
        }
    }

    /// The plain opens of `inode`.
    func plainFiles(of inode: UInt64) -> [PlainOpenFile] {
        state.withLock { state in
            state.files.values.compactMap { file in
                if case .plain(let open) = file, open.inode == inode { return open }
                return nil
            }
        }
    }

    /// Whether `inode` is open at all (a change from outside must then not delete or move it).
    func isOpen(_ inode: UInt64) -> Bool {
        state.withLock { state in
            state.files.values.contains { file in
                switch file {
                case .item(let open): open.inode == inode
                case .plain(let open): open.inode == inode
                case .status: false
                }
            }
        }
    }

    /// Every item open with unsaved writes (flushed at unmount).
    func dirtyItemFiles() -> [ItemOpenFile] {
        state.withLock { state in
            state.files.values.compactMap { file in
                if case .item(let open) = file, open.unsavedSize != nil { return open }
                return nil
            }
        }
    }
}
