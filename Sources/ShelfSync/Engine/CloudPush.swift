import Foundation
import ShelfModel
import ShelfStore

/// Pushing: this device's changes from the library's change feed (the durable outbox) to the
/// cloud, a batch at a time, and its plain files. One value per round, inside the round's lock.
struct CloudPush {
    let engine: SyncEngine

    /// Uploads every item that changed here since it last agreed with the cloud; returns how
    /// many. A batch written before a crash kept its number from being recorded is adopted.
    func push() throws -> Int {
        try adoptLeftoverBatch()
        var pushed = 0
        while true {
            let link = try engine.requireLink()
            let feed = try engine.store.changes(after: link.pushedSequence, limit: SyncEngine.pushLimit)
            guard let last = feed.last else { return pushed }
            // Each item once, in the order the feed first names it, with its latest time.
            var times: [ItemID: Date] = [:]
            var ids: [ItemID] = []
            for change in feed where times.updateValue(change.time ?? Date(), forKey: change.id) == nil { ids.append(change.id) }
            let number = link.nextBatch
            let outgoing = try engine.store.write { writer in
                try ids.enumerated().compactMap { index, id -> (change: CloudChange, content: Data?)? in
                    guard let local = try ItemState.stored(id, in: writer) else { return nil }
                    let synced = try writer.ledger.syncedCloudChange(of: id)
                    guard local.state.needsPush(since: synced) else { return nil }
                    // An edit is as new as its file, as in Syncthing: that time survives rebases
                    // onto others' edits, so newest-wins compares when files were written, not
                    // when devices happened to sync.
                    let time = local.state.operation == .put ? local.state.modified : times[id] ?? Date()
                    let change = CloudChange(id: "\(link.device)-\(number)-\(index)", item: id,
                                             base: synced?.id, device: link.device, time: time,
                                             state: local.state, title: local.title)
                    return (change, local.state.operation == .put ? local.content : nil)
                }
            }
            if !outgoing.isEmpty {
                for (change, content) in outgoing {
                    if let content { try engine.cloud.putContent(content, hash: change.hash, by: link.device) }
                }
                try engine.cloud.append(ChangeBatch(device: link.device, number: number, changes: outgoing.map(\.change)))
            }
            try engine.store.write { writer in
                for (change, _) in outgoing { try record(change, with: writer) }
                guard var current = try writer.ledger.cloudLink() else { throw SyncError.notLinked }
                if !outgoing.isEmpty { current.nextBatch = number + 1 }
                current.pushedSequence = last.sequence
                try writer.ledger.setCloudLink(current)
            }
            pushed += outgoing.count
            engine.counts.uploads.add(outgoing.count, ordering: .relaxed)
        }
    }

    /// A batch stored under this device's next number was pushed by a round that ended before
    /// it could record so: its changes are what this device told the cloud.
    private func adoptLeftoverBatch() throws {
        let link = try engine.requireLink()
        guard let leftover = try engine.cloud.batch(of: link.device, number: link.nextBatch) else { return }
        // A batch under this device's name that breaks the rules is not its own: passed over.
        let isOwn = (try? CloudInputRules.check(leftover)) != nil
        try engine.store.write { writer in
            for change in leftover.changes where isOwn {
                try record(change, with: writer)
            }
            guard var current = try writer.ledger.cloudLink() else { throw SyncError.notLinked }
            current.nextBatch = leftover.number + 1
            try writer.ledger.setCloudLink(current)
        }
        engine.logger.notice("\(isOwn ? "adopted" : "passed over") batch \(leftover.number) that \(isOwn ? "an interrupted push had" : "breaks the cloud's rules was") stored")
    }

    /// Uploads the plain files that changed here since they last agreed with the cloud (found
    /// by a scan: they have no change feed); returns how many.
    func pushPlainFiles() throws -> Int {
        let link = try engine.requireLink()
        let plain = PlainFileSync(root: engine.store.plainFilesFolder)
        let known = try engine.store.write { try $0.ledger.plainFileChanges() }
            .compactMapValues { try? CloudCoding.decoder.decode(CloudChange.self, from: $0) }
        let disk = plain.scan(known: known)
        var states: [(state: ItemState, base: CloudChange?)] = []
        for (path, state) in disk.sorted(by: { $0.key < $1.key }) where !state.matches(known[path]?.state) {
            states.append((state, known[path]))
        }
        for (path, synced) in known.sorted(by: { $0.key < $1.key }) where disk[path] == nil && synced.operation == .put {
            var gone = synced.state
            gone.operation = .delete
            states.append((gone, synced))
        }
        guard !states.isEmpty else { return 0 }
        let number = link.nextBatch
        let changes = states.enumerated().map { index, entry in
            CloudChange(id: "\(link.device)-\(number)-\(index)", item: ItemID(rawValue: PlainFileSync.key(entry.state.path)),
                        base: entry.base?.id, device: link.device, time: Date(), state: entry.state, title: "")
        }
        for change in changes where change.kind == PlainFileSync.fileKind && change.operation == .put {
            guard let bytes = plain.bytes(at: change.path), ContentHash(of: bytes) == change.hash else {
                return 0  // changed while being read: the next round sends it
            }
            try engine.cloud.putContent(bytes, hash: change.hash, by: link.device)
        }
        try engine.cloud.append(ChangeBatch(device: link.device, number: number, changes: changes))
        try engine.store.write { writer in
            for change in changes { try record(change, with: writer) }
            guard var current = try writer.ledger.cloudLink() else { throw SyncError.notLinked }
            current.nextBatch = number + 1
            try writer.ledger.setCloudLink(current)
        }
        engine.counts.uploads.add(changes.count, ordering: .relaxed)
        return changes.count
    }

    /// Notes that this device's copy agrees with `change`, which it sent.
    private func record(_ change: CloudChange, with writer: StoreWriter) throws {
        if PlainFileSync.isPlain(change) {
            try writer.ledger.setPlainFileChange(try CloudCoding.encoder.encode(change), of: change.path)
        } else {
            try writer.ledger.remember(change)
            try writer.ledger.setSyncedChange(change.id, of: change.itemID)
        }
    }
}
