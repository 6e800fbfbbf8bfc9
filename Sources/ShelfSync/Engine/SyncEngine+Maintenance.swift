import Foundation
import ShelfModel
import ShelfStore

extension SyncEngine {
    // MARK: Keeping the cloud small

    /// What one maintenance removed.
    public struct Maintenance: Equatable, Sendable {
        public var snapshotWritten = false
        public var batchesRemoved = 0
        public var contentRemoved = 0
    }

    /// Tells the cloud how far this device has read, writes a snapshot once `snapshotEvery`
    /// batches happened since the newest one, and removes what no device needs any more: logs
    /// every device that is not retired has read and a snapshot covers (this device's own, and
    /// retired devices'), and bytes that no remaining change has or was made on top of, that no
    /// item here holds and that were not used for `unusedFor`. A device that never reports
    /// (lost, never synced) holds removal back until `shelf cloud forget-device` retires it.
    @discardableResult
    public func maintainCloud(snapshotEvery: Int = 500, unusedFor: TimeInterval = 86_400) throws -> Maintenance {
        try withRoundLock {
            try checkIdentity()
            var report = Maintenance()
            let link = try requireLink()
            var read = try CloudCoding.decoder.decode(CloudCursor.self, from: link.cursor)
            read[link.device] = link.nextBatch - 1
            try cloud.acknowledge(DeviceAck(device: link.device, number: Int64(Date().timeIntervalSince1970 * 1000), cursor: read))

            let behind = Self.total(read) - (try cloud.latestSnapshot().map { Self.total($0.cursor) } ?? 0)
            let hasDeferred = try store.write { try !$0.deferredChanges().isEmpty }
            if behind >= snapshotEvery, !hasDeferred {
                let (changes, history) = try store.write { writer in
                    let changes = try (writer.syncedChanges() + writer.plainFileChanges().values).map {
                        try CloudCoding.decoder.decode(CloudChange.self, from: $0)
                    }
                    return (changes, try Self.history(before: changes, in: writer))
                }
                try cloud.putSnapshot(CloudSnapshot(device: link.device, number: Int64(Date().timeIntervalSince1970 * 1000),
                                                    cursor: read, changes: changes, history: history))
                report.snapshotWritten = true
            }

            guard let snapshot = try cloud.latestSnapshot() else { return report }
            let retired = try cloud.retiredDevices()
            let active = try cloud.devices().map(\.id).filter { !retired.contains($0) }
            let acks = try cloud.acknowledgements()
            guard active.allSatisfy({ acks[$0] != nil }) else { return report }
            for device in [link.device] + retired.sorted() {
                let everyoneRead = active.map { acks[$0]?.cursor[device] ?? 0 }.min() ?? 0
                let limit = min(everyoneRead, snapshot.cursor[device])
                if limit > 0 { report.batchesRemoved += try cloud.removeBatches(of: device, through: limit) }
            }
            var keeping = Set(snapshot.changes.map(\.hash))
            var bases = Set<ChangeID>()
            var own: [CloudChange] = []
            // A device's log whose first batches were removed is read from where removal may
            // have reached (every device read it, the snapshot covers it): read from the start,
            // the first removed batch would be a gap that ends its run, and the bytes its later
            // batches name would go unkept.
            var position = CloudCursor()
            for device in snapshot.cursor.positions.keys where try cloud.batch(of: device, number: 1) == nil {
                position[device] = min(active.map { acks[$0]?.cursor[device] ?? 0 }.min() ?? 0, snapshot.cursor[device])
            }
            while true {
                let (batches, next) = try cloud.batches(after: position, limit: 10_000)
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
            keeping.formUnion(try store.write { writer in
                try bases.compactMap { try writer.cloudChange($0)?.hash }
                    + writer.syncedChanges().map { try CloudCoding.decoder.decode(CloudChange.self, from: $0).hash }
            })
            report.contentRemoved = try cloud.removeContent(except: keeping, unusedSince: Date().addingTimeInterval(-unusedFor))
            try restoreRemovedContent(of: own, by: link.device)
            return report
        }
    }

    /// Stores again the bytes of this device's changes still in the log that a removal
    /// elsewhere took away: stored bytes are never touched when reused, so another device's
    /// removal may have counted them unused just as this device pushed a change naming them.
    /// Bytes this device no longer holds stay missing (their readers report it).
    private func restoreRemovedContent(of changes: [CloudChange], by device: DeviceID) throws {
        let plain = PlainFileSync(root: store.plainFilesFolder)
        for change in changes where try change.kind != PlainFileSync.folderKind && !cloud.hasContent(change.hash) {
            let bytes = PlainFileSync.isPlain(change) ? plain.bytes(at: change.path)
                : try store.write { try ItemState.stored(change.itemID, in: $0)?.content }
            guard let bytes, ContentHash(of: bytes) == change.hash else { continue }
            try cloud.putContent(bytes, hash: change.hash, by: device)
            logger.notice("stored again the bytes of \(change.path), which the cloud had lost")
        }
    }

    /// Retires the device named `name` (a lost laptop): it no longer holds back the removal of
    /// logs. Throws when no device, or more than one, has that name.
    public func forgetDevice(named name: String) throws {
        let matches = try cloud.devices().filter { $0.name == name || $0.id == name }
        guard matches.count == 1, let device = matches.first else {
            throw SyncError.noSuchDevice(name: name, known: try cloud.devices().map { "\($0.name) (\($0.id))" })
        }
        guard device.id != (try requireLink().device) else { throw SyncError.cannotForgetItself }
        try cloud.retire(device.id)
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
                if let change = try writer.cloudChange(id) {
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
