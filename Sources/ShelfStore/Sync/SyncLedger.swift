import Foundation
import GRDB
import ShelfModel

/// The cloud a library is linked to, and how far this device has read and written it.
public struct CloudLinkState: Hashable, Sendable {
    /// The cloud's place as the user gave it (a folder, a URL).
    public var location: String
    /// The cloud's identity, checked on every sync.
    public var cloud: String
    public var device: String
    public var deviceName: String
    /// The sync engine's read position in the cloud, encoded by it.
    public var cursor: Data
    /// The number this device's next batch of changes gets.
    public var nextBatch: Int64
    /// The change-feed sequence up to which local changes were pushed.
    public var pushedSequence: Int64
    public var linked: Date
    public var lastSync: Date?
    /// Since when the cloud could not be reached; nil while it can.
    public var offlineSince: Date?
    /// Why the last sync failed; nil after a good one.
    public var error: String?
    /// What the last sync held back and why (changes whose ancestors or bytes have not reached
    /// the cloud yet); nil when nothing waits.
    public var waiting: String?
    /// Download every item's bytes as it arrives, instead of on first read.
    public var downloadAll: Bool
    /// At most this many bytes of downloaded items are kept here; nil: no budget.
    public var cacheLimit: Int?

    public init(location: String, cloud: String, device: String, deviceName: String, cursor: Data,
                nextBatch: Int64, pushedSequence: Int64, linked: Date, lastSync: Date? = nil,
                offlineSince: Date? = nil, error: String? = nil, waiting: String? = nil, downloadAll: Bool = false,
                cacheLimit: Int? = nil) {
        self.location = location
        self.cloud = cloud
        self.device = device
        self.deviceName = deviceName
        self.cursor = cursor
        self.nextBatch = nextBatch
        self.pushedSequence = pushedSequence
        self.linked = linked
        self.lastSync = lastSync
        self.offlineSince = offlineSince
        self.error = error
        self.waiting = waiting
        self.downloadAll = downloadAll
        self.cacheLimit = cacheLimit
    }
}

/// What sync keeps in the library: the link, the cloud changes this device has seen (by id,
/// encoded by the sync engine), and per item the change its current state descends from.
/// The store gives these tables a home and a transaction shared with the items; their
/// meaning is the sync engine's. A transaction reaches them as `writer.ledger`.
public struct SyncLedger {
    let db: Database

    static func link(in db: Database) throws -> CloudLinkState? {
        try Row.fetchOne(db.cachedStatement(sql: """
            SELECT location, cloud, device, device_name, cursor, next_batch, pushed_sequence, linked, last_sync,
                   offline_since, error, download_all, cache_limit, waiting
            FROM cloud_link
            """)).map { link in
            typealias Columns = CloudLinkColumns
            return CloudLinkState(location: link[Columns.location], cloud: link[Columns.cloud], device: link[Columns.device],
                                  deviceName: link[Columns.deviceName], cursor: link[Columns.cursor],
                                  nextBatch: link[Columns.nextBatch], pushedSequence: link[Columns.pushedSequence],
                                  linked: Date(storedSeconds: link[Columns.linked]),
                                  lastSync: (link[Columns.lastSync] as Double?).map(Date.init(storedSeconds:)),
                                  offlineSince: (link[Columns.offlineSince] as Double?).map(Date.init(storedSeconds:)),
                                  error: link[Columns.error], waiting: link[Columns.waiting],
                                  downloadAll: link[Columns.downloadAll], cacheLimit: link[Columns.cacheLimit])
        }
    }

    static func setLink(_ link: CloudLinkState, in db: Database) throws {
        try db.execute(sql: """
            INSERT OR REPLACE INTO cloud_link (singleton, location, cloud, device, device_name, cursor, next_batch,
                                               pushed_sequence, linked, last_sync, offline_since, error, download_all,
                                               cache_limit, waiting)
            VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [link.location, link.cloud, link.device, link.deviceName, link.cursor, link.nextBatch,
                             link.pushedSequence, link.linked.storedSeconds, link.lastSync?.storedSeconds,
                             link.offlineSince?.storedSeconds, link.error, link.downloadAll, link.cacheLimit,
                             link.waiting])
    }

    /// Forgets the link and everything learnt through it; the items stay as they are.
    /// `keepingPins`: which items stay downloaded is the user's choice, which a link to another
    /// cloud taking over from this one keeps.
    static func removeLink(in db: Database, keepingPins: Bool = false) throws {
        try db.execute(sql: """
            DELETE FROM cloud_link; DELETE FROM cloud_change; DELETE FROM item_sync; DELETE FROM sync_deferred;
            DELETE FROM plain_sync;
            """)
        if !keepingPins { try db.execute(sql: "DELETE FROM item_pin") }
    }

    // MARK: In a transaction

    public func cloudLink() throws -> CloudLinkState? { try Self.link(in: db) }
    public func setCloudLink(_ link: CloudLinkState) throws { try Self.setLink(link, in: db) }
    public func removeCloudLink(keepingPins: Bool = false) throws { try Self.removeLink(in: db, keepingPins: keepingPins) }

    /// A cloud change seen before, as the sync engine encoded it.
    public func knownChange(_ id: String) throws -> Data? {
        try Data.fetchOne(db.cachedStatement(sql: "SELECT body FROM cloud_change WHERE id = ?"), arguments: [id])
    }

    public func rememberChange(_ id: String, of item: ItemID, body: Data) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO cloud_change (id, item_id, body) VALUES (?, ?, ?)")
            .execute(arguments: [id, item.rawValue, body])
    }

    /// The depth the sync engine gave cloud change `id` in its item's history; nil when it has
    /// not yet (or does not know the change).
    public func changeGeneration(_ id: String) throws -> Int? {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT generation FROM cloud_change WHERE id = ?"), arguments: [id])
    }

    /// Keeps the depth of cloud change `id`; nothing when the change is not known.
    public func setChangeGeneration(_ id: String, _ generation: Int) throws {
        try db.cachedStatement(sql: "UPDATE cloud_change SET generation = ? WHERE id = ?").execute(arguments: [generation, id])
    }

    /// Every item's cloud change its state descends from, as the sync engine encoded them.
    public func syncedChanges() throws -> [Data] {
        try Data.fetchAll(db, sql: "SELECT c.body FROM item_sync s JOIN cloud_change c ON c.id = s.change_id")
    }

    /// The cloud change item `id`'s state descends from: what its next change is based on.
    public func syncedChange(of id: ItemID) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT change_id FROM item_sync WHERE item_id = ?"),
                            arguments: [id.rawValue])
    }

    public func setSyncedChange(_ change: String, of id: ItemID) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO item_sync (item_id, change_id) VALUES (?, ?)")
            .execute(arguments: [id.rawValue, change])
    }

    /// Per plain file's path, the cloud change (as the sync engine encoded it) its copy here
    /// last agreed with.
    public func plainFileChanges() throws -> [String: Data] {
        Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT path, body FROM plain_sync").map {
            ($0[PlainSyncColumns.path] as String, $0[PlainSyncColumns.body] as Data)
        })
    }

    public func plainFileChange(of path: String) throws -> Data? {
        try Data.fetchOne(db.cachedStatement(sql: "SELECT body FROM plain_sync WHERE path = ?"), arguments: [path])
    }

    public func setPlainFileChange(_ body: Data?, of path: String) throws {
        if let body {
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO plain_sync (path, body) VALUES (?, ?)")
                .execute(arguments: [path, body])
        } else {
            try db.cachedStatement(sql: "DELETE FROM plain_sync WHERE path = ?").execute(arguments: [path])
        }
    }

    /// Holds back a cloud change of item `id` until it can be applied.
    public func deferChange(_ body: Data, of id: ItemID) throws {
        try db.cachedStatement(sql: "INSERT INTO sync_deferred (item_id, body) VALUES (?, ?)")
            .execute(arguments: [id.rawValue, body])
    }

    /// The changes held back, oldest first, by their place in the queue.
    public func deferredChanges() throws -> [(sequence: Int64, item: ItemID, body: Data)] {
        try Row.fetchAll(db, sql: "SELECT sequence, item_id, body FROM sync_deferred ORDER BY sequence").map {
            ($0[SyncDeferredColumns.sequence], ItemID(rawValue: $0[SyncDeferredColumns.itemID]), $0[SyncDeferredColumns.body])
        }
    }

    public func removeDeferredChange(_ sequence: Int64) throws {
        try db.cachedStatement(sql: "DELETE FROM sync_deferred WHERE sequence = ?").execute(arguments: [sequence])
    }

    /// Whether changes of item `id` are held back (later ones wait behind them).
    public func hasDeferredChanges(of id: ItemID) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM sync_deferred WHERE item_id = ? LIMIT 1"),
                          arguments: [id.rawValue]) != nil
    }
}

extension StoreWriter {
    /// Sync's tables, in this transaction.
    public var ledger: SyncLedger { SyncLedger(db: db) }

    /// `path`, or the first free ` (n)` variant of its file name in the same folder.
    public func freePath(near path: String) throws -> String { try uniquified(path) }
}

extension LibraryStore {
    /// The cloud this library is linked to, if any.
    public func cloudLink() throws -> CloudLinkState? {
        try readDatabase { try SyncLedger.link(in: $0) }
    }
}
