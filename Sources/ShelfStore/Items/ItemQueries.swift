import Foundation
import GRDB
import GRDBSQLite
import ShelfModel

/// A row of the `item` table with the bookkeeping the public `ItemRecord` does not show.
struct StoredItem {
    /// The row's stable key, also the search index's rowid.
    var serial: Int64
    var record: ItemRecord
    /// Set while the item is in the trash.
    var trashedAt: Date?

    var isLive: Bool { trashedAt == nil }
}

/// What an update needs of a stored row: its bookkeeping columns and the record's encoded
/// bytes, with nothing decoded (an editor's save compares bytes, it need not read the record).
struct StoredRow {
    var serial: Int64
    var kind: String
    var version: Int64
    var path: String
    var modified: Date
    var encodedRecord: Data
    var content: Data
    var hasDraft: Bool
    var isLive: Bool
    var permissions: UInt32
}

extension StoredRow: FetchableRecord {
    init(row item: Row) {
        self.init(serial: item[ItemColumns.serial], kind: item[ItemColumns.kind], version: item[ItemColumns.version],
                  path: item[ItemColumns.path], modified: Date(storedSeconds: item[ItemColumns.modified]),
                  encodedRecord: item[ItemColumns.record], content: item[ItemColumns.content],
                  hasDraft: item[ItemColumns.hasDraft], isLive: item[ItemColumns.isLive], permissions: item[ItemColumns.permissions])
    }
}

/// An item's file as sync sees it (``ItemQueries/storedFile(id:)``): where it is, its bytes or,
/// for a placeholder, their hash and size in the cloud, and its file metadata.
public struct StoredFile {
    /// The item kind's raw value, as a change carries it.
    public var kind: String
    public var title: String
    public var path: String
    public var modified: Date
    public var permissions: UInt32
    public var isTrashed: Bool
    public var bytes: Bytes
    public var attributes: [String: Data]

    public enum Bytes {
        case here(Data)
        /// A placeholder's: the name and size of its bytes in the cloud.
        case inCloud(hash: String, size: Int)
    }
}

/// A live item's listing columns (``ItemQueries/summaryColumns``), read straight into its summary.
struct ItemSummaryRow: FetchableRecord {
    let summary: ItemSummary

    init(row item: Row) throws {
        let id = ItemID(rawValue: item[ItemColumns.id])
        summary = ItemSummary(id: id, kind: try ItemQueries.kind(item[ItemColumns.kind], of: id), title: item[ItemColumns.title],
                              path: item[ItemColumns.path], version: item[ItemColumns.version],
                              modified: Date(storedSeconds: item[ItemColumns.modified]), size: item[ItemColumns.size],
                              favorite: item[ItemColumns.favorite], hasDraft: item[ItemColumns.hasDraft],
                              permissions: item[ItemColumns.permissions], isPlaceholder: item[ItemColumns.isPlaceholder])
    }
}

/// Every read of the `item` table, shared by `LibraryStore` (in a read transaction) and
/// `StoreWriter` (inside its write transaction), so both see items the same way.
///
/// Public reads show live items only; a trashed item is reachable through `trashedItems()`,
/// `restore` and by inserting its id again.
struct ItemQueries {
    let db: Database
    private let coding = RecordCoding()

    init(db: Database) { self.db = db }

    private static let recordColumns =
        "serial, id, path, version, modified, record, content, draft_diagnostics, trashed_at, permissions"
    static let summaryColumns = """
        id, kind, title, path, version, modified, size, favorite, draft_diagnostics IS NOT NULL AS has_draft, permissions,
        EXISTS (SELECT 1 FROM item_download WHERE item_download.item_id = item.id) AS is_placeholder
        """

    /// Whether an item with `id` is stored, and where.
    enum Presence { case absent, live, trashed }

    /// One scalar lookup, cheaper than loading the row: inserts ask it for every new item.
    func presence(of id: ItemID) throws -> Presence {
        let statement = try db.cachedStatement(sql: "SELECT trashed_at IS NOT NULL FROM item WHERE id = ?")
        switch try Bool.fetchOne(statement, arguments: [id.rawValue]) {
        case nil: return .absent
        case false?: return .live
        case true?: return .trashed
        }
    }

    /// The item with `id`, live or trashed.
    func stored(id: ItemID) throws -> StoredItem? {
        let statement = try db.cachedStatement(sql: "SELECT \(Self.recordColumns) FROM item WHERE id = ?")
        return try Row.fetchOne(statement, arguments: [id.rawValue]).map(storedItem)
    }

    /// The item with `id`, live or trashed, undecoded.
    func storedRow(id: ItemID) throws -> StoredRow? {
        let statement = try db.cachedStatement(sql: """
            SELECT serial, kind, version, path, modified, record, content, draft_diagnostics IS NOT NULL AS has_draft,
                   trashed_at IS NULL AS is_live, permissions
            FROM item WHERE id = ?
            """)
        return try StoredRow.fetchOne(statement, arguments: [id.rawValue])
    }

    /// Item `id`'s file as stored, live or in the trash, read from its row's columns: sync
    /// compares files with changes for every item it meets, and need not decode a record for it.
    func storedFile(id: ItemID) throws -> StoredFile? {
        let statement = try db.cachedStatement(sql: """
            SELECT item.kind, item.title, item.path, item.modified, item.permissions, item.content, item.size,
                   item.trashed_at IS NULL AS is_live, item_download.hash
            FROM item LEFT JOIN item_download ON item_download.item_id = item.id WHERE item.id = ?
            """)
        guard let row = try Row.fetchOne(statement, arguments: [id.rawValue]) else { return nil }
        let placeholderHash: String? = row[ItemDownloadColumns.hash]
        return StoredFile(kind: row[ItemColumns.kind], title: row[ItemColumns.title], path: row[ItemColumns.path],
                          modified: Date(storedSeconds: row[ItemColumns.modified]), permissions: row[ItemColumns.permissions],
                          isTrashed: !row[ItemColumns.isLive],
                          bytes: placeholderHash.map { .inCloud(hash: $0, size: row[ItemColumns.size]) } ?? .here(row[ItemColumns.content]),
                          attributes: try extendedAttributes(id: id))
    }

    func extendedAttributes(id: ItemID) throws -> [String: Data] {
        let statement = try db.cachedStatement(sql: "SELECT name, value FROM item_attribute WHERE item_id = ?")
        return try Dictionary(uniqueKeysWithValues: Row.fetchAll(statement, arguments: [id.rawValue]).map { attribute in
            (attribute[ItemAttributeColumns.name] as String, attribute[ItemAttributeColumns.value] as Data)
        })
    }

    func liveRecord(id: ItemID) throws -> ItemRecord? {
        try stored(id: id).flatMap { $0.isLive ? $0.record : nil }
    }

    func liveRecord(atPath path: String) throws -> ItemRecord? {
        let statement = try db.cachedStatement(
            sql: "SELECT \(Self.recordColumns) FROM item WHERE path = ? AND trashed_at IS NULL")
        return try Row.fetchOne(statement, arguments: [path]).map(storedItem)?.record
    }

    /// Whether a live item has `path` (an index lookup).
    func isLivePath(_ path: String) throws -> Bool {
        let statement = try db.cachedStatement(sql: "SELECT 1 FROM item WHERE path = ? AND trashed_at IS NULL")
        return try Bool.fetchOne(statement, arguments: [path]) != nil
    }

    func liveBookID(sourceID: String) throws -> ItemID? {
        let statement = try db.cachedStatement(sql: """
            SELECT id FROM item WHERE source_id = ? AND kind = 'book' AND trashed_at IS NULL LIMIT 1
            """)
        return try String.fetchOne(statement, arguments: [sourceID]).map(ItemID.init(rawValue:))
    }

    func liveSummary(id: ItemID) throws -> ItemSummary? {
        let statement = try db.cachedStatement(
            sql: "SELECT \(Self.summaryColumns) FROM item WHERE id = ? AND trashed_at IS NULL")
        return try ItemSummaryRow.fetchOne(statement, arguments: [id.rawValue])?.summary
    }

    /// Live items ordered by path, straight from the columns: no record or content is decoded.
    /// A kind is its top folder, so filtering by kind is a range of the path index.
    func liveSummaries(kind: ItemKind?) throws -> [ItemSummary] {
        var sql = "SELECT \(Self.summaryColumns) FROM item WHERE trashed_at IS NULL"
        var arguments: StatementArguments = []
        if let kind {
            sql += " AND path >= ? AND path < ?"
            arguments += Self.pathRange(under: kind.folderName)
        }
        sql += " ORDER BY path"
        let rows = try ItemSummaryRow.fetchCursor(db, sql: sql, arguments: arguments)
        var summaries: [ItemSummary] = []
        while let row = try rows.next() {
            summaries.append(row.summary)
        }
        return summaries
    }

    /// An item's file bytes and their version, without decoding its record; for an item in the
    /// trash, the bytes it showed when it was deleted.
    func file(id: ItemID) throws -> (version: Int64, content: Data)? {
        let statement = try db.cachedStatement(sql: "SELECT version, content FROM item WHERE id = ?")
        return try Row.fetchOne(statement, arguments: [id.rawValue]).map { file in
            (file[ItemColumns.version], file[ItemColumns.content])
        }
    }

    /// Up to `count` bytes of item `id`'s file at `offset`, with its version and whole size,
    /// read from the row without loading the rest of its bytes (SQLite's incremental blob
    /// reads): reading a file request by request costs its size, not its size squared.
    func fileRange(id: ItemID, offset: Int, count: Int) throws -> (version: Int64, size: Int, bytes: Data)? {
        let statement = try db.cachedStatement(sql: "SELECT serial, version, length(content) AS content_length FROM item WHERE id = ?")
        guard let file = try Row.fetchOne(statement, arguments: [id.rawValue]) else { return nil }
        let (serial, version, size): (Int64, Int64, Int) =
            (file[ItemColumns.serial], file[ItemColumns.version], file[ItemColumns.contentLength])
        let wanted = max(0, min(count, size - offset))
        guard wanted > 0 else { return (version, size, Data()) }
        var blob: OpaquePointer?
        var code = sqlite3_blob_open(db.sqliteConnection, "main", "item", "content", serial, 0, &blob)
        defer { sqlite3_blob_close(blob) }
        var bytes = Data(count: wanted)
        if code == SQLITE_OK {
            code = bytes.withUnsafeMutableBytes { sqlite3_blob_read(blob, $0.baseAddress, Int32(wanted), Int32(offset)) }
        }
        guard code == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: code)) }
        return (version, size, bytes)
    }

    /// The bytes item `id`'s file showed at `version`: an earlier version from the history, or
    /// the current one; nil if that version is no longer kept.
    func file(id: ItemID, version: Int64) throws -> Data? {
        if let current = try file(id: id), current.version == version { return current.content }
        return try ItemHistory.content(of: id, version: version, in: db)
    }

    /// Calls `body` with the path and file bytes of every live item, in path order, from one
    /// cursor: what an export needs, without decoding a single record.
    func forEachLiveFile(_ body: (_ path: String, _ content: Data) throws -> Void) throws {
        let files = try Row.fetchCursor(db, sql: "SELECT path, content FROM item WHERE trashed_at IS NULL ORDER BY path")
        while let file = try files.next() {
            try body(file[ItemColumns.path], file[ItemColumns.content])
        }
    }

    /// Trashed items, most recently trashed first.
    func trashed() throws -> [TrashedItem] {
        try Row.fetchAll(db, sql: """
            SELECT id, kind, title, path, trashed_at, trash_reason FROM item
            WHERE trashed_at IS NOT NULL ORDER BY trashed_at DESC, path
            """).map { trashed in
            let id = ItemID(rawValue: trashed[ItemColumns.id])
            return TrashedItem(id: id, kind: try Self.kind(trashed[ItemColumns.kind], of: id), title: trashed[ItemColumns.title],
                               originalPath: trashed[ItemColumns.path], trashedAt: Date(storedSeconds: trashed[ItemColumns.trashedAt]),
                               reason: trashed[ItemColumns.trashReason])
        }
    }

    /// Live items whose path lies under `folder/`, as `(serial, id, path)` (an index range scan).
    func liveItems(under folder: String) throws -> [(serial: Int64, id: ItemID, path: String)] {
        try Row.fetchAll(db, sql: """
            SELECT serial, id, path FROM item
            WHERE path >= ? AND path < ? AND trashed_at IS NULL ORDER BY path
            """, arguments: Self.pathRange(under: folder)).map { item in
            (serial: item[ItemColumns.serial], id: ItemID(rawValue: item[ItemColumns.id]), path: item[ItemColumns.path])
        }
    }

    /// Bounds of every path under `folder/`: from `folder/` up to `folder0` ('0' follows '/').
    private static func pathRange(under folder: String) -> StatementArguments {
        [folder + "/", folder + "0"]
    }

    private func storedItem(_ item: Row) throws -> StoredItem {
        let id = ItemID(rawValue: item[ItemColumns.id])
        let diagnostics: Data? = item[ItemColumns.draftDiagnostics]
        let record = ItemRecord(
            item: try coding.decodeItem(item[ItemColumns.record], id: id),
            version: item[ItemColumns.version],
            path: item[ItemColumns.path],
            modified: Date(storedSeconds: item[ItemColumns.modified]),
            content: item[ItemColumns.content],
            draftDiagnostics: try diagnostics.map { try coding.decodeDiagnostics($0, id: id) },
            permissions: item[ItemColumns.permissions])
        let trashedAt: Double? = item[ItemColumns.trashedAt]
        return StoredItem(serial: item[ItemColumns.serial], record: record, trashedAt: trashedAt.map(Date.init(storedSeconds:)))
    }

    /// The kind stored as `rawValue`; `damagedRecord` for one this Shelf does not know.
    static func kind(_ rawValue: String, of id: ItemID) throws -> ItemKind {
        guard let kind = ItemKind(rawValue: rawValue) else {
            throw StoreError.damagedRecord(id: id, reason: "unknown item kind \(rawValue)")
        }
        return kind
    }
}
