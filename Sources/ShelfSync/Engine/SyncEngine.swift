import Foundation
import Glibc
import Logging
import ShelfModel
import ShelfStore
import ShelfSystem
import Synchronization

/// Keeps one library and its cloud in step: pulls other devices' changes (from the cursor on,
/// each batch in one store transaction with the cursor), then pushes this device's (the
/// library's change feed past the pushed position is the durable outbox).
///
/// One round runs at a time per library, whichever process starts it (the mount, `shelf
/// sync`): a lock file in the library serialises them, and the kernel drops it if a process
/// dies. Every round first checks that the cloud is the one this library linked to, so a
/// missing, emptied or replaced cloud folder stops sync with an error and never reads as
/// deletions.
public final class SyncEngine: Sendable {
    public let store: LibraryStore
    public let cloud: any CloudBackend
    let logger: Logger
    let deviceNames = Mutex<[DeviceID: String]>([:])
    /// The items programs hold now (a lock on the file, unsaved writes in it): their changes
    /// from the cloud wait until they let go. Asked before each store transaction, never inside
    /// one, so a transaction never waits for the mount (whose saves wait for the store).
    let busyItems = Mutex<@Sendable () -> ItemsInUse>({ ItemsInUse([]) })
    /// Puts in place the bytes the mount fetched for readers of placeholders and has not stored
    /// yet, so a change from the cloud lands on the item they read, not on its placeholder.
    let fillFetched = Mutex<@Sendable () throws -> Void>({})
    /// Downloads and uploads since this engine started, for the status.
    let counts = Counts()
    final class Counts: Sendable {
        let downloads = Atomic<Int>(0)
        let uploads = Atomic<Int>(0)
    }
    private let plainFileChanged = Mutex<@Sendable (_ path: String, _ wasThere: Bool) -> Void>({ _, _ in })
    /// When the mount last served each item, for evicting the least recently read first.
    let readTimes = Mutex<@Sendable () -> [ItemID: Date]>({ [:] })
    /// The bytes the last round's held-back changes wait for (see ``awaitedContent``).
    private let awaited = Mutex<Set<ContentHash>>([])

    /// Changes read from the cloud per round trip.
    public static let pullLimit = 1000
    /// Items pushed per batch.
    static let pushLimit = 1000

    public init(store: LibraryStore, cloud: any CloudBackend, logger: Logger = Logger(label: "shelf.sync")) {
        self.store = store
        self.cloud = cloud
        self.logger = logger
    }

    /// Tells the engine which items a program holds (the mount knows which of its files are
    /// locked or have unsaved writes): their cloud changes wait, and they are never evicted.
    /// `busyItems` must not wait for the store.
    public func considerBusy(_ busyItems: @escaping @Sendable () -> ItemsInUse) {
        self.busyItems.withLock { $0 = busyItems }
    }

    /// ``considerBusy(_:)`` for a caller that always knows which items are held.
    public func considerBusy(_ busyItems: @escaping @Sendable () -> Set<ItemID>) {
        considerBusy { ItemsInUse(busyItems()) }
    }

    /// What programs hold now (see ``considerBusy(_:)``); never called inside a transaction.
    func itemsInUse() -> ItemsInUse {
        busyItems.withLock { $0 }()
    }

    /// Has the mount store the bytes it fetched for readers before changes are applied over
    /// them (see ``fillFetched``). `fill` must not be called inside a transaction.
    public func fillFetchedFirst(_ fill: @escaping @Sendable () throws -> Void) {
        fillFetched.withLock { $0 = fill }
    }

    /// Makes the cache budget evict the items `lastRead` says were read longest ago first.
    public func evictByLastRead(_ lastRead: @escaping @Sendable () -> [ItemID: Date]) {
        readTimes.withLock { $0 = lastRead }
    }

    /// Tells `changed` (the mount) of each plain file a pull wrote or removed, by path, and
    /// whether something was at that path before.
    public func reportPlainFileChanges(to changed: @escaping @Sendable (_ path: String, _ wasThere: Bool) -> Void) {
        plainFileChanged.withLock { $0 = changed }
    }

    /// Asks `mount` what the four hooks above ask (busy items, bytes fetched for readers, last
    /// reads, plain files changed elsewhere): what a mount of this library registers.
    public func serve(_ mount: any SyncedMount) {
        considerBusy { mount.busyItems() }
        fillFetchedFirst { try mount.fillFetchedBytes() }
        evictByLastRead { mount.readTimes() }
        reportPlainFileChanges { mount.plainFileChangedElsewhere($0, wasThere: $1) }
    }

    /// A round now, described in a line for `shelf cloud sync` (which asked a running mount).
    public func syncRound() throws -> String {
        let report = try sync()
        return "\(report.pulled) changes in, \(report.pushed) out"
    }

    /// What one round did.
    public struct Report: Equatable, Sendable {
        public var pulled = 0
        public var pushed = 0
    }

    // MARK: Rounds

    /// Pulls, then pushes, then keeps the cache budget; records the outcome (last sync, offline
    /// since, error) in the link.
    @discardableResult
    public func sync() throws -> Report {
        try withRoundLock {
            do {
                try checkIdentity()
                let (pulled, held) = try pull()
                awaited.withLock { $0 = held.awaited }
                let report = Report(pulled: pulled, pushed: try push() + pushPlainFiles())
                try enforceCacheLimit(lastRead: readTimes.withLock { $0 }())
                // An idle round writes nothing (a write would wake the mount and the next round).
                let link = try requireLink()
                let waiting = held.reasons.isEmpty ? nil : held.reasons.joined(separator: "; ")
                if waiting != link.waiting, let waiting { logger.info("held back: \(waiting)") }
                if report != Report() || link.error != nil || link.offlineSince != nil || link.waiting != waiting
                    || link.lastSync.map({ Date().timeIntervalSince($0) > 60 }) ?? true {
                    try record { $0.lastSync = Date(); $0.offlineSince = nil; $0.error = nil; $0.waiting = waiting }
                }
                return report
            } catch {
                let isOffline = error is CloudError
                try? record { link in
                    link.error = "\(error)"
                    if isOffline, link.offlineSince == nil { link.offlineSince = Date() }
                }
                throw error
            }
        }
    }

    /// The bytes the changes the last round held back wait for: a file-sync tool delivers a
    /// batch and its content in any order, so the runner watches for them to arrive.
    public var awaitedContent: Set<ContentHash> { awaited.withLock { $0 } }

    /// What a round holds back, and the bytes it waits for.
    private struct Held {
        var reasons: [String] = []
        var awaited: Set<ContentHash> = []
    }

    /// Applies the changes held back whose items are free now, then every batch of other
    /// devices past the cursor; returns how many changes were applied, and what waits and why.
    /// A change of a busy item (and every later one of that item) is held back, never dropped.
    /// A device's batch that cannot be applied yet (``applyAfterItsBases``) holds back that
    /// device's later batches until a round finds what it waits for; the other devices'
    /// batches go on.
    private func pull() throws -> (applied: Int, held: Held) {
        let link = try requireLink()
        var applied = 0
        var held = Held()
        do {
            applied = try applyDeferred(link)
        } catch let missing as ChangeApplier.ContentNotArrived {
            held.reasons.append("changes of items that were in use: \(missing)")
            held.awaited.insert(missing.hash)
        }
        var cursor = try CloudCoding.decoder.decode(CloudCursor.self, from: link.cursor)
        if cursor.positions.isEmpty, let snapshot = try cloud.latestSnapshot() {
            do {
                try CloudInputRules.check(snapshot)
            } catch let refusal as CloudInputRules.Refusal {
                // Nothing is read past a snapshot that fails: the logs it covers may be gone.
                held.reasons.append("the newest snapshot, of device \(deviceName(snapshot.device)), is refused (\(refusal)); run `shelf cloud compact` on a device that syncs well to write a newer one")
                return (applied, held)
            }
            do {
                applied += try start(from: snapshot, link)
            } catch let missing as ChangeApplier.ContentNotArrived {
                held.reasons.append("the newest snapshot, of device \(deviceName(snapshot.device)): \(missing)")
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
            let (batches, _) = try cloud.batches(after: listed, limit: Self.pullLimit)
            let before = cursor
            for batch in batches where !waiting.contains(batch.device) {
                do {
                    applied += try applyAfterItsBases(batch, cursor: &cursor, link: link)
                } catch let wait as Waiting {
                    held.reasons.append("changes from \(deviceName(batch.device)) (batch \(batch.number)): \(wait.reason)")
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
        let items = try store.write { writer in
            var items: [ItemID] = []
            for deferred in try writer.deferredChanges() where !items.contains(deferred.item) { items.append(deferred.item) }
            return items
        }
        guard !items.isEmpty else { return nil }
        let paths = try items.prefix(10).map { try store.summary(id: $0)?.path ?? $0.rawValue }
        let more = items.count > 10 ? " and \(items.count - 10) more" : ""
        let why = itemsInUse().everyItemBecause.map { "whatever their item, \($0)" }
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
                guard try cloud.retiredDevices().contains(top.device) else { throw Waiting(reason: refusal) }
                // A forgotten device's refused batch is passed over: the cursor moves on without it.
                logger.notice("dropped \(refusal)")
                var next = cursor
                next[top.device] = top.number
                applied += try apply(ChangeBatch(device: top.device, number: top.number, changes: []), cursor: next, link: link)
                cursor = next
                pending.removeLast()
                continue
            }
            if let (device, _) = Self.batchesBelow(top).first(where: { $0.0 != top.device && $0.1 > cursor[$0.0] }) {
                let earlier = cursor[device] + 1
                guard !pending.contains(where: { $0.device == device && $0.number == earlier }) else {
                    throw Waiting(reason: "batch \(top.number) of device \(deviceName(top.device)) and batch \(earlier) of device \(deviceName(device)) each claim to build on the other")
                }
                let before: ChangeBatch?
                do {
                    before = try cloud.batch(of: device, number: earlier)
                } catch CloudError.damaged(let path, let reason) {
                    // A file-sync tool may bring a good copy yet.
                    throw Waiting(reason: "\(CloudError.damaged(path: path, reason: reason))")
                }
                guard let before else {
                    throw Waiting(reason: "batch \(earlier) of device \(deviceName(device)), which it builds on, has not arrived")
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
            let name = deviceName(batch.device)
            return "batch \(batch.number) of device \(name) is refused, \(refusal); nothing of it was applied. If \(name) is not yours, `shelf cloud forget-device \(batch.device)` drops what it wrote"
        }
    }

    /// The batches (device, number) that pushed the changes `batch`'s changes were based on
    /// (a derived merge's id names each of its heads).
    static func batchesBelow(_ batch: ChangeBatch) -> [(DeviceID, Int64)] {
        batch.changes.compactMap(\.base).flatMap { $0.split(separator: "~") }.compactMap { pushedBatch(of: String($0)) }
    }

    /// The batch that pushed change `id` (`DEVICE-BATCH-INDEX`); nil for a derived merge's id.
    static func pushedBatch(of id: ChangeID) -> (DeviceID, Int64)? {
        let parts = id.split(separator: "-", omittingEmptySubsequences: false)
        guard !id.contains("~"), parts.count >= 3, let number = Int64(parts[parts.count - 2]),
              Int(parts[parts.count - 1]) != nil else { return nil }
        return (parts.dropLast(2).joined(separator: "-"), number)
    }

    /// Applies one batch and moves the cursor past it, in one transaction. A change of an item
    /// that a program holds is held back; an item taken up during the transaction gets the
    /// change, and its save merges with it (the save knows what its bytes were read from).
    private func apply(_ batch: ChangeBatch, cursor: CloudCursor, link: CloudLinkState) throws -> Int {
        let encodedCursor = try CloudCoding.encoder.encode(cursor)
        var plainChanges: [(path: String, wasThere: Bool)] = []
        if batch.device != link.device { try fillFetched.withLock { $0 }() }
        let busy = batch.device == link.device ? ItemsInUse([]) : itemsInUse()
        let applied = try store.write(as: ChangeOrigin(.sync, device: deviceName(batch.device))) { writer in
            var count = 0
            if batch.device != link.device {
                let applier = applier(writer, link)
                let plain = PlainFileSync(root: store.plainFilesFolder)
                for change in batch.changes {
                    if PlainFileSync.isPlain(change) {
                        if case .changed(let wasThere) = try plain.apply(change, with: writer, device: link.device,
                                                                         content: cloud.content, deviceName: deviceName) {
                            plainChanges.append((change.path, wasThere))
                        }
                        count += 1
                    } else if try busy.contains(change.itemID) || writer.hasDeferredChanges(of: change.itemID) {
                        try writer.deferChange(try CloudCoding.encoder.encode(change), of: change.itemID)
                    } else {
                        try applier.apply(change)
                        count += 1
                    }
                }
            }
            guard var current = try writer.cloudLink() else { throw SyncError.notLinked }
            current.cursor = encodedCursor
            try writer.setCloudLink(current)
            return count
        }
        let changed = plainFileChanged.withLock { $0 }
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
        return try store.write(as: ChangeOrigin(.sync, device: deviceName(snapshot.device))) { writer in
            for change in snapshot.history ?? [] { try writer.remember(change) }
            let applier = applier(writer, link)
            let plain = PlainFileSync(root: store.plainFilesFolder)
            for change in snapshot.changes {
                if PlainFileSync.isPlain(change) {
                    _ = try plain.apply(change, with: writer, device: link.device, content: cloud.content, deviceName: deviceName)
                } else {
                    try applier.apply(change)
                }
            }
            guard var current = try writer.cloudLink() else { throw SyncError.notLinked }
            current.cursor = encodedCursor
            try writer.setCloudLink(current)
            return snapshot.changes.count
        }
    }

    private func applyDeferred(_ link: CloudLinkState) throws -> Int {
        let busy = itemsInUse()
        return try store.write { writer in
            var stillBusy = Set<ItemID>()
            var applied = 0
            for deferred in try writer.deferredChanges() {
                guard !stillBusy.contains(deferred.item), !busy.contains(deferred.item) else {
                    stillBusy.insert(deferred.item)
                    continue
                }
                try applier(writer, link).apply(try CloudCoding.decoder.decode(CloudChange.self, from: deferred.body))
                try writer.removeDeferredChange(deferred.sequence)
                applied += 1
            }
            return applied
        }
    }

    private func applier(_ writer: StoreWriter, _ link: CloudLinkState) -> ChangeApplier {
        ChangeApplier(writer: writer, device: link.device, downloadsEagerly: link.downloadAll, cloudContent: cloud.content,
                      isPushedBatchInCloud: { id in
                          guard let (device, number) = Self.pushedBatch(of: id) else { return false }
                          return try self.cloud.batch(of: device, number: number) != nil
                      },
                      storeCloudContent: { try self.cloud.putContent($0, hash: $1, by: link.device) }, deviceName: deviceName, logger: logger)
    }

    // MARK: Building blocks

    func requireLink() throws -> CloudLinkState {
        guard let link = try store.cloudLink() else { throw SyncError.notLinked }
        return link
    }

    func record(_ update: (inout CloudLinkState) -> Void) throws {
        try store.write { writer in
            guard var link = try writer.cloudLink() else { return }
            update(&link)
            try writer.setCloudLink(link)
        }
    }

    func deviceName(_ id: DeviceID) -> String {
        if let name = deviceNames.withLock({ $0[id] }) { return name }
        let devices = (try? cloud.devices()) ?? []
        deviceNames.withLock { names in
            // A name fit for messages and conflict copies' file names, else the id stands.
            for device in devices where CloudInputRules.isDeviceName(device.name) { names[device.id] = device.name }
        }
        return knownDeviceName(id)
    }

    /// Device `id`'s name as far as this engine has learnt it, without asking the cloud (inside
    /// a store transaction); else the start of its id.
    func knownDeviceName(_ id: DeviceID) -> String {
        deviceNames.withLock { $0[id] } ?? String(id.prefix(8))
    }

    /// Runs `body` holding the library's sync lock (an `flock` on `sync.lock`, waited for).
    func withRoundLock<T>(_ body: () throws -> T) throws -> T {
        let path = store.layout.syncLock.path
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw SystemCallError("open \(path)") }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw SystemCallError("lock \(path)") }
        }
        return try body()
    }
}
