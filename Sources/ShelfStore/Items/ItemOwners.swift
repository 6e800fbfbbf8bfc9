import GRDB
import ShelfModel

/// The owner of an item's file where it is not the mount's: set by `chown` through the mount,
/// or by the user who created the file through a mount others may use (`--allow-other`).
public struct FileOwner: Hashable, Sendable {
    public var uid: UInt32
    public var gid: UInt32

    public init(uid: UInt32, gid: UInt32) {
        self.uid = uid
        self.gid = gid
    }
}

// A user id means something on one machine only: owners stay in this library and never sync,
// and an item without a row belongs to whoever runs the mount.
extension StoreWriter {
    /// Sets the owner of live item `id`'s file; nil gives it back to the mount's owner.
    /// No change-feed entry: the mount that sets it shows it, and nothing else reads it.
    public func setOwner(_ owner: FileOwner?, of id: ItemID) throws {
        guard try queries.presence(of: id) == .live else { throw StoreError.itemNotFound(id) }
        if let owner {
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO item_owner (item_id, uid, gid) VALUES (?, ?, ?)")
                .execute(arguments: [id.rawValue, owner.uid, owner.gid])
        } else {
            try db.cachedStatement(sql: "DELETE FROM item_owner WHERE item_id = ?").execute(arguments: [id.rawValue])
        }
    }
}

extension LibraryStore {
    /// Every item whose file has an owner other than the mount's.
    public func owners() throws -> [ItemID: FileOwner] {
        try readDatabase { db in
            var owners: [ItemID: FileOwner] = [:]
            for owner in try Row.fetchAll(db, sql: "SELECT item_id, uid, gid FROM item_owner") {
                owners[ItemID(rawValue: owner[ItemOwnerColumns.itemID])] =
                    FileOwner(uid: owner[ItemOwnerColumns.uid], gid: owner[ItemOwnerColumns.gid])
            }
            return owners
        }
    }
}
