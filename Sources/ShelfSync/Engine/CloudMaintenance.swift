import Foundation
import ShelfModel
import ShelfStore

/// Keeping the cloud small: this device's acknowledgement, snapshots, and the removal of logs
/// and bytes no device needs any more. Runs inside a round's lock (``SyncEngine/maintainCloud(snapshotEvery:unusedFor:)``).
struct CloudMaintenance {
    let engine: SyncEngine

    /// Tells the cloud how far this device has read, writes a snapshot once `snapshotEvery`
    /// batches happened since the newest one, and removes what no device needs any more: logs
    /// every device that is not retired has read and a snapshot covers (this device's own, and
    /// retired devices'), and bytes that no remaining change has or was made on top of, that no
    /// item here holds and that were not used for `unusedFor`. A device that never reports
    /// (lost, never synced) holds removal back until `shelf cloud forget-device` retires it.
    func run(snapshotEvery: Int, unusedFor: TimeInterval) throws -> SyncEngine.Maintenance {
        var report = SyncEngine.Maintenance()
        let link = try engine.requireLink()
        var read = try CloudCoding.decoder.decode(CloudCursor.self, from: link.cursor)
        read[link.device] = link.nextBatch - 1
        try engine.cloud.acknowledge(DeviceAck(device: link.device, number: Int64(Date().timeIntervalSince1970 * 1000), cursor: read))

        let behind = Self.total(read) - (try engine.cloud.latestSnapshot().map { Self.total($0.cursor) } ?? 0)
        let hasDeferred = try engine.store.write { try !$0.ledger.deferredChanges().isEmpty }
        if behind >= snapshotEvery, !hasDeferred {
            let (changes, history) = try engine.store.write { writer in
                let changes = try (writer.ledger.syncedChanges() + writer.ledger.plainFileChanges().values).map {
                    try CloudCoding.decoder.decode(CloudChange.self, from: $0)
                }
                return (changes, try Self.history(before: changes, in: writer))
            }
            try engine.cloud.putSnapshot(CloudSnapshot(device: link.device, number: Int64(Date().timeIntervalSince1970 * 1000),
                                                cursor: read, changes: changes, history: history))
            report.snapshotWritten = true
        }

        guard let snapshot = try engine.cloud.latestSnapshot() else { return report }
        let retired = try engine.cloud.retiredDevices()
        let active = try engine.cloud.devices().ids.filter { !retired.contains($0) }
        let acks = try engine.cloud.acknowledgements()
        guard active.allSatisfy({ acks[$0] != nil }) else { return report }
        for device in [link.device] + retired.sorted() {
            let everyoneRead = active.map { acks[$0]?.cursor[device] ?? 0 }.min() ?? 0
            let limit = min(everyoneRead, snapshot.cursor[device])
            if limit > 0 { report.batchesRemoved += try engine.cloud.removeBatches(of: device, through: limit) }
        }
        var keeping = Set(snapshot.changes.map(\.hash))
        var bases = Set<ChangeID>()
        var own: [CloudChange] = []
        // A device's log whose first batches were removed is read from where removal may
        // have reached (every device read it, the snapshot covers it): read from the start,
        // the first removed batch would be a gap that ends its run, and the bytes its later
        // batches name would go unkept.
        var position = CloudCursor()
        for device in snapshot.cursor.positions.keys where try engine.cloud.batch(of: device, number: 1) == nil {
            position[device] = min(active.map { acks[$0]?.cursor[device] ?? 0 }.min() ?? 0, snapshot.cursor[device])
        }
        while true {
            let (batches, next) = try engine.cloud.batches(after: position, limit: 10_000)
            guard !batches.isEmpty else { break }
            for batch in batches {
                keeping.formUnion(batch.changes.map(\.hash))
                bases.formUnion(batch.changes.flatMap(\.parents))
                if batch.device == link.device { own += batch.changes.filter { $0.operation == .put } }
            }
            position = next
        }
        // A device that has not applied a change yet may merge against its base; and a merge's
        // bytes are in no batch, only in the states of the devices that made it, this one's too.
        keeping.formUnion(try engine.store.write { writer in
            try bases.compactMap { try writer.ledger.cloudChange($0)?.hash }
                + writer.ledger.syncedChanges().map { try CloudCoding.decoder.decode(CloudChange.self, from: $0).hash }
        })
        report.contentRemoved = try engine.cloud.removeContent(except: keeping, unusedSince: Date().addingTimeInterval(-unusedFor))
        try restoreRemovedContent(of: own, by: link.device)
        return report
    }

    /// Stores again the bytes of this device's changes still in the log that a removal
    /// elsewhere took away: stored bytes are never touched when reused, so another device's
    /// removal may have counted them unused just as this device pushed a change naming them.
    /// Bytes this device no longer holds stay missing (their readers report it).
    private func restoreRemovedContent(of changes: [CloudChange], by device: DeviceID) throws {
        let plain = PlainFileSync(root: engine.store.plainFilesFolder)
        for change in changes where try change.kind != PlainFileSync.folderKind && !engine.cloud.hasContent(change.hash) {
            let bytes = PlainFileSync.isPlain(change) ? plain.bytes(at: change.path)
                : try engine.store.write { try ItemState.stored(change.itemID, in: $0)?.content }
            guard let bytes, ContentHash(of: bytes) == change.hash else { continue }
            try engine.cloud.putContent(bytes, hash: change.hash, by: device)
            engine.logger.notice("stored again the bytes of \(change.path), which the cloud had lost")
        }
    }

    private static func total(_ cursor: CloudCursor) -> Int64 { cursor.positions.values.reduce(0, +) }

    /// How many changes before each of its own a snapshot names: an edit made on top of an
    /// older one (a device offline through many edits) merges against what the cloud still
    /// holds, and keeps aside as a conflict copy what it cannot merge.
    static let snapshotHistory = 100

    /// The changes before `changes` that this device knows, up to ``snapshotHistory`` deep
    /// behind each.
    private static func history(before changes: [CloudChange], in writer: StoreWriter) throws -> [CloudChange] {
        var seen = Set(changes.map(\.id))
        var history: [CloudChange] = []
        var level = changes.flatMap(\.parents)
        for _ in 0..<snapshotHistory where !level.isEmpty {
            var next: [ChangeID] = []
            for id in level where seen.insert(id).inserted {
                if let change = try writer.ledger.cloudChange(id) {
                    history.append(change)
                    next += change.parents
                } else if id.contains("~") {
                    next += CloudChange.edits(in: id)
                }
            }
            level = next
        }
        return history
    }
}
