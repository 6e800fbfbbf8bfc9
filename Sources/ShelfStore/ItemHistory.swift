import Foundation
import GRDB
import ShelfModel

/// The `item_history` table: the bytes each item's file showed before each change of them, so
/// a bad save — a crash mid-write replayed from the journal, a mistaken edit — never costs the
/// last good version. The newest `depth` versions per item are kept, so a session of many saves
/// does not grow the library without bound.
enum ItemHistory {
    static let depth = 32

    /// Keeps what the item showed at `version`, then drops versions beyond `depth`.
    static func keep(_ id: ItemID, version: Int64, modified: Date, content: Data, wasDraft: Bool,
                     in db: Database) throws {
        try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO item_history (item_id, version, modified, content, was_draft)
            VALUES (?, ?, ?, ?, ?)
            """).execute(arguments: [id.rawValue, version, modified.storedSeconds, content, wasDraft])
        try db.cachedStatement(sql: """
            DELETE FROM item_history WHERE item_id = ? AND version <= (
                SELECT version FROM item_history WHERE item_id = ? ORDER BY version DESC LIMIT 1 OFFSET ?)
            """).execute(arguments: [id.rawValue, id.rawValue, depth])
    }

    /// The kept versions of `id`, newest first.
    static func versions(of id: ItemID, in db: Database) throws -> [ItemVersion] {
        try Row.fetchAll(db, sql: """
            SELECT version, modified, length(content), was_draft FROM item_history
            WHERE item_id = ? ORDER BY version DESC
            """, arguments: [id.rawValue]).map { row in
            ItemVersion(version: row[0], modified: Date(storedSeconds: row[1]), size: row[2], wasDraft: row[3])
        }
    }

    static func content(of id: ItemID, version: Int64, in db: Database) throws -> Data? {
        try Data.fetchOne(db, sql: "SELECT content FROM item_history WHERE item_id = ? AND version = ?",
                          arguments: [id.rawValue, version])
    }

    /// Forgets the versions of items deleted for good.
    static func removeTrashed(in db: Database) throws {
        try db.execute(sql: """
            DELETE FROM item_history WHERE item_id IN (SELECT id FROM item WHERE trashed_at IS NOT NULL)
            """)
    }
}
