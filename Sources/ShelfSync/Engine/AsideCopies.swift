import Foundation
import ShelfModel
import ShelfStore

/// Conflict copies that every device makes alike: the id of a loser's copy derives from the
/// edit whose bytes lost, so copies made on different devices (by sync, or by a save that beat
/// a change from the cloud) meet in the cloud as one item.
extension ChangeApplier {
    /// The losing side of an unmergeable pair, kept aside as a conflict copy. Its id derives from
    /// the losing change alone (``asideID(of:)``), and it is pushed like an item made here: a
    /// device that met the same edits another way (rebasing its own edit onto them) keeps the
    /// same loser aside under the same id, and the copies meet in the cloud as one item.
    /// `beside`: the path of the file it is a copy of.
    func keepConflictCopy(_ bytes: Data, of older: CloudChange, beside path: String) throws {
        let older = try author(of: older)
        let copyID = Self.asideID(of: older)
        guard try !writer.isStored(id: copyID), let kind = ItemKind(rawValue: older.kind) else { return }
        _ = try writer.saveConflictCopy(bytes, id: copyID, kind: kind, beside: path, time: older.time,
                                        device: deviceName(older.device), tag: Self.asideTag(copyID))
    }

    /// A device's edit made on top of its own earlier edit continues that line: the copy that
    /// kept the earlier edit's bytes aside when it lost is retired (unless edited since), so a
    /// device's successive saves leave at most one copy — of the line's newest edit, if that
    /// loses too. An edit made on top of another device's is no continuation: it may have beaten
    /// it (a rebase of edits made here), and that copy stays.
    func retireCopy(continuedBy change: CloudChange) throws {
        guard !change.id.contains("~"), let baseID = change.base, let base = try writer.ledger.cloudChange(baseID) else { return }
        try retireCopy(of: base, continuedOn: change.device)
    }

    /// Retires the copy of `base`'s bytes when `base` is an edit of `device`, which continued it.
    func retireCopy(of base: CloudChange, continuedOn device: DeviceID) throws {
        let lost = try author(of: base)
        guard lost.device == device else { return }
        let copyID = Self.asideID(of: lost)
        guard let copy = try ItemState.stored(copyID, in: writer)?.state, copy.operation == .put, copy.hash == lost.hash
        else { return }
        logger.debug("\(self.device) retires \(copy.path): \(device) continued \(lost.id)")
        try writer.trash(id: copyID, reason: "superseded: a later edit continued what it kept aside")
    }

    /// Whether `put` only makes again what the concurrent `delete` removed: an item made from
    /// nothing (``isMadeFromNothing(_:)``) with the very bytes the delete took away. Only a
    /// conflict copy, whose id every device derives alike, is made so on two devices: one retired
    /// it while the other, not knowing, kept the same losing edit aside. That carries no edit, so
    /// the retirement stands; letting it beat the delete would keep a retired copy for good.
    static func isRemade(_ put: ItemState, madeFromNothing: Bool, deletedBy delete: ItemState) -> Bool {
        put.operation == .put && madeFromNothing && delete.operation == .delete && put.hash == delete.hash
    }

    /// Whether `change` was made on no earlier change: an edit without a base, or a derived merge
    /// of such edits only (two devices' copies of one losing edit, met in the cloud).
    func isMadeFromNothing(_ change: CloudChange) throws -> Bool {
        guard change.mergedFrom != nil else { return change.base == nil }
        return try CloudChange.edits(in: change.id).allSatisfy { try history.known($0).map { $0.base == nil } ?? false }
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
            if let head = try writer.ledger.cloudChange(id), head.hash == change.hash { return head }
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

extension SyncEngine: SaveConflicts {
    /// How far back a save's origin is looked for, through the item's cloud history and through
    /// its versions here: a save that beats a change was read a few changes ago.
    private static let saveBaseSearch = 64
    private static let localVersionSearch = 8

    /// The save's next push is based on the cloud change that held the bytes it was made from,
    /// not on the state it beat: every device then sees the two as concurrent and resolves them
    /// alike, and the copy of that change's line, if it lost somewhere, is retired there. Bytes
    /// that never reached the cloud (an autosave that lost before it was sent) were made from
    /// the version before them here, and so on back. Nothing found leaves the base as it is.
    public func saveWon(_ id: ItemID, madeFrom version: Int64, with writer: StoreWriter) throws {
        guard let synced = try writer.ledger.syncedChange(of: id) else { return }
        var changeHolding: [ContentHash: CloudChange] = [:]
        var pending = [synced]
        var seen = Set<ChangeID>()
        while let next = pending.popLast(), seen.count < Self.saveBaseSearch {
            guard seen.insert(next).inserted else { continue }
            // A merge another device derived is known here by the edits it names.
            guard let change = try writer.ledger.cloudChange(next) else {
                pending.insert(contentsOf: next.contains("~") ? CloudChange.edits(in: next) : [], at: 0)
                continue
            }
            if change.operation == .put, changeHolding[change.hash] == nil { changeHolding[change.hash] = change }
            pending.insert(contentsOf: change.parents, at: 0)
        }
        for earlier in stride(from: version, to: max(0, version - Int64(Self.localVersionSearch)), by: -1) {
            guard let bytes = try writer.file(id: id, version: earlier) else { continue }
            guard let change = changeHolding[ContentHash(of: bytes)] else { continue }
            if change.id != synced { try writer.ledger.setSyncedChange(ChangeApplier.author(of: change, knownBy: writer).id, of: id) }
            return
        }
    }

    /// The copy of item `id`'s current state that a local save beating it keeps aside. Bytes that
    /// are a change from the cloud (whatever this device's metadata) get the copy sync makes
    /// when that change loses to a concurrent edit: same id, name and time, so the two copies
    /// meet as one item instead of two. Bytes only this device has get a new copy named after
    /// this device. Nil when not linked. Reads only the store and the device names already
    /// known: it runs inside the save's transaction.
    public func asideCopy(ofCurrentStateOf id: ItemID, with writer: StoreWriter) throws -> AsideCopy? {
        guard let link = try writer.ledger.cloudLink(), let local = try ItemState.stored(id, in: writer) else { return nil }
        if let synced = try writer.ledger.syncedCloudChange(of: id) {
            let author = try ChangeApplier.author(of: synced, knownBy: writer)
            if author.hash == local.state.hash {
                let copyID = ChangeApplier.asideID(of: author)
                return AsideCopy(id: copyID, time: author.time,
                                 device: knownDeviceName(author.device),
                                 tag: ChangeApplier.asideTag(copyID))
            }
        }
        return AsideCopy(id: .generate(), time: local.state.modified, device: link.deviceName, tag: nil)
    }
}
