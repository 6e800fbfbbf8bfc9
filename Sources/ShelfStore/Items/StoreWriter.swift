import Foundation
import GRDB
import ShelfModel
import ShelfMarkdown

/// The writes of one transaction. Every write bumps the item's version, sets its modification
/// time and appends to the change feed; a write that changes nothing does neither.
///
/// The version counts changes of what the file shows (record, content, draft). Renames, trash
/// and restore change where the file is, not its bytes, so they keep the version: an editor
/// that renamed the file away and writes it back saves against the version it opened.
///
/// Each write checks everything it needs (paths, versions, ids) before it changes anything, so
/// a refused write leaves the library as it was even when the caller catches the error and
/// goes on inside the same transaction (imports do, row by row).
///
/// A writer is valid only inside the `LibraryStore.write` call that handed it out.
public struct StoreWriter {
    let db: Database
    let queries: ItemQueries
    let coding = RecordCoding()
    private let context: Context

    /// What the writes of one transaction record as the origin of the versions they make, and
    /// whether they keep the versions they replace.
    private final class Context {
        var origin: ChangeOrigin
        var keepsHistory = true
        init(origin: ChangeOrigin) { self.origin = origin }
    }

    init(db: Database, origin: ChangeOrigin = .edit) {
        self.db = db
        self.queries = ItemQueries(db: db)
        context = Context(origin: origin)
    }

    /// Runs `body` with `origin` recorded for the versions its writes make (a merge, a conflict
    /// copy inside a sync transaction), then goes back to the transaction's own.
    public func with<T>(_ origin: ChangeOrigin, _ body: () throws -> T) rethrows -> T {
        let outer = context.origin
        context.origin = origin
        defer { context.origin = outer }
        return try body()
    }

    /// Runs `body` without keeping the versions its writes replace: a placeholder filled with
    /// its bytes replaces nothing anyone saw.
    func withoutHistory<T>(_ body: () throws -> T) rethrows -> T {
        context.keepsHistory = false
        defer { context.keepsHistory = true }
        return try body()
    }

    /// Records how `version` of item `id` came to be (the transaction's current origin).
    func noteOrigin(of id: ItemID, version: Int64) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO item_origin (item_id, version, reason, device) VALUES (?, ?, ?, ?)")
            .execute(arguments: [id.rawValue, version, context.origin.reason.rawValue, context.origin.device])
    }

    public func record(id: ItemID) throws -> ItemRecord? { try queries.liveRecord(id: id) }
    public func record(atPath path: String) throws -> ItemRecord? { try queries.liveRecord(atPath: path) }
    /// How the current version of item `id` came to be (nil when no origin was recorded).
    public func currentOrigin(of id: ItemID) throws -> ChangeOrigin? { try ItemHistory.currentOrigin(of: id, in: db) }
    /// An item's file bytes and their version (see `LibraryStore.file(id:)`), without decoding.
    public func file(id: ItemID) throws -> (version: Int64, content: Data)? { try queries.file(id: id) }
    /// Item `id`'s file as sync compares it (``StoredFile``), live or in the trash, undecoded.
    public func storedFile(id: ItemID) throws -> StoredFile? { try queries.storedFile(id: id) }
    /// Whether item `id` is stored, live or in the trash (one scalar lookup).
    public func isStored(id: ItemID) throws -> Bool { try queries.presence(of: id) != .absent }
    /// The bytes item `id`'s file showed at `version`; nil if that version is no longer kept.
    public func file(id: ItemID, version: Int64) throws -> Data? { try queries.file(id: id, version: version) }
    /// The oldest version of item `id` whose bytes the history keeps (older ones were dropped).
    public func oldestKeptVersion(of id: ItemID) throws -> Int64? { try ItemHistory.oldestKeptVersion(of: id, in: db) }
    /// The live book imported from `sourceID`, if any.
    public func bookID(sourceID: String) throws -> ItemID? { try queries.liveBookID(sourceID: sourceID) }

    /// Adds an item. `path` nil: `<Kind folder>/<FileNaming name>.md`, uniquified. `source`:
    /// the bytes the file shows (they parse to `item`, whatever `id:` they declare); nil: the
    /// canonical render. An id that is
    /// in the trash brings that item back (its history kept) with this content.
    ///
    /// `modified`: when the text was written (a save through the mount keeps the time the
    /// editor saw). Throws `itemExists` when a live item has the id, `pathTaken` /
    /// `invalidPath` for `path`.
    public func insert(_ item: Item, path: String?, source: Data?, modified: Date = Date()) throws -> ItemRecord {
        let presence = try queries.presence(of: item.id)
        if presence == .live, let live = try queries.liveRecord(id: item.id) {
            throw StoreError.itemExists(id: item.id, path: live.path)
        }
        let path = try path.map { try claimablePath($0, for: item.kind) } ?? defaultPath(for: item)
        let content = source ?? Data(MarkdownCodec.render(item).utf8)
        let record: ItemRecord
        if presence == .trashed, let trashed = try queries.stored(id: item.id) {
            try keepInHistory(trashed.record)
            record = try replace(serial: trashed.serial, version: trashed.record.version, with: item,
                                 encoded: try coding.encode(item), content: content, path: path, modified: modified,
                                 permissions: trashed.record.permissions)
        } else {
            record = ItemRecord(item: item, version: 1, path: path, modified: modified, content: content,
                                draftDiagnostics: nil)
            try insertRow(record)
        }
        try ChangeFeed.append(.added, id: item.id, path: path, in: db)
        return record
    }

    /// Replaces the record (never its path) and clears a pending draft. `basedOn`: the version
    /// the writer started from; a different stored version throws `versionConflict`.
    /// `source`: the bytes the file shows from now on (they parse to `item`). nil keeps the
    /// shown bytes while the record is unchanged (byte-stable saves) and renders the record
    /// canonically otherwise. `modified`: as for ``insert(_:path:source:modified:)``.
    public func update(_ item: Item, basedOn version: Int64?, source: Data?,
                       modified: Date = Date()) throws -> ItemRecord {
        guard let stored = try queries.storedRow(id: item.id), stored.isLive else { throw StoreError.itemNotFound(item.id) }
        if let version, version != stored.version {
            throw StoreError.versionConflict(id: item.id, expected: version, actual: stored.version)
        }
        guard item.kind.rawValue == stored.kind else {
            throw StoreError.kindMismatch(id: item.id, stored: ItemKind(rawValue: stored.kind) ?? item.kind, given: item.kind)
        }
        let unchanged = ItemRecord(item: item, version: stored.version, path: stored.path, modified: stored.modified,
                                   content: stored.content, draftDiagnostics: nil, permissions: stored.permissions)
        let content: Data
        if let source {
            // The record is what its bytes parse to: the same bytes (with no draft pending, whose
            // bytes are not the record's) are the same record. An editor's save is never decoded.
            if source == stored.content && !stored.hasDraft { return unchanged }
            content = source
        } else {
            // While a draft is pending the stored content is the draft, which a valid save replaces.
            let keepsShownText = try item == coding.decodeItem(stored.encodedRecord, id: item.id) && !stored.hasDraft
            if keepsShownText { return unchanged }
            content = Data(MarkdownCodec.render(item).utf8)
        }
        if context.keepsHistory {
            try ItemHistory.keep(item.id, version: stored.version, modified: stored.modified, content: stored.content,
                                 wasDraft: stored.hasDraft, in: db)
        }
        let record = try replace(serial: stored.serial, version: stored.version, with: item, encoded: try coding.encode(item),
                                 content: content, path: stored.path, modified: modified, permissions: stored.permissions)
        try ChangeFeed.append(.updated, id: item.id, path: record.path, in: db)
        return record
    }

    /// Keeps an invalid save verbatim as what the file shows; the record stays as it was.
    public func saveDraft(id: ItemID, bytes: Data, diagnostics: [Diagnostic], modified: Date = Date()) throws -> ItemRecord {
        let stored = try liveItem(id)
        var record = stored.record
        if bytes == record.content && diagnostics == record.draftDiagnostics { return record }
        try keepInHistory(record)
        record.content = bytes
        record.draftDiagnostics = diagnostics
        record.version += 1
        record.modified = modified
        try db.cachedStatement(sql: """
            UPDATE item SET content = ?, size = ?, draft_diagnostics = ?, version = ?, modified = ?
            WHERE serial = ?
            """).execute(arguments: [bytes, bytes.count, try coding.encode(diagnostics), record.version,
                                     record.modified.storedSeconds, stored.serial])
        try noteOrigin(of: id, version: record.version)
        try ChangeFeed.append(.updated, id: id, path: record.path, in: db)
        return record
    }

    /// Sets the file's modification time and permission bits (`utimensat`, `chmod`: nil leaves
    /// one as it is). What the file shows does not change, so neither does the version.
    public func setFileTimes(id: ItemID, modified: Date?, permissions: UInt32?) throws -> ItemRecord {
        try setFileTimes(of: try liveItem(id).record, modified: modified, permissions: permissions)
    }

    /// ``setFileTimes(id:modified:permissions:)`` for the item as `record` (just written in
    /// this transaction) shows it, without reading and decoding it again.
    public func setFileTimes(of record: ItemRecord, modified: Date?, permissions: UInt32?) throws -> ItemRecord {
        var record = record
        let id = record.item.id
        let modified = modified ?? record.modified
        // Permission bits only: setuid, setgid and sticky mean nothing on a Markdown file, and
        // a cloud refuses them.
        let permissions = (permissions ?? record.permissions) & 0o777
        guard modified != record.modified || permissions != record.permissions else { return record }
        record.modified = modified
        record.permissions = permissions
        try db.cachedStatement(sql: "UPDATE item SET modified = ?, permissions = ? WHERE id = ?")
            .execute(arguments: [modified.storedSeconds, permissions, id.rawValue])
        try ChangeFeed.append(.updated, id: id, path: record.path, in: db)
        return record
    }

    /// The extended attributes the user set on the item's file (`user.*`), by name.
    public func extendedAttributes(id: ItemID) throws -> [String: Data] { try queries.extendedAttributes(id: id) }

    /// Sets (or with nil removes) one extended attribute of the item's file.
    public func setExtendedAttribute(id: ItemID, name: String, value: Data?) throws {
        let record = try liveItem(id).record
        if let value {
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO item_attribute (item_id, name, value) VALUES (?, ?, ?)")
                .execute(arguments: [id.rawValue, name, value])
        } else {
            try db.cachedStatement(sql: "DELETE FROM item_attribute WHERE item_id = ? AND name = ?")
                .execute(arguments: [id.rawValue, name])
        }
        guard db.changesCount > 0 else { return }
        try ChangeFeed.append(.updated, id: id, path: record.path, in: db)
    }

    /// Makes `attributes` the item's whole set of extended attributes (a file renamed over it
    /// brings its own, as on any filesystem).
    public func replaceExtendedAttributes(id: ItemID, with attributes: [String: Data]) throws {
        let current = try extendedAttributes(id: id)
        for name in current.keys where attributes[name] == nil {
            try setExtendedAttribute(id: id, name: name, value: nil)
        }
        for (name, value) in attributes where current[name] != value {
            try setExtendedAttribute(id: id, name: name, value: value)
        }
    }

    /// Renames one item file (`pathTaken` if another live item has `path`). Only the path
    /// changes; see the type's notes on versions.
    public func move(id: ItemID, to path: String) throws -> ItemRecord {
        var record = try liveItem(id).record
        guard path != record.path else { return record }
        let previousPath = record.path
        record.path = try claimablePath(path, for: record.item.kind)
        try setPath(path, ofItem: id)
        try ChangeFeed.append(.updated, id: id, path: path, previousPath: previousPath, in: db)
        return record
    }

    /// Renames a folder: every item whose path starts with `from/` moves under `to/`.
    /// `pathTaken` (and nothing moved) if any new path is taken by another live item.
    public func moveFolder(from: String, to: String) throws {
        let kind = try ItemPath.validateFolderMove(from: from, to: to)
        let moves = try queries.liveItems(under: from).map { item in
            (id: item.id, from: item.path, to: to + item.path.dropFirst(from.count))
        }
        // The folders do not nest (checked above), so no new path is the old path of an item
        // that moves too: a taken path belongs to an item that stays.
        for move in moves {
            _ = try claimablePath(move.to, for: kind)
        }
        for move in moves {
            try setPath(move.to, ofItem: move.id)
            try ChangeFeed.append(.updated, id: move.id, path: move.to, previousPath: move.from, in: db)
        }
    }

    /// Soft delete: the item leaves every listing, keeps its path for `restore`. `reason`: why,
    /// when Shelf and not a person trashes it (`shelf trash list` shows it).
    public func trash(id: ItemID, reason: String? = nil) throws {
        let record = try liveItem(id).record
        try db.cachedStatement(sql: "UPDATE item SET trashed_at = ?, trash_reason = ? WHERE id = ?")
            .execute(arguments: [Date().storedSeconds, reason, id.rawValue])
        try ChangeFeed.append(.removed, id: id, path: record.path, in: db)
    }

    /// Brings an item back at its old path (uniquified if taken since), or at the path its
    /// title gives when the old one is not valid (an item a repair trashed). Restoring an item
    /// that is not in the trash returns it as it is.
    public func restore(id: ItemID) throws -> ItemRecord {
        guard let stored = try queries.stored(id: id) else { throw StoreError.itemNotFound(id) }
        guard !stored.isLive else { return stored.record }
        var record = stored.record
        let isValid = (try? ItemPath.validate(record.path, for: record.item.kind)) != nil
        record.path = try isValid ? uniquified(record.path) : defaultPath(for: record.item)
        try db.cachedStatement(sql: "UPDATE item SET trashed_at = NULL, trash_reason = NULL, path = ? WHERE serial = ?")
            .execute(arguments: [record.path, stored.serial])
        try ChangeFeed.append(.added, id: id, path: record.path, in: db)
        return record
    }

    /// Deletes trashed items for good; returns how many.
    public func emptyTrash() throws -> Int {
        try SearchIndex.removeTrashed(in: db)
        try ItemHistory.removeTrashed(in: db)
        try db.execute(sql: """
            DELETE FROM item_attribute WHERE item_id IN (SELECT id FROM item WHERE trashed_at IS NOT NULL)
            """)
        try db.execute(sql: "DELETE FROM item WHERE trashed_at IS NOT NULL")
        return db.changesCount
    }

    // MARK: Building blocks

    private func liveItem(_ id: ItemID) throws -> StoredItem {
        guard let stored = try queries.stored(id: id), stored.isLive else { throw StoreError.itemNotFound(id) }
        return stored
    }

    /// `path`, checked to be a valid place for a `kind` item that no live item holds.
    private func claimablePath(_ path: String, for kind: ItemKind) throws -> String {
        try ItemPath.validate(path, for: kind)
        guard try !queries.isLivePath(path) else { throw StoreError.pathTaken(path) }
        return path
    }

    /// `<Kind folder>/<file name from the title>`, with a ` (2)`-style suffix if taken.
    private func defaultPath(for item: Item) throws -> String {
        let path = try uniquified(FileNaming.fileName(for: item), in: item.kind.folderName)
        try ItemPath.validate(path, for: item.kind)
        return path
    }

    /// `path`, or the first free ` (n)` variant of its file name in the same folder.
    func uniquified(_ path: String) throws -> String {
        try uniquified(String(ItemPath.fileName(of: path)), in: ItemPath.folder(of: path))
    }

    /// `folder/name`, or the first free ` (n)` variant; each candidate is one index lookup.
    private func uniquified(_ name: String, in folder: some StringProtocol) throws -> String {
        var lookupError: Error?
        let free = FileNaming.uniqued(name) { candidate in
            do {
                return try queries.isLivePath(folder + "/" + candidate)
            } catch {
                lookupError = error
                return false
            }
        }
        if let lookupError { throw lookupError }
        return folder + "/" + free
    }

    func keepInHistory(_ record: ItemRecord) throws {
        guard context.keepsHistory else { return }
        try ItemHistory.keep(record.item.id, version: record.version, modified: record.modified,
                             content: record.content, wasDraft: record.draftDiagnostics != nil, in: db)
    }

    /// Adds the row of a new item. `size`: what `stat` shows, where that is not the content's
    /// size (a placeholder's bytes are in the cloud).
    func insertRow(_ record: ItemRecord, size: Int? = nil) throws {
        let item = record.item
        try db.cachedStatement(sql: """
            INSERT INTO item (id, kind, title, path, version, modified, record, content, size,
                              draft_diagnostics, favorite, source_id, trashed_at, permissions)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, NULL, ?)
            """).execute(arguments: [
                item.id.rawValue, item.kind.rawValue, item.title, record.path, record.version,
                record.modified.storedSeconds, try coding.encode(item), record.content,
                size ?? record.content.count, item.isFavorite, item.sourceID, record.permissions,
            ])
        try SearchIndex.add(item, serial: db.lastInsertedRowID, in: db)
        try noteOrigin(of: item.id, version: record.version)
    }

    /// Writes a new record (`encoded`) and content over the row `serial` (live, or trashed and
    /// now revived) at `path`, with the version after `version` and no draft; the file's mode
    /// bits (`permissions`) stay.
    private func replace(serial: Int64, version: Int64, with item: Item, encoded: Data, content: Data,
                         path: String, modified: Date, permissions: UInt32) throws -> ItemRecord {
        let record = ItemRecord(item: item, version: version + 1, path: path, modified: modified,
                                content: content, draftDiagnostics: nil, permissions: permissions)
        try db.cachedStatement(sql: """
            UPDATE item SET kind = ?, title = ?, path = ?, version = ?, modified = ?, record = ?,
                            content = ?, size = ?, draft_diagnostics = NULL, favorite = ?,
                            source_id = ?, trashed_at = NULL, trash_reason = NULL
            WHERE serial = ?
            """).execute(arguments: [
                item.kind.rawValue, item.title, path, record.version, record.modified.storedSeconds,
                encoded, content, content.count, item.isFavorite, item.sourceID, serial,
            ])
        try SearchIndex.reindex(item, serial: serial, in: db)
        try noteOrigin(of: item.id, version: record.version)
        return record
    }

    private func setPath(_ path: String, ofItem id: ItemID) throws {
        try db.cachedStatement(sql: "UPDATE item SET path = ? WHERE id = ?").execute(arguments: [path, id.rawValue])
    }
}

extension Item {
    /// The `favorite` column: notes can be favorites, books cannot (yet).
    fileprivate var isFavorite: Bool {
        if case .note(let note) = self { note.favorite } else { false }
    }

    /// The `source_id` column, for finding a book again on re-import.
    fileprivate var sourceID: String? {
        if case .book(let book) = self { book.sourceID } else { nil }
    }
}
