import Foundation
import ShelfModel
import ShelfStore

/// How a conflict copy of a change from the cloud is made, the same on every device
/// (``SyncEngine/asideCopy(ofCurrentStateOf:with:)``).
public struct AsideCopy: Sendable {
    public let id: ItemID
    /// The losing change's time and device name, which the copy's name shows.
    public let time: Date
    public let device: String
    /// Part of the id in the name, so two copies from one device and second differ.
    public let tag: String
}

/// Conflict copies that every device makes alike: the id of a loser's copy derives from the
/// edit whose bytes lost, so copies made on different devices (by sync, or by a save that beat
/// a change from the cloud) meet in the cloud as one item.
extension ChangeApplier {
    /// The losing side of an unmergeable pair, kept aside as a conflict copy. Its id derives from
    /// the losing change alone (``asideID(of:)``), and it is pushed like an item made here: a
    /// device that met the same edits another way (rebasing its own edit onto them) keeps the
    /// same loser aside under the same id, and the copies meet in the cloud as one item.
    func keepConflictCopy(_ bytes: Data, of older: CloudChange, against newer: CloudChange) throws {
        let older = try author(of: older)
        let copyID = Self.asideID(of: older)
        guard try writer.storedItem(id: copyID) == nil, let kind = ItemKind(rawValue: older.kind) else { return }
        _ = try writer.saveConflictCopy(bytes, id: copyID, kind: kind, beside: newer.path, time: older.time,
                                        device: deviceName(older.device), tag: Self.asideTag(copyID))
    }

    func author(of change: CloudChange) throws -> CloudChange {
        try Self.author(of: change, knownBy: writer)
    }

    /// The edit whose bytes `change` carries: a derived merge that merged no bytes carries the
    /// bytes of one of its heads, and the copy is that head's. Devices that met the same
    /// concurrent edits in different subsets fold them differently, but a loser's copy is then
    /// one item everywhere.
    static func author(of change: CloudChange, knownBy writer: StoreWriter) throws -> CloudChange {
        guard change.id.contains("~") else { return change }
        for id in CloudChange.edits(in: change.id).reversed() {
            if let head = try writer.cloudChange(id), head.hash == change.hash { return head }
        }
        return change
    }

    /// The id of the conflict copy that keeps `change`'s content aside once it lost.
    static func asideID(of change: CloudChange) -> ItemID { derivedItemID("aside|" + change.id) }

    /// A few characters of an aside copy's id in its name: two edits of one device that lost in
    /// the same second get two names, the same on every device, instead of a number each
    /// device gives in the order the copies reached it.
    static func asideTag(_ id: ItemID) -> String { String(id.rawValue.prefix(4)) }

    /// An item id every device derives alike from `seed` (UUID-shaped, from its SHA-256).
    static func derivedItemID(_ seed: String) -> ItemID {
        let hex = ContentHash(of: Data(seed.utf8)).rawValue.prefix(32)
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4),
                     hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return ItemID(rawValue: parts.joined(separator: "-"))
    }
}

extension SyncEngine {
    /// The copy sync makes of item `id`'s current state when that state loses to a concurrent
    /// edit, if the state is a change from the cloud (nothing edited here since): a local save
    /// that beats it keeps it aside under the same id, name and time, so the two copies meet as
    /// one item instead of two. Nil for a state this device made. Reads only the store and the
    /// device names already known: it runs inside the save's transaction.
    public func asideCopy(ofCurrentStateOf id: ItemID, with writer: StoreWriter) throws -> AsideCopy? {
        guard let synced = try writer.syncedCloudChange(of: id), let local = try ItemState.stored(id, in: writer),
              !local.state.needsPush(since: synced) else { return nil }
        let author = try ChangeApplier.author(of: synced, knownBy: writer)
        let copyID = ChangeApplier.asideID(of: author)
        return AsideCopy(id: copyID, time: author.time,
                         device: deviceNames.withLock { $0[author.device] } ?? String(author.device.prefix(8)),
                         tag: ChangeApplier.asideTag(copyID))
    }
}
