import Synchronization
import ShelfModel
import ShelfStore

/// The mount's in-memory map of live items: by path, by id and by folder.
///
/// `lookup`, `getattr` and `readdir` answer from here without touching SQLite, so listing a
/// folder of 100,000 items costs no query. It is filled once from `summaries()` and kept current
/// by this mount's own writes and by the change feed. The lock is held only for dictionary work,
/// never across a store call.
final class ItemIndex: Sendable {
    /// The items of one folder by name, and their names in listing order once asked for.
    private struct Folder {
        var idByName: [String: ItemID] = [:]
        /// Sorted by bytes (cheap, and stable: listing order only needs to be the same each
        /// time); dropped at every change of the folder, made again at the next listing.
        var listing: [(name: String, id: ItemID)]?
    }

    private struct State {
        var byID: [ItemID: ItemSummary] = [:]
        var idByPath: [MountPath: ItemID] = [:]
        var folders: [MountPath: Folder] = [:]
    }

    private let state = Mutex(State())

    init(_ summaries: [ItemSummary] = []) {
        state.withLock { state in
            for summary in summaries { Self.insert(summary, into: &state) }
        }
    }

    func summary(id: ItemID) -> ItemSummary? {
        state.withLock { $0.byID[id] }
    }

    func summary(at path: MountPath) -> ItemSummary? {
        state.withLock { state in state.idByPath[path].flatMap { state.byID[$0] } }
    }

    /// The item files directly in `folder`: names (in bytes order) and ids.
    func items(in folder: MountPath) -> [(name: String, id: ItemID)] {
        state.withLock { state in
            if let listing = state.folders[folder]?.listing { return listing }
            guard let items = state.folders[folder]?.idByName else { return [] }
            let listing = items.map { (name: $0.key, id: $0.value) }
                .sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
            state.folders[folder]?.listing = listing
            return listing
        }
    }

    /// The current summaries of `ids` (nil for an id no longer live), under one lock.
    func summaries(_ ids: [ItemID]) -> [ItemSummary?] {
        state.withLock { state in ids.map { state.byID[$0] } }
    }

    /// Whether any item lies in `folder` or below it.
    func hasItems(inside folder: MountPath) -> Bool {
        state.withLock { state in state.idByPath.keys.contains { $0.isInside(folder) } }
    }

    /// The items in `folder` or below it.
    func ids(inside folder: MountPath) -> [ItemID] {
        state.withLock { state in state.idByPath.compactMap { $0.key.isInside(folder) ? $0.value : nil } }
    }

    /// Every live item with a pending invalid save.
    func itemsWithDrafts() -> [ItemSummary] {
        state.withLock { $0.byID.values.filter(\.hasDraft).sorted { $0.path < $1.path } }
    }

    func counts() -> (books: Int, notes: Int) {
        state.withLock { state in
            let books = state.byID.values.count { $0.kind == .book }
            return (books, state.byID.count - books)
        }
    }

    /// Records `summary` as the item's current state; returns the state it replaces.
    @discardableResult
    func put(_ summary: ItemSummary) -> ItemSummary? {
        state.withLock { state in
            if let old = state.byID[summary.id], old.path == summary.path {
                state.byID[summary.id] = summary  // same name: the folder's listing stands
                return old
            }
            let old = Self.remove(summary.id, from: &state)
            Self.insert(summary, into: &state)
            return old
        }
    }

    /// Forgets a trashed or deleted item; returns its last known state.
    @discardableResult
    func remove(_ id: ItemID) -> ItemSummary? {
        state.withLock { state in Self.remove(id, from: &state) }
    }

    private static func insert(_ summary: ItemSummary, into state: inout State) {
        let path = MountPath(summary.path)
        state.byID[summary.id] = summary
        state.idByPath[path] = summary.id
        if state.folders[path.parent]?.idByName[path.name] != summary.id {
            state.folders[path.parent, default: Folder()].idByName[path.name] = summary.id
            state.folders[path.parent]?.listing = nil
        }
    }

    private static func remove(_ id: ItemID, from state: inout State) -> ItemSummary? {
        guard let old = state.byID.removeValue(forKey: id) else { return nil }
        let path = MountPath(old.path)
        if state.idByPath[path] == id {
            state.idByPath[path] = nil
            state.folders[path.parent]?.idByName[path.name] = nil
            state.folders[path.parent]?.listing = nil
        }
        return old
    }
}

extension ItemSummary {
    /// The listing form of a full record.
    init(_ record: ItemRecord) {
        let favorite: Bool
        if case .note(let note) = record.item { favorite = note.favorite } else { favorite = false }
        self.init(id: record.item.id, kind: record.item.kind, title: record.item.title, path: record.path,
                  version: record.version, modified: record.modified, size: record.content.utf8.count,
                  favorite: favorite, hasDraft: record.draftDiagnostics != nil)
    }
}
