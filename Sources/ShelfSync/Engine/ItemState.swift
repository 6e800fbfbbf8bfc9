import Foundation
import ShelfModel
import ShelfStore

/// One device's copy of an item in the terms a change carries: whether it exists, where, its
/// bytes by hash and its file metadata. Two states that match need no sync between them.
struct ItemState: Hashable, Sendable {
    var operation: CloudChange.Operation
    var kind: String
    var path: String
    var hash: ContentHash
    var size: Int
    var modified: Date
    var permissions: UInt32
    var attributes: [String: Data]

    /// Deleted copies match whatever they held when deleted. Times match within a
    /// microsecond: they pass through the store's and JSON's seconds, which may round.
    func matches(_ other: ItemState?) -> Bool {
        guard let other else { return false }
        if operation == .delete && other.operation == .delete { return true }
        var sameTime = other
        if abs(modified.timeIntervalSince(other.modified)) < 1e-6 { sameTime.modified = modified }
        return self == sameTime
    }

    /// Whether this device's copy changed since the state it last agreed with the cloud on: a
    /// live item that was never synced is new here; a trashed one is nothing to tell.
    func needsPush(since synced: CloudChange?) -> Bool {
        guard let synced else { return operation == .put }
        return !matches(synced.state)
    }

    /// The state of item `id` in the store, with its bytes; nil when the store does not hold it
    /// (never had it, or its trash was emptied).
    /// `content` is nil for a placeholder (its bytes are in the cloud).
    static func stored(_ id: ItemID, in writer: StoreWriter) throws -> (state: ItemState, title: String, content: Data?)? {
        guard let stored = try writer.storedFile(id: id) else { return nil }
        let (hash, size, content): (ContentHash, Int, Data?) = switch stored.bytes {
        case .here(let bytes): (ContentHash(of: bytes), bytes.count, bytes)
        case .inCloud(let hash, let size): (ContentHash(rawValue: hash), size, nil)
        }
        let state = ItemState(operation: stored.isTrashed ? .delete : .put, kind: stored.kind, path: stored.path, hash: hash,
                              size: size, modified: stored.modified, permissions: stored.permissions,
                              attributes: stored.attributes)
        return (state, stored.title, content)
    }
}

extension CloudChange {
    var state: ItemState {
        ItemState(operation: operation, kind: kind, path: path, hash: hash, size: size,
                  modified: modified, permissions: permissions, attributes: attributes)
    }

    var itemID: ItemID { ItemID(rawValue: item) }

    init(id: ChangeID, item: ItemID, base: ChangeID?, mergedFrom: ChangeID? = nil, device: DeviceID, time: Date,
         state: ItemState, title: String) {
        self.init(id: id, item: item.rawValue, base: base, mergedFrom: mergedFrom, device: device, time: time,
                  operation: state.operation, kind: state.kind, path: state.path, title: title, hash: state.hash,
                  size: state.size, modified: state.modified, permissions: state.permissions,
                  attributes: state.attributes)
    }

    /// The changes this one was made on top of: a pushed change's base (a derived merge's id
    /// included, whole), or a derived merge's heads.
    var parents: [ChangeID] { id.contains("~") ? Self.edits(in: id) : [base].compactMap { $0 } }

    /// The edits a change id names: itself, or the heads a derived merge was made of.
    static func edits(in id: ChangeID) -> [ChangeID] {
        id.split(separator: "~").map(String.init)
    }

    /// Newest first where edits cannot merge: by time, then by device id, so every device
    /// orders the same two changes the same way.
    func isNewer(than other: CloudChange) -> Bool {
        (time, device, id) > (other.time, other.device, other.id)
    }
}

/// The sync ledger's changes as the engine's ``CloudChange``s.
extension SyncLedger {
    /// A cloud change this device has seen (or derived).
    func cloudChange(_ id: ChangeID) throws -> CloudChange? {
        try knownChange(id).map { try CloudCoding.decoder.decode(CloudChange.self, from: $0) }
    }

    func remember(_ change: CloudChange) throws {
        try rememberChange(change.id, of: change.itemID, body: try CloudCoding.encoder.encode(change))
    }

    /// The cloud change item `id`'s state descends from.
    func syncedCloudChange(of id: ItemID) throws -> CloudChange? {
        try syncedChange(of: id).flatMap(cloudChange)
    }
}
