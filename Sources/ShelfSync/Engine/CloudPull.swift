import Foundation
import ShelfModel
import ShelfStore

/// Pulling: the changes held back whose items are free now, then other devices' batches past
/// the cursor, each applied after the batches it builds on, in one store transaction with the
/// cursor. One value per round, inside the round's lock.
struct CloudPull {
    let engine: SyncEngine

    /// What a round holds back, and the bytes it waits for.
    struct Held {
        var reasons: [String] = []
        var awaited: Set<ContentHash> = []
    }

    /// Applies the changes held back whose items are free now, then every batch of other
    /// devices past the cursor; returns how many changes were applied, and what waits and why.
    /// A change of a busy item (and every later one of that item) is held back, never dropped.
    /// A device's batch that cannot be applied yet (``applyAfterItsBases``) holds back that
    /// device's later batches until a round finds what it waits for; the other devices'
    /// batches go on.
    func run() throws -> (applied: Int, held: Held) {
        let link = try engine.requireLink()
        var applied = 0
        var held = Held()
        do {
            applied = try applyDeferred(link)
        } catch let missing as ChangeApplier.ContentNotArrived {
            held.reasons.append("changes of items that were in use: \(missing)")
            held.awaited.insert(missing.hash)
        }
        var cursor = try CloudCoding.decoder.decode(CloudCursor.self, from: link.cursor)
        if cursor.positions.isEmpty, let snapshot = try engine.cloud.latestSnapshot() {
            do {
                try CloudInputRules.check(snapshot)
            } catch let refusal as CloudInputRules.Refusal {
                // Nothing is read past a snapshot that fails: the logs it covers may be gone.
                held.reasons.append("the newest snapshot, of device \(engine.deviceName(snapshot.device)), is refused (\(refusal)); run `shelf cloud compact` on a device that syncs well to write a newer one")
                return (applied, held)
            }
            do {
                applied += try start(from: snapshot, link)
            } catch let missing as ChangeApplier.ContentNotArrived {
                held.reasons.append("the newest snapshot, of device \(engine.deviceName(snapshot.device)): \(missing)")
                held.awaited.insert(missing.hash)
                return (applied, held)
            }
            cursor = snapshot.cursor
        }
        var waiting = Set<DeviceID>()
        while true {
            // A waiting device's log is not listed again this round.
            var listed = cursor
            for device in waiting { listed[device] = .max }
            let (batches, _) = try engine.cloud.batches(after: listed, limit: SyncEngine.pullLimit)
            let before = cursor
            for batch in batches where !waiting.contains(batch.device) {
                do {
                    applied += try applyAfterItsBases(batch, cursor: &cursor, link: link)
                } catch let wait as Waiting {
                    held.reasons.append("changes from \(engine.deviceName(batch.device)) (batch \(batch.number)): \(wait.reason)")
                    if let content = wait.content { held.awaited.insert(content) }
                    waiting.insert(batch.device)
                }
            }
            if cursor == before {
                if let inUse = try heldForItemsInUse() { held.reasons.append(inUse) }
                return (applied, held)
            }
        }
    }

    /// Which items' changes wait because programs hold them, and why — or because the mount
    /// cannot tell which files are held (``ItemsInUse/everyItemBecause``): a deferral shows in
    /// the status while it lasts. Nil when nothing waits.
    private func heldForItemsInUse() throws -> String? {
        let items = try engine.store.write { writer in
            var items: [ItemID] = []
            for deferred in try writer.ledger.deferredChanges() where !items.contains(deferred.item) { items.append(deferred.item) }
            return items
        }
        guard !items.isEmpty else { return nil }
        let paths = try items.prefix(10).map { try engine.store.summary(id: $0)?.path ?? $0.rawValue }
        let more = items.count > 10 ? " and \(items.count - 10) more" : ""
        let why = engine.itemsInUse().everyItemBecause.map { "whatever their item, \($0)" }
            ?? "a program holds them (a lock, or writes not saved yet)"
        return "changes of \(paths.joined(separator: ", "))\(more) wait: \(why)"
    }

    /// Why a batch cannot be applied yet: something it needs has not reached the cloud (a
    /// file-sync tool delivers files in any order). Nothing of it was applied; a later round
    /// tries again.
    private struct Waiting: Error {
        let reason: String
        /// The bytes it waits for, when that is what it waits for.
        var content: ContentHash?
    }

    /// Applies `batch` once every batch its changes were made on top of is applied: a cloud may
    /// list one device's log before another's (a folder cloud does), and an edit met before the
    /// edit it rebased would look concurrent with it, and merge or fork where it only follows.
    /// Throws ``Waiting`` when one of those batches, or bytes a merge needs, have not arrived,
    /// or when batches claim to build on each other in a circle (a damaged or hostile cloud).
    /// The batches below are visited with a stack of their own, so a long history costs no
    /// depth of calls.
    private func applyAfterItsBases(_ batch: ChangeBatch, cursor: inout CloudCursor, link: CloudLinkState) throws -> Int {
        var applied = 0
        var pending = [batch]
        while let top = pending.last {
            guard top.number > cursor[top.device] else {
                pending.removeLast()
                continue
            }
            if let refusal = try refusal(of: top) {
                guard try engine.cloud.retiredDevices().contains(top.device) else { throw Waiting(reason: refusal) }
                // A forgotten device's refused batch is passed over: the cursor moves on without it.
                engine.logger.notice("dropped \(refusal)")
                var next = cursor
                next[top.device] = top.number
                applied += try apply(ChangeBatch(device: top.device, number: top.number, changes: []), cursor: next, link: link)
                cursor = next
                pending.removeLast()
                continue
            }
            if let (device, _) = top.batchesBelow.first(where: { $0.0 != top.device && $0.1 > cursor[$0.0] }) {
                let earlier = cursor[device] + 1
                guard !pending.contains(where: { $0.device == device && $0.number == earlier }) else {
                    throw Waiting(reason: "batch \(top.number) of device \(engine.deviceName(top.device)) and batch \(earlier) of device \(engine.deviceName(device)) each claim to build on the other")
                }
                let before: ChangeBatch?
                do {
                    before = try engine.cloud.batch(of: device, number: earlier)
                } catch CloudError.damaged(let path, let reason) {
                    // A file-sync tool may bring a good copy yet.
                    throw Waiting(reason: "\(CloudError.damaged(path: path, reason: reason))")
                }
                guard let before else {
                    throw Waiting(reason: "batch \(earlier) of device \(engine.deviceName(device)), which it builds on, has not arrived")
                }
                pending.append(before)
                continue
            }
            var next = cursor
            next[top.device] = top.number
            do {
                applied += try apply(top, cursor: next, link: link)
            } catch let missing as ChangeApplier.ContentNotArrived {
                throw Waiting(reason: "\(missing)", content: missing.hash)
            }
            cursor = next
            pending.removeLast()
        }
        return applied
    }

    /// Why `batch` may not be applied (``CloudInputRules``), naming its device and number; nil
    /// when it may.
    private func refusal(of batch: ChangeBatch) throws -> String? {
        do {
            try CloudInputRules.check(batch)
            return nil
        } catch let refusal as CloudInputRules.Refusal {
            let name = engine.deviceName(batch.device)
            return "batch \(batch.number) of device \(name) is refused, \(refusal); nothing of it was applied. If \(name) is not yours, `shelf cloud forget-device \(batch.device)` drops what it wrote"
        }
    }

    /// Applies one batch and moves the cursor past it, in one transaction. A change of an item
    /// that a program holds is held back; an item taken up during the transaction gets the
    /// change, and its save merges with it (the save knows what its bytes were read from).
    private func apply(_ batch: ChangeBatch, cursor: CloudCursor, link: CloudLinkState) throws -> Int {
        let encodedCursor = try CloudCoding.encoder.encode(cursor)
        var plainChanges: [(path: String, wasThere: Bool)] = []
        if batch.device != link.device { try engine.fillFetched.withLock { $0 }() }
        let busy = batch.device == link.device ? ItemsInUse([]) : engine.itemsInUse()
        let applied = try engine.store.write(as: ChangeOrigin(.sync, device: engine.deviceName(batch.device))) { writer in
            var count = 0
            if batch.device != link.device {
                let applier = applier(writer, link)
                let plain = PlainFileSync(root: engine.store.plainFilesFolder)
                for change in batch.changes {
                    if PlainFileSync.isPlain(change) {
                        if case .changed(let wasThere) = try plain.apply(change, with: writer, device: link.device,
                                                                         content: engine.cloud.content, deviceName: engine.deviceName) {
                            plainChanges.append((change.path, wasThere))
                        }
                        count += 1
                    } else if try busy.contains(change.itemID) || writer.ledger.hasDeferredChanges(of: change.itemID) {
                        try writer.ledger.deferChange(try CloudCoding.encoder.encode(change), of: change.itemID)
                    } else {
                        try applier.apply(change)
                        count += 1
                    }
                }
            }
            guard var current = try writer.ledger.cloudLink() else { throw SyncError.notLinked }
            current.cursor = encodedCursor
            try writer.ledger.setCloudLink(current)
            return count
        }
        let changed = engine.plainFileChanged.withLock { $0 }
        for change in plainChanges { changed(change.path, change.wasThere) }
        return applied
    }

    /// A device that has read nothing yet starts from the newest snapshot instead of every log
    /// since the cloud began: it learns the snapshot's recent history, its changes are applied
    /// like pulled ones, and reading resumes from the snapshot's cursor.
    private func start(from snapshot: CloudSnapshot, _ link: CloudLinkState) throws -> Int {
        var cursor = snapshot.cursor
        cursor.positions[link.device] = nil
        let encodedCursor = try CloudCoding.encoder.encode(cursor)
        return try engine.store.write(as: ChangeOrigin(.sync, device: engine.deviceName(snapshot.device))) { writer in
            for change in snapshot.history ?? [] { try writer.ledger.remember(change) }
            let applier = applier(writer, link)
            let plain = PlainFileSync(root: engine.store.plainFilesFolder)
            for change in snapshot.changes {
                if PlainFileSync.isPlain(change) {
                    _ = try plain.apply(change, with: writer, device: link.device, content: engine.cloud.content, deviceName: engine.deviceName)
                } else {
                    try applier.apply(change)
                }
            }
            guard var current = try writer.ledger.cloudLink() else { throw SyncError.notLinked }
            current.cursor = encodedCursor
            try writer.ledger.setCloudLink(current)
            return snapshot.changes.count
        }
    }

    private func applyDeferred(_ link: CloudLinkState) throws -> Int {
        let busy = engine.itemsInUse()
        return try engine.store.write { writer in
            var stillBusy = Set<ItemID>()
            var applied = 0
            for deferred in try writer.ledger.deferredChanges() {
                guard !stillBusy.contains(deferred.item), !busy.contains(deferred.item) else {
                    stillBusy.insert(deferred.item)
                    continue
                }
                try applier(writer, link).apply(try CloudCoding.decoder.decode(CloudChange.self, from: deferred.body))
                try writer.ledger.removeDeferredChange(deferred.sequence)
                applied += 1
            }
            return applied
        }
    }

    private func applier(_ writer: StoreWriter, _ link: CloudLinkState) -> ChangeApplier {
        ChangeApplier(writer: writer, device: link.device, downloadsEagerly: link.downloadAll, cloudContent: engine.cloud.content,
                      isPushedBatchInCloud: { id in
                          guard let (device, number) = CloudChange.pushedBatch(of: id) else { return false }
                          return try engine.cloud.batch(of: device, number: number) != nil
                      },
                      storeCloudContent: { try engine.cloud.putContent($0, hash: $1, by: link.device) }, deviceName: engine.deviceName, logger: engine.logger)
    }
}
