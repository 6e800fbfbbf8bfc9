import Foundation
import GRDB
import ShelfModel

/// The `change_feed` table: one row per change, numbered by an AUTOINCREMENT sequence that never
/// reuses a number, so another process can follow the feed by remembering the last sequence.
enum ChangeFeed {
    static func append(_ kind: Change.Kind, id: ItemID, path: String, previousPath: String? = nil,
                       in db: Database) throws {
        let statement = try db.cachedStatement(sql: """
            INSERT INTO change_feed (kind, item_id, path, previous_path, time) VALUES (?, ?, ?, ?, ?)
            """)
        try statement.execute(arguments: [kind.rawValue, id.rawValue, path, previousPath, Date().storedSeconds])
    }

    static func changes(after sequence: Int64, limit: Int, in db: Database) throws -> [Change] {
        try Row.fetchAll(db.cachedStatement(sql: """
            SELECT sequence, kind, item_id, path, previous_path, time FROM change_feed
            WHERE sequence > ? ORDER BY sequence LIMIT ?
            """), arguments: [sequence, limit]).map { change in
            typealias Columns = ChangeFeedColumns
            let id = ItemID(rawValue: change[Columns.itemID])
            let rawKind: String = change[Columns.kind]
            guard let kind = Change.Kind(rawValue: rawKind) else {
                throw StoreError.damagedRecord(id: id, reason: "unknown change kind \(rawKind)")
            }
            return Change(sequence: change[Columns.sequence], kind: kind, id: id, path: change[Columns.path],
                          previousPath: change[Columns.previousPath], time: (change[Columns.time] as Double?).map(Date.init(storedSeconds:)))
        }
    }

    static func lastSequence(in db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT MAX(sequence) FROM change_feed")) ?? 0
    }
}
