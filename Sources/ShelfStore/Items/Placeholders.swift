import Foundation
import GRDB
import ShelfModel

/// An item known from the cloud whose bytes are not on this device yet: listed under its real
/// name with its true size, downloaded when first read.
public struct Placeholder: Hashable, Sendable {
    public var id: ItemID
    public var kind: ItemKind
    public var path: String
    public var title: String
    /// The size of the bytes in the cloud, which `stat` shows.
    public var size: Int
    /// The name of the bytes in the cloud.
    public var hash: String
    public var modified: Date
    public var permissions: UInt32

    public init(id: ItemID, kind: ItemKind, path: String, title: String, size: Int, hash: String, modified: Date,
                permissions: UInt32) {
        self.id = id
        self.kind = kind
        self.path = path
        self.title = title
        self.size = size
        self.hash = hash
        self.modified = modified
        self.permissions = permissions
    }
}

/// Where an item's bytes are: on this device, or in the cloud (with why the last download
/// failed, if it did).
public struct DownloadState: Hashable, Sendable {
    public var hash: String
    public var error: String?

    static func isPinned(_ id: ItemID, in db: Database) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM item_pin WHERE item_id = ?"), arguments: [id.rawValue]) != nil
    }

    static func of(_ id: ItemID, in db: Database) throws -> DownloadState? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT hash, error FROM item_download WHERE item_id = ?"),
                         arguments: [id.rawValue]).map { DownloadState(hash: $0[ItemDownloadColumns.hash], error: $0[ItemDownloadColumns.error]) }
    }
}

/// Placeholders in a transaction: items whose bytes are still in the cloud, their download
/// state and pins. A transaction reaches them as `writer.placeholders`.
public struct PlaceholderWriter {
    let writer: StoreWriter

    /// Makes item `id` a placeholder at `placeholder.path` (which the caller has checked is
    /// free): its record is a stand-in with the title until the bytes arrive, its file shows
    /// nothing yet but `stat` the true size. Bytes it had are kept in its history unless
    /// `evicting` (they are the cloud's, and the point is to free their room).
    @discardableResult
    public func savePlaceholder(_ placeholder: Placeholder, evicting: Bool = false) throws -> ItemRecord {
        try ItemPath.validate(placeholder.path, for: placeholder.kind)
        var stand: Item = placeholder.kind == .book ? .book(Book(title: placeholder.title))
                                                    : .note(Note(title: placeholder.title))
        stand.id = placeholder.id
        let wasLive: Bool
        let record: ItemRecord
        if let stored = try writer.queries.stored(id: placeholder.id) {
            wasLive = stored.isLive
            if try !evicting && downloadState(of: placeholder.id) == nil { try writer.keepInHistory(stored.record) }
            record = ItemRecord(item: stand, version: stored.record.version + 1, path: placeholder.path,
                                modified: placeholder.modified, content: Data(), draftDiagnostics: nil,
                                permissions: placeholder.permissions)
            try writer.db.cachedStatement(sql: """
                UPDATE item SET kind = ?, title = ?, path = ?, version = ?, modified = ?, record = ?,
                                content = X'', size = ?, draft_diagnostics = NULL, favorite = 0, source_id = NULL,
                                trashed_at = NULL, trash_reason = NULL, permissions = ?
                WHERE serial = ?
                """).execute(arguments: [
                    placeholder.kind.rawValue, placeholder.title, placeholder.path, record.version,
                    placeholder.modified.storedSeconds, try writer.coding.encode(stand), placeholder.size,
                    placeholder.permissions, stored.serial,
                ])
            try SearchIndex.reindex(stand, serial: stored.serial, in: writer.db)
            try writer.noteOrigin(of: placeholder.id, version: record.version)
        } else {
            wasLive = false
            record = ItemRecord(item: stand, version: 1, path: placeholder.path, modified: placeholder.modified,
                                content: Data(), draftDiagnostics: nil, permissions: placeholder.permissions)
            try writer.insertRow(record, size: placeholder.size)
        }
        try writer.db.cachedStatement(sql: "INSERT OR REPLACE INTO item_download (item_id, hash, error) VALUES (?, ?, NULL)")
            .execute(arguments: [placeholder.id.rawValue, placeholder.hash])
        try ChangeFeed.append(wasLive ? .updated : .added, id: placeholder.id, path: placeholder.path, in: writer.db)
        return record
    }

    /// Puts the downloaded `bytes` of placeholder `id` in place: the file then shows them
    /// (parsed into the record, or as a draft), with the times it had. The placeholder leaves
    /// no trace in the history.
    @discardableResult
    public func fillPlaceholder(_ id: ItemID, with bytes: Data) throws -> ItemRecord {
        guard try downloadState(of: id) != nil, let stored = try writer.queries.storedRow(id: id), stored.isLive,
              let kind = ItemKind(rawValue: stored.kind) else { throw StoreError.itemNotFound(id) }
        return try writer.withoutHistory {
            try writer.saveFile(bytes, of: id, kind: kind, at: stored.path, basedOn: nil, modified: stored.modified)
        }
    }

    /// Where item `id`'s bytes are: nil when they are on this device.
    public func downloadState(of id: ItemID) throws -> DownloadState? { try DownloadState.of(id, in: writer.db) }

    /// Records why downloading item `id` failed (nil: clears it).
    public func setDownloadError(_ error: String?, of id: ItemID) throws {
        try writer.db.cachedStatement(sql: "UPDATE item_download SET error = ? WHERE item_id = ?")
            .execute(arguments: [error, id.rawValue])
    }

    public func setPinned(_ pinned: Bool, _ id: ItemID) throws {
        try writer.db.cachedStatement(sql: pinned ? "INSERT OR IGNORE INTO item_pin (item_id) VALUES (?)"
                                           : "DELETE FROM item_pin WHERE item_id = ?").execute(arguments: [id.rawValue])
    }

    public func isPinned(_ id: ItemID) throws -> Bool { try DownloadState.isPinned(id, in: writer.db) }
}

extension StoreWriter {
    public var placeholders: PlaceholderWriter { PlaceholderWriter(writer: self) }
}

extension LibraryStore {
    /// Where item `id`'s bytes are: nil when they are on this device.
    public func downloadState(of id: ItemID) throws -> DownloadState? {
        try readDatabase { try DownloadState.of(id, in: $0) }
    }

    public func isPinned(_ id: ItemID) throws -> Bool {
        try readDatabase { try DownloadState.isPinned(id, in: $0) }
    }

    /// Live items whose bytes are here and that are not pinned: what a cache budget may evict,
    /// with their sizes and times.
    public func evictableItems() throws -> [(id: ItemID, size: Int, modified: Date)] {
        try readDatabase { db in
            try Row.fetchAll(db, sql: """
                SELECT id, size, modified FROM item
                WHERE trashed_at IS NULL
                  AND id NOT IN (SELECT item_id FROM item_download) AND id NOT IN (SELECT item_id FROM item_pin)
                """).map {
                    (ItemID(rawValue: $0[ItemColumns.id]), $0[ItemColumns.size], Date(storedSeconds: $0[ItemColumns.modified]))
                }
        }
    }

    /// Bytes of live items held on this device (placeholders hold none).
    public func downloadedBytes() throws -> Int {
        try readDatabase { db in
            try Int.fetchOne(db, sql: """
                SELECT COALESCE(SUM(size), 0) FROM item
                WHERE trashed_at IS NULL AND id NOT IN (SELECT item_id FROM item_download)
                """) ?? 0
        }
    }

    /// Every placeholder's id.
    public func placeholderIDs() throws -> [ItemID] {
        try readDatabase { db in
            try String.fetchAll(db, sql: """
                SELECT item_download.item_id FROM item_download JOIN item ON item.id = item_download.item_id
                WHERE item.trashed_at IS NULL
                """).map(ItemID.init(rawValue:))
        }
    }
}
