import Foundation
import Synchronization

/// The bytes of one item inode held in memory instead of read from the store: a program's
/// writes that are not saved yet, or the version a replaced file showed, kept for the programs
/// that still read that inode.
///
/// Opens are stateless (the kernel sends reads and writes by inode), so every writer of a file
/// writes into the same buffer, as on a disk filesystem, and readers of the inode read it.
final class ItemBuffer: Sendable {
    struct State {
        var bytes: [UInt8]
        /// The store version `bytes` started from (nil: a new file that is no item yet).
        var baseVersion: Int64?
        /// Written to since the last save.
        var dirty: Bool
        /// When the bytes last changed: the file's `st_mtime`, and the record's modification time
        /// once saved, so the time an editor saw after writing never moves under it.
        var modified: Date
        /// Taken out of the table; a writer that meets it starts again with the table's buffer.
        var detached = false
    }

    let inode: UInt64
    fileprivate let state: Mutex<State>

    fileprivate init(inode: UInt64, _ state: State) {
        self.inode = inode
        self.state = Mutex(state)
    }

    /// Up to `size` bytes at `offset`; nil once detached (the store has these bytes now).
    func read(offset: Int, size: Int) -> [UInt8]? {
        state.withLock { state in
            guard !state.detached else { return nil }
            guard offset < state.bytes.count else { return [] }
            return Array(state.bytes[offset..<min(state.bytes.count, offset + size)])
        }
    }

    /// What `stat` shows while the bytes are held; nil once detached.
    var shape: (size: Int, modified: Date)? {
        state.withLock { $0.detached ? nil : ($0.bytes.count, $0.modified) }
    }

    var isDirty: Bool { state.withLock { $0.dirty } }

    /// Runs `save` on the unsaved bytes, if any, and marks them saved at the version it returns.
    /// The buffer stays locked meanwhile, so no write interleaves with its own save.
    func saveIfDirty(_ save: (_ bytes: [UInt8], _ baseVersion: Int64?, _ modified: Date) throws -> Int64) throws {
        try state.withLock { state in
            guard state.dirty, !state.detached else { return }
            state.baseVersion = try save(state.bytes, state.baseVersion, state.modified)
            state.dirty = false
        }
    }
}

/// The item inodes whose bytes are held in memory (see ``ItemBuffer``), by inode.
///
/// The table's lock is held for dictionary work only; each buffer has its own lock, so writers
/// of different files never wait for one another. Lock order: the table, then a buffer.
final class ItemBuffers: Sendable {
    private let buffers = Mutex<[UInt64: ItemBuffer]>([:])

    func buffer(of inode: UInt64) -> ItemBuffer? {
        buffers.withLock { $0[inode] }
    }

    /// Changes the inode's bytes with `change`, first taking them from `start` when none are
    /// held (read outside the table's lock: other files are not held up by a store read). Marks
    /// them unsaved as of now.
    func write<T>(_ inode: UInt64, start: () throws -> (bytes: [UInt8], baseVersion: Int64?),
                  _ change: (inout [UInt8]) -> T) throws -> T {
        while true {
            let buffer: ItemBuffer
            if let held = self.buffer(of: inode) {
                buffer = held
            } else {
                let (bytes, baseVersion) = try start()
                let made = ItemBuffer(inode: inode, .init(bytes: bytes, baseVersion: baseVersion, dirty: true,
                                                          modified: Date()))
                buffer = buffers.withLock { buffers in
                    if let held = buffers[inode] { return held }
                    buffers[inode] = made
                    return made
                }
            }
            let result: T? = buffer.state.withLock { state in
                guard !state.detached else { return nil }
                state.dirty = true
                state.modified = Date()
                return change(&state.bytes)
            }
            if let result { return result }
        }
    }

    /// Starts the bytes of a new file: empty, and unsaved from its creation so that even an
    /// empty file becomes an item.
    func startNewFile(_ inode: UInt64) {
        buffers.withLock { $0[inode] = ItemBuffer(inode: inode, .init(bytes: [], baseVersion: nil, dirty: true, modified: Date())) }
    }

    /// Keeps `bytes` (version `version` of the item) as what `inode` shows, for the programs that
    /// still read it after its name went to another file. Unsaved writes already held win.
    func freeze(_ inode: UInt64, bytes: [UInt8], version: Int64, modified: Date) {
        buffers.withLock { buffers in
            if let held = buffers[inode], held.isDirty { return }
            buffers[inode] = ItemBuffer(inode: inode, .init(bytes: bytes, baseVersion: version, dirty: false,
                                                            modified: modified))
        }
    }

    /// Lets go of the inode's bytes unless they hold unsaved writes: the store shows the same now.
    func releaseIfSaved(_ inode: UInt64) {
        buffers.withLock { buffers in
            guard let held = buffers[inode] else { return }
            let released = held.state.withLock { state in
                guard !state.dirty else { return false }
                state.detached = true
                return true
            }
            if released { buffers[inode] = nil }
        }
    }

    /// Every inode whose bytes are held (usually none: a listing checks this once per batch).
    func heldInodes() -> Set<UInt64> {
        buffers.withLock { Set($0.keys) }
    }

    /// Every inode with unsaved writes.
    func unsavedInodes() -> [UInt64] {
        buffers.withLock { $0.values.filter(\.isDirty).map(\.inode) }
    }

    var hasUnsavedWrites: Bool {
        buffers.withLock { $0.values.contains(where: \.isDirty) }
    }
}
