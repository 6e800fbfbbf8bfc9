import Foundation
import GRDB
import ShelfModel

/// The `item_history` table: the bytes each item's file showed before each change of them, so
/// a bad save — a crash mid-write replayed from the journal, a mistaken edit — never costs the
/// last good version. The newest `depth` versions per item are kept, so a session of many saves
/// does not grow the library without bound, and their bytes are shared in chunks
/// (``HistoryChunks``), so versions of a large file cost about what their differences do.
/// Rows kept before chunks (`chunks` NULL) hold their bytes in `content`.
enum ItemHistory {
    static let depth = 32
    private typealias Columns = ItemHistoryColumns

    /// Keeps what the item showed at `version`, then drops versions beyond `depth`.
    static func keep(_ id: ItemID, version: Int64, modified: Date, content: Data, wasDraft: Bool,
                     in db: Database) throws {
        try remove(where: "item_id = ? AND version = ?", [id.rawValue, version], in: db)
        let chunks = try HistoryChunks.store(content, in: db)
        try db.cachedStatement(sql: """
            INSERT INTO item_history (item_id, version, modified, content, was_draft, size, chunks)
            VALUES (?, ?, ?, x'', ?, ?, ?)
            """).execute(arguments: [id.rawValue, version, modified.storedSeconds, wasDraft, content.count, chunks])
        try remove(where: """
            item_id = ? AND version <= (
                SELECT version FROM item_history WHERE item_id = ? ORDER BY version DESC LIMIT 1 OFFSET ?)
            """, [id.rawValue, id.rawValue, depth], in: db)
        try db.cachedStatement(sql: """
            DELETE FROM item_origin WHERE item_id = ? AND version < (
                SELECT MIN(version) FROM item_history WHERE item_id = ?)
            """).execute(arguments: [id.rawValue, id.rawValue])
    }

    /// The oldest version of `id` whose bytes are kept; nil when none is.
    static func oldestKeptVersion(of id: ItemID, in db: Database) throws -> Int64? {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT MIN(version) FROM item_history WHERE item_id = ?"),
                           arguments: [id.rawValue])
    }

    /// The kept versions of `id`, newest first.
    static func versions(of id: ItemID, in db: Database) throws -> [ItemVersion] {
        try Row.fetchAll(db, sql: """
            SELECT h.version, h.modified, COALESCE(h.size, length(h.content)) AS size, h.was_draft, o.reason, o.device
            FROM item_history h LEFT JOIN item_origin o ON o.item_id = h.item_id AND o.version = h.version
            WHERE h.item_id = ? ORDER BY h.version DESC
            """, arguments: [id.rawValue]).map { kept in
            ItemVersion(version: kept[Columns.version], modified: Date(storedSeconds: kept[Columns.modified]),
                        size: kept[Columns.size], wasDraft: kept[Columns.wasDraft],
                        origin: origin(reason: kept[Columns.reason], device: kept[Columns.device]))
        }
    }

    /// How the current version of `id` came to be.
    static func currentOrigin(of id: ItemID, in db: Database) throws -> ChangeOrigin? {
        try Row.fetchOne(db, sql: """
            SELECT o.reason, o.device FROM item i JOIN item_origin o ON o.item_id = i.id AND o.version = i.version
            WHERE i.id = ?
            """, arguments: [id.rawValue]).flatMap { origin(reason: $0[Columns.reason], device: $0[Columns.device]) }
    }

    private static func origin(reason: String?, device: String?) -> ChangeOrigin? {
        reason.flatMap(ChangeOrigin.Reason.init(rawValue:)).map { ChangeOrigin($0, device: device) }
    }

    static func content(of id: ItemID, version: Int64, in db: Database) throws -> Data? {
        guard let kept = try Row.fetchOne(db, sql: "SELECT content, chunks FROM item_history WHERE item_id = ? AND version = ?",
                                          arguments: [id.rawValue, version]) else { return nil }
        let chunks: Data? = kept[Columns.chunks]
        return try chunks.map { try HistoryChunks.content(of: $0, in: db) } ?? kept[Columns.content]
    }

    /// Forgets the versions of items deleted for good.
    static func removeTrashed(in db: Database) throws {
        try remove(where: "item_id IN (SELECT id FROM item WHERE trashed_at IS NOT NULL)", [], in: db)
        try db.execute(sql: "DELETE FROM item_origin WHERE item_id IN (SELECT id FROM item WHERE trashed_at IS NOT NULL)")
    }

    /// Deletes the versions `condition` selects, with their uses of chunks.
    private static func remove(where condition: String, _ arguments: StatementArguments, in db: Database) throws {
        let chunks = try Data.fetchAll(db, sql: "SELECT chunks FROM item_history WHERE chunks IS NOT NULL AND \(condition)",
                                       arguments: arguments)
        for hashes in chunks { try HistoryChunks.release(hashes, in: db) }
        try db.execute(sql: "DELETE FROM item_history WHERE \(condition)", arguments: arguments)
    }
}
