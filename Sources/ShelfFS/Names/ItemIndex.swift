import Foundation
import Synchronization
import ShelfModel
import ShelfStore

/// The mount's in-memory map of live items: by path, by id and by folder.
///
/// `lookup`, `getattr` and `readdir` answer from here without touching SQLite, so listing a
/// folder of 100,000 items costs no query. It is filled once from `summaries()` and kept current
/// by ``MountView`` alone — the writes take its ``IndexWriter``, which nothing else can make.
/// The lock is held only for dictionary work, never across a store call.
final class ItemIndex: Sendable {
    /// One live item. Folder listings keep slots, so a `readdirplus` batch reads each item's
    /// current size and time without a search. Mutable state is guarded by the index's lock.
    final class Slot: @unchecked Sendable {
        let id: ItemID
        fileprivate var summary: ItemSummary
        /// False once the item left the index (trashed, or deleted elsewhere).
        fileprivate var isLive = true

        fileprivate init(_ summary: ItemSummary) {
            id = summary.id
            self.summary = summary
        }
    }

    /// The items of one folder by name, and their names in listing order once asked for.
    private struct Folder {
        var byName: [String: Slot] = [:]
        /// Sorted by bytes (cheap, and stable: listing order only needs to be the same each
        /// time); dropped at every change of the folder's names, made again at the next listing.
        var listing: [(name: String, slot: Slot)]?
        /// Stamped from the index's counter at every change of the folder's names.
        var generation: UInt64 = 0

        /// Names `slot` `name` (nil: removes the name), stamped with `generation`.
        mutating func set(_ name: String, to slot: Slot?, generation: UInt64) {
            byName[name] = slot
            listing = nil
            self.generation = generation
        }
    }

    private struct State {
        var byID: [ItemID: Slot] = [:]
        var idByPath: [MountPath: ItemID] = [:]
        var folders: [MountPath: Folder] = [:]
        var changes: UInt64 = 0
    }

    private let state: Mutex<State>

    init(_ summaries: [ItemSummary] = []) {
        // Sized up front: growing dictionaries of 100,000 entries step by step costs a large
        // part of a big library's mount time.
        var state = State()
        state.byID.reserveCapacity(summaries.count)
        state.idByPath.reserveCapacity(summaries.count)
        var folderSizes: [MountPath: Int] = [:]
        for summary in summaries { folderSizes[MountPath(summary.path).parent, default: 0] += 1 }
        for (folder, size) in folderSizes { state.folders[folder] = Folder(byName: Dictionary(minimumCapacity: size)) }
        for summary in summaries { Self.insert(Slot(summary), into: &state) }
        self.state = Mutex(state)
    }

    func summary(id: ItemID) -> ItemSummary? {
        state.withLock { $0.byID[id]?.summary }
    }

    /// The item's current version, without copying its summary (the read path asks this).
    func version(of id: ItemID) -> Int64? {
        state.withLock { $0.byID[id]?.summary.version }
    }

    func summary(at path: MountPath) -> ItemSummary? {
        state.withLock { state in state.idByPath[path].flatMap { state.byID[$0]?.summary } }
    }

    /// The item files directly in `folder` (names in bytes order, with their slots), and the
    /// generation of that list: the same generation means the same names and items.
    func items(in folder: MountPath) -> (items: [(name: String, slot: Slot)], generation: UInt64) {
        state.withLock { state in
            guard let known = state.folders[folder] else { return ([], 0) }
            if let listing = known.listing { return (listing, known.generation) }
            let listing = known.byName.map { (name: $0.key, slot: $0.value) }
                .sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
            state.folders[folder]?.listing = listing
            return (listing, known.generation)
        }
    }

    /// The generation of `folder`'s names (see ``items(in:)``).
    func generation(of folder: MountPath) -> UInt64 {
        state.withLock { $0.folders[folder]?.generation ?? 0 }
    }

    /// What `stat` shows of each item now (nil for one no longer live), under one lock: a
    /// listing's attributes, read through its slots.
    func shapes(_ slots: [Slot]) -> [(size: Int, modified: Date, permissions: UInt32, isPlaceholder: Bool, version: Int64)?] {
        state.withLock { _ in
            slots.map {
                $0.isLive ? ($0.summary.size, $0.summary.modified, $0.summary.permissions, $0.summary.isPlaceholder,
                             $0.summary.version) : nil
            }
        }
    }

    /// Whether any item lies in `folder` or below it.
    func hasItems(inside folder: MountPath) -> Bool {
        // By folder, not by item: an `rmdir` costs the library's folders, not its items.
        state.withLock { state in state.folders.contains { $0.key.isInside(folder) && !$0.value.byName.isEmpty } }
    }

    /// The items in `folder` or below it.
    func ids(inside folder: MountPath) -> [ItemID] {
        state.withLock { state in state.idByPath.compactMap { $0.key.isInside(folder) ? $0.value : nil } }
    }

    /// Every live item with a pending invalid save.
    func itemsWithDrafts() -> [ItemSummary] {
        state.withLock { $0.byID.values.map(\.summary).filter(\.hasDraft).sorted { $0.path < $1.path } }
    }

    func counts() -> (books: Int, notes: Int) {
        state.withLock { state in
            let books = state.byID.values.count { $0.summary.kind == .book }
            return (books, state.byID.count - books)
        }
    }

    /// Records `summary` as the item's current state; returns the state it replaces. A state
    /// older than the one recorded loses: another thread may have recorded a newer save first.
    @discardableResult
    func put(_ summary: ItemSummary, _: IndexWriter) -> ItemSummary? {
        state.withLock { state in
            if let slot = state.byID[summary.id], slot.summary.version > summary.version { return slot.summary }
            if let slot = state.byID[summary.id], slot.summary.path.hasSameBytes(as: summary.path) {
                let old = slot.summary
                slot.summary = summary  // same name: the folder's listing stands
                return old
            }
            let old = Self.remove(summary.id, from: &state)
            Self.insert(Slot(summary), into: &state)
            return old
        }
    }

    /// Records `summary` (nil: the item is gone) only if the index still holds `expected` for
    /// `id`: a state read from the store loses to a save this mount recorded meanwhile, which
    /// is as new or newer. Returns whether it was recorded.
    func put(_ summary: ItemSummary?, for id: ItemID, ifStill expected: ItemSummary?, _: IndexWriter) -> Bool {
        state.withLock { state in
            guard state.byID[id]?.summary == expected else { return false }
            if let summary {
                if let slot = state.byID[id], slot.summary.path.hasSameBytes(as: summary.path) {
                    slot.summary = summary
                } else {
                    _ = Self.remove(id, from: &state)
                    Self.insert(Slot(summary), into: &state)
                }
            } else {
                _ = Self.remove(id, from: &state)
            }
            return true
        }
    }

    /// Forgets a trashed or deleted item; returns its last known state.
    @discardableResult
    func remove(_ id: ItemID, _: IndexWriter) -> ItemSummary? {
        state.withLock { state in Self.remove(id, from: &state) }
    }

    private static func insert(_ slot: Slot, into state: inout State) {
        let path = MountPath(slot.summary.path)
        state.byID[slot.id] = slot
        state.idByPath[path] = slot.id
        state.changes += 1
        state.folders[path.parent, default: Folder()].set(path.name, to: slot, generation: state.changes)
    }

    private static func remove(_ id: ItemID, from state: inout State) -> ItemSummary? {
        guard let slot = state.byID.removeValue(forKey: id) else { return nil }
        slot.isLive = false
        let path = MountPath(slot.summary.path)
        if state.idByPath[path] == id {
            state.idByPath[path] = nil
            state.changes += 1
            state.folders[path.parent]?.set(path.name, to: nil, generation: state.changes)
        }
        return slot.summary
    }
}

extension ItemSummary {
    /// The listing form of a full record.
    init(_ record: ItemRecord) {
        let favorite: Bool
        if case .note(let note) = record.item { favorite = note.favorite } else { favorite = false }
        self.init(id: record.item.id, kind: record.item.kind, title: record.item.title, path: record.path,
                  version: record.version, modified: record.modified, size: record.content.count,
                  favorite: favorite, hasDraft: record.draftDiagnostics != nil, permissions: record.permissions)
    }
}
