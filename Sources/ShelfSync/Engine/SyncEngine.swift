import Foundation
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
    let plainFileChanged = Mutex<@Sendable (_ path: String, _ wasThere: Bool) -> Void>({ _, _ in })
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

    /// The engine of the cloud `store` is linked to, reading and writing it with the library's
    /// key where the cloud is encrypted; nil for a library not linked.
    public static func linked(_ store: LibraryStore, logger: Logger = Logger(label: "shelf.sync")) throws -> SyncEngine? {
        guard let link = try store.cloudLink() else { return nil }
        let cloud = try DeviceCloudKey.open(try CloudLocation.backend(link.location), for: store)
        return SyncEngine(store: store, cloud: cloud, logger: logger)
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
                let (pulled, held) = try CloudPull(engine: self).run()
                awaited.withLock { $0 = held.awaited }
                let push = CloudPush(engine: self)
                let report = Report(pulled: pulled, pushed: try push.push() + push.pushPlainFiles())
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

    // MARK: Building blocks

    func requireLink() throws -> CloudLinkState {
        guard let link = try store.cloudLink() else { throw SyncError.notLinked }
        return link
    }

    func record(_ update: (inout CloudLinkState) -> Void) throws {
        try store.write { writer in
            guard var link = try writer.ledger.cloudLink() else { return }
            update(&link)
            try writer.ledger.setCloudLink(link)
        }
    }

    func deviceName(_ id: DeviceID) -> String {
        if let name = deviceNames.withLock({ $0[id] }) { return name }
        let devices = (try? cloud.devices().readable) ?? []
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
        try FileLock.withExclusiveLock(on: store.layout.syncLock.path, body)
    }
}
