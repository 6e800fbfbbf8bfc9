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
    private struct State {
        var byID: [ItemID: ItemSummary] = [:]
        var idByPath: [MountPath: ItemID] = [:]
        var namesByFolder: [MountPath: Set<String>] = [:]
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

    /// Names of the item files directly in `folder`, sorted.
    func itemNames(in folder: MountPath) -> [String] {
        state.withLock { ($0.namesByFolder[folder] ?? []).sorted() }
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
        state.namesByFolder[path.parent, default: []].insert(path.name)
    }

    private static func remove(_ id: ItemID, from state: inout State) -> ItemSummary? {
        guard let old = state.byID.removeValue(forKey: id) else { return nil }
        let path = MountPath(old.path)
        if state.idByPath[path] == id {
            state.idByPath[path] = nil
            state.namesByFolder[path.parent]?.remove(path.name)
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
