import Foundation
import Synchronization
import FuseKit
import ShelfStore

/// The bytes of one item inode held instead of read from the store: a program's writes that
/// are not saved yet (in their journal entry, read from there, so an item of any size costs
/// no memory), or the version a replaced file showed (in memory, as stored), kept for the
/// programs that still read that inode.
///
/// Opens are stateless (the kernel sends reads and writes by inode), so every writer of a file
/// writes into the same buffer, as on a disk filesystem, and readers of the inode read it.
///
/// Two locks, neither ever taken inside a store transaction:
/// - `state` covers the bytes and their bookkeeping. It is a leaf: held for memory work and the
///   journal's file reads and writes only, never while waiting for the store or another lock, so a
///   reader, a writer or the sync engine asking whether the item is busy never waits for a save.
/// - `saveTurn` lets one save of this buffer run at a time (a second would commit the same bytes
///   again). It is held while the save waits for the store, and taken only by savers, which
///   take it after the namespace lock and before the store's writer.
final class ItemBuffer: Sendable {
    struct State {
        /// The bytes while no journal entry holds them (a stored version: never over
        /// ``TooLargeFiles/largestItemFile``); empty while `journal` holds them.
        var held: [UInt8]
        /// How many bytes the file shows.
        var size: Int
        /// The store version `bytes` started from (nil: a new file that is no item yet).
        var baseVersion: Int64?
        /// Written to since the last save.
        var dirty: Bool
        /// Counts the edits: a save publishes its result as "saved" only if no edit came after
        /// the bytes it committed.
        var generation: UInt64 = 0
        /// Who wrote the unsaved bytes (nil inside: a writer not known), whose last reads tell
        /// which version they were made from (``ServedVersions``). Kept with the bytes so that
        /// one who writes while a save commits is still a writer of the next save.
        var writers: Set<ProcessID?> = []
        /// When the bytes last changed: the file's `st_mtime`, and the record's modification time
        /// once saved, so the time an editor saw after writing never moves under it.
        var modified: Date
        /// Taken out of the table; a writer that meets it starts again with the table's buffer.
        var detached = false
        /// Kept as what a file shows whose name went to another file (``ItemBuffers/freeze``):
        /// only the kernel's forgetting the file lets go of it, never a save that held it.
        var isKept = false
        /// The journal entry holding the bytes while they hold unsaved writes.
        var journal: SaveJournal.Entry?
        /// What a file renamed over the item brought besides its bytes (times, mode, user
        /// attributes), to become the item's with them at the save; nil for a program's writes.
        var carried: ItemCommitter.FileMetadata?
        /// The inode of the item file a rename replaced with these bytes: it keeps showing what
        /// it showed to the programs still reading it, from before the save.
        var replacing: UInt64?
        /// When a truncation emptied the bytes, if nothing was written since: an editor saving
        /// in place truncates (`O_TRUNC`) and then writes.
        var emptiedAt: Date?
    }

    let inode: UInt64
    fileprivate let state: Mutex<State>
    private let saveTurn = Mutex<Void>(())
    fileprivate let journal: SaveJournal

    fileprivate init(inode: UInt64, _ state: State, journal: SaveJournal) {
        self.inode = inode
        self.state = Mutex(state)
        self.journal = journal
    }

    /// Up to `size` bytes at `offset`, and the item version they are when no writes changed
    /// them (a file kept at what it showed); nil once detached (the store has these bytes now).
    func read(offset: Int, size: Int) throws(Errno) -> (bytes: [UInt8], version: Int64?)? {
        try state.withLock { state throws(Errno) -> (bytes: [UInt8], version: Int64?)? in
            guard !state.detached else { return nil }
            let version = state.dirty ? nil : state.baseVersion
            guard offset < state.size else { return ([], version) }
            let count = min(state.size - offset, size)
            if let entry = state.journal { return (try journal.read(entry, offset: offset, count: count), version) }
            return (Array(state.held[offset..<offset + count]), version)
        }
    }

    /// What `stat` shows while the bytes are held; nil once detached. `permissions`: those a
    /// file renamed over the item brings, until they are saved with it.
    var shape: (size: Int, modified: Date, permissions: UInt32?)? {
        state.withLock { $0.detached ? nil : ($0.size, $0.modified, $0.dirty ? $0.carried?.permissions : nil) }
    }

    var isDirty: Bool { state.withLock { $0.dirty } }

    /// Marks clean bytes as kept for a file whose name moves on (``State/isKept``); false when
    /// they hold unsaved writes, which are not what any version showed, or when they are not
    /// `version` (nil: whichever they are).
    fileprivate func keep(ifSaved version: Int64? = nil) -> Bool {
        state.withLock { state in
            guard !state.dirty, version == nil || state.baseVersion == version else { return false }
            state.isKept = true
            return true
        }
    }

    /// Whether a truncation emptied the bytes less than `pause` ago and nothing was written
    /// since: the write that usually follows is probably on its way.
    func isAwaitingWrite(within pause: TimeInterval) -> Bool {
        state.withLock { $0.emptiedAt.map { Date().timeIntervalSince($0) < pause } ?? false }
    }

    /// The replaced item file whose bytes are to be kept before these are saved (once).
    func takeReplaced() -> UInt64? { state.withLock { $0.replacing.take() } }

    /// The file's modification time was set (`utimensat`): `stat` shows it until the next write.
    func setModified(_ date: Date) {
        state.withLock { $0.modified = date }
    }

    /// Saves the unsaved bytes, if any, through `commit`. The bytes are read out of the journal
    /// under the state lock and committed outside it; the result is published under the lock
    /// again: the bytes are saved if no write came meanwhile, and otherwise stay unsaved on top
    /// of the version just committed (their journal entry says so) for the next save.
    ///
    /// Bytes over `largest` are never read: their journal entry moves to `setAside` (`EFBIG`
    /// without one), and the buffer lets go of them (the item keeps its last good save).
    /// Returns their size then.
    func saveIfDirty(largest: Int, setAside: String?, _ commit: (_ unsaved: Unsaved) throws -> Saved) throws -> Int? {
        assert(!LibraryStore.isWritingOnThisThread, "a save started inside a store transaction would wait for itself")
        return try saveTurn.withLock { _ -> Int? in
            let taken = try state.withLock { state throws(Errno) -> (Unsaved?, Int?) in
                guard state.dirty, !state.detached else { return (nil, nil) }
                if state.size > largest, let entry = state.journal {
                    guard let setAside else { throw Errno.fileTooLarge }
                    let size = state.size
                    try journal.end(entry, movingBytesTo: setAside)
                    state.journal = nil
                    state.held = []
                    state.size = 0
                    state.dirty = false
                    state.detached = true
                    return (nil, size)
                }
                var bytes = state.held
                if let entry = state.journal { bytes = try journal.read(entry, offset: 0, count: state.size) }
                return (Unsaved(bytes: bytes, baseVersion: state.baseVersion, modified: state.modified,
                                carried: state.carried, writers: state.writers, generation: state.generation), nil)
            }
            guard let unsaved = taken.0 else { return taken.1 }
            let saved = try commit(unsaved)
            try state.withLock { state throws(Errno) in
                state.baseVersion = saved.version
                state.carried = nil
                if state.generation == unsaved.generation {
                    state.dirty = false
                    state.writers = []
                    if let entry = state.journal.take() {
                        state.held = unsaved.bytes
                        journal.end(entry)
                    }
                } else if let entry = state.journal, let target = saved.nextTarget {
                    try journal.retarget(entry, to: target)
                }
            }
            return nil
        }
    }

    /// What a save of the buffer commits.
    struct Unsaved {
        var bytes: [UInt8]
        var baseVersion: Int64?
        var modified: Date
        var carried: ItemCommitter.FileMetadata?
        var writers: Set<ProcessID?>
        fileprivate var generation: UInt64
    }

    /// What a save became: the version holding the committed bytes, and where writes that came
    /// after them are to be saved (nil: where they were going).
    struct Saved {
        var version: Int64
        var nextTarget: SaveJournal.Target?
    }
}

/// A change a program makes to a file's bytes.
enum BufferEdit {
    /// `data` at `offset` (at the end when `appending`); a gap before it reads as zeros.
    case write(offset: Int, data: [UInt8], appending: Bool)
    /// Truncated or zero-extended to `size`.
    case resize(Int)
}

/// The item inodes whose bytes are held in memory (see ``ItemBuffer``), by inode.
///
/// The table's lock is held for dictionary work only; each buffer has its own lock, so writers
/// of different files never wait for one another. Lock order: the table, then a buffer.
final class ItemBuffers: Sendable {
    private let buffers = Mutex<[UInt64: ItemBuffer]>([:])
    let journal: SaveJournal

    init(journal: SaveJournal) {
        self.journal = journal
    }

    func buffer(of inode: UInt64) -> ItemBuffer? {
        buffers.withLock { $0[inode] }
    }

    /// Applies `edit` to the inode's bytes, first taking them from `start` when none are held
    /// (read outside the table's lock: other files are not held up by a store read). The
    /// journal takes the edit first — a journal entry for `target` begins with the first
    /// unsaved edit — so a write the journal cannot hold (a full disk) fails and changes nothing.
    /// Marks the bytes unsaved as of now, with `writer` (nil: not known) among their writers.
    func apply(_ edit: BufferEdit, to inode: UInt64, by writer: ProcessID?, start: () throws -> (bytes: [UInt8], baseVersion: Int64?),
               target: (_ baseVersion: Int64?) -> SaveJournal.Target) throws {
        while true {
            let buffer: ItemBuffer
            if let held = self.buffer(of: inode) {
                buffer = held
            } else {
                let (bytes, baseVersion) = try start()
                let made = ItemBuffer(inode: inode, .init(held: bytes, size: bytes.count, baseVersion: baseVersion,
                                                          dirty: false, modified: Date()), journal: journal)
                buffer = buffers.withLock { buffers in
                    if let held = buffers[inode] { return held }
                    buffers[inode] = made
                    return made
                }
            }
            let applied = try buffer.state.withLock { state throws(Errno) -> Bool in
                guard !state.detached else { return false }
                if state.journal == nil {
                    state.journal = try journal.begin(inode, target: target(state.baseVersion), bytes: state.held)
                    state.held = []
                }
                let entry = state.journal!
                switch edit {
                case .write(let offset, let data, let appending):
                    let start = appending ? state.size : offset
                    try journal.write(data, at: start, to: entry)
                    state.size = max(state.size, start + data.count)
                case .resize(let size):
                    try journal.truncate(entry, to: size)
                    state.size = size
                }
                if case .resize(0) = edit { state.emptiedAt = Date() } else { state.emptiedAt = nil }
                state.dirty = true
                state.writers.insert(writer)
                state.generation &+= 1
                state.modified = Date()
                return true
            }
            if applied { return }
            // Detached and not yet out of the table: take it out, and start from the store.
            buffers.withLock { if $0[inode] === buffer { $0[inode] = nil } }
        }
    }

    /// Starts the bytes of a new file at `path`: empty, and unsaved from its creation so that
    /// even an empty file becomes an item.
    func startNewFile(_ inode: UInt64, at path: String) throws(Errno) {
        let entry = try journal.begin(inode, target: .newFile(path: path), bytes: [])
        buffers.withLock {
            $0[inode] = ItemBuffer(inode: inode, .init(held: [], size: 0, baseVersion: nil, dirty: true, modified: Date(),
                                                       journal: entry), journal: journal)
        }
    }

    /// A file renamed over an item (an atomic save): its bytes (`bytes`, read from `file`)
    /// become `inode`'s unsaved bytes, written by `renamer`, saved into `target` with the times,
    /// mode and attributes the file carried; the inode it replaces is `replacing`. The file
    /// itself moves into the journal as the entry's bytes; returns false when it could not and
    /// stays where it was.
    func adopt(_ bytes: [UInt8], from file: String, as inode: UInt64, by renamer: ProcessID?, target: SaveJournal.Target,
               carrying metadata: ItemCommitter.FileMetadata, replacing: UInt64?) throws(Errno) -> Bool {
        let moved = try journal.begin(inode, target: target, movingFileAt: file)
        let entry = if let moved { moved } else { try journal.begin(inode, target: target, bytes: bytes) }
        let baseVersion: Int64? = if case .item(_, let base) = target { base } else { nil }
        buffers.withLock {
            $0[inode] = ItemBuffer(inode: inode, .init(held: [], size: bytes.count, baseVersion: baseVersion, dirty: true,
                                                       writers: [renamer], modified: metadata.modified, journal: entry,
                                                       carried: metadata, replacing: replacing),
                                   journal: journal)
        }
        return moved != nil
    }

    /// A new file's unsaved bytes now belong at `path` (it was renamed before its first save).
    func retarget(_ inode: UInt64, toNewFileAt path: String) throws(Errno) {
        guard let buffer = buffer(of: inode) else { return }
        try buffer.state.withLock { state throws(Errno) in
            if let entry = state.journal { try journal.retarget(entry, to: .newFile(path: path)) }
        }
    }

    /// Keeps `bytes` (version `version` of the item) as what `inode` shows, for the programs that
    /// still read it after its name went to another file. Returns whether the inode shows them
    /// now. Bytes already held win: saved ones are what it shows, unsaved writes are kept.
    /// `isShown` (is `version` still the one the index gives readers?) is asked under the table's
    /// lock: a save publishes its version before it lets go of its buffer, so a save that moved
    /// the item on meanwhile is seen, and its bytes are never replaced by older ones.
    /// Lock order: the table, then the item index `isShown` reads.
    func freeze(_ inode: UInt64, bytes: [UInt8], version: Int64, modified: Date, ifShown isShown: () -> Bool) -> Bool {
        buffers.withLock { buffers in
            if let held = buffers[inode] { return held.keep() }
            guard isShown() else { return false }
            var state = ItemBuffer.State(held: bytes, size: bytes.count, baseVersion: version, dirty: false, modified: modified)
            state.isKept = true
            buffers[inode] = ItemBuffer(inode: inode, state, journal: journal)
            return true
        }
    }

    /// Keeps the bytes `inode` holds, if any, as what it shows (``freeze``); nil when it holds
    /// none, false when they are unsaved writes. `version`: only if they are that saved version,
    /// decided under the lock a save publishes under, so a later save of the file is never
    /// taken for a change from elsewhere.
    func keepHeld(_ inode: UInt64, ifSaved version: Int64? = nil) -> Bool? {
        buffers.withLock { $0[inode]?.keep(ifSaved: version) }
    }

    /// Lets go of the inode's bytes unless they hold unsaved writes or are kept for a file
    /// whose name moved on: the store shows the same now.
    func releaseIfSaved(_ inode: UInt64) {
        release(inode, evenIfKept: false)
    }

    /// Lets go of the inode's bytes unless they hold unsaved writes, kept ones too: the kernel
    /// forgot the file, or it stopped being an item's.
    func releaseForgotten(_ inode: UInt64) {
        release(inode, evenIfKept: true)
    }

    private func release(_ inode: UInt64, evenIfKept: Bool) {
        buffers.withLock { buffers in
            guard let held = buffers[inode] else { return }
            let released = held.state.withLock { state in
                guard !state.dirty, evenIfKept || !state.isKept else { return false }
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

    /// Whether `inode`'s file has writes not saved yet (or being saved). Asked by the inode
    /// table under its lock: this takes the table's lock, then the buffer's.
    func holdsUnsavedWrites(_ inode: UInt64) -> Bool {
        buffer(of: inode)?.isDirty == true
    }

    /// Every inode with unsaved writes.
    func unsavedInodes() -> [UInt64] {
        buffers.withLock { $0.values.filter(\.isDirty).map(\.inode) }
    }

    var hasUnsavedWrites: Bool {
        buffers.withLock { $0.values.contains(where: \.isDirty) }
    }
}
