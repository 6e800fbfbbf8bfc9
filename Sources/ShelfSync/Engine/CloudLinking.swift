import Foundation
import ShelfModel
import ShelfStore

/// Linking a library to a cloud, as a new device of it, and unlinking it.
public enum CloudLinking {
    /// Links `store` to the cloud at `cloud`: creates one in a new or empty place, or joins the
    /// one there. Nothing moves until the first sync, which brings the cloud's items here and
    /// uploads this library's.
    ///
    /// A cloud a file-sync tool is still bringing is waited for, up to `wait`, with `progress`
    /// told every few seconds: where parts of one are there already, or with `join` (the user
    /// says another device made it) in an empty place too. Two devices that each make a cloud
    /// in one shared folder anyway are joined when they meet (``SyncEngine/checkIdentity()``).
    /// `downloadAll`: fetch every item's bytes as they arrive instead of on first read.
    ///
    /// `encrypt` makes the new cloud an encrypted one (joining a plain cloud is refused then).
    /// `passphrase` is asked only where a passphrase is needed, and for what: to choose one for a
    /// new encrypted cloud, or to open one there (where a recovery key does as well), `--encrypt`
    /// or not; the unwrapped data key is kept in the library (``DeviceCloudKey``).
    @discardableResult
    public static func link(_ store: LibraryStore, to cloud: any CloudBackend, deviceName: String,
                            downloadAll: Bool = false, cacheLimit: Int? = nil, join: Bool = false,
                            encrypt: Bool = false, passphrase: ((PassphraseRequest) throws -> String)? = nil,
                            wait: TimeInterval = 600, progress: (String) -> Void = { _ in }) throws -> LinkedCloud {
        if let link = try store.cloudLink() { throw SyncError.alreadyLinked(location: link.location) }
        return try makeLink(store, to: cloud, deviceName: deviceName, downloadAll: downloadAll, cacheLimit: cacheLimit,
                            join: join, encrypt: encrypt, passphrase: passphrase, wait: wait,
                            progress: progress, replacing: false)
    }

    /// The link itself, once it is known whether one is there: `replacing` forgets it in the
    /// write that records the new one. A key kept for the new cloud goes again when linking
    /// fails, so a library never holds a key its link does not use.
    private static func makeLink(_ store: LibraryStore, to cloud: any CloudBackend, deviceName: String, downloadAll: Bool,
                                 cacheLimit: Int?, join: Bool, encrypt: Bool, passphrase: ((PassphraseRequest) throws -> String)?,
                                 wait: TimeInterval, progress: (String) -> Void,
                                 replacing: Bool) throws -> LinkedCloud {
        guard CloudInputRules.isDeviceName(deviceName) else { throw SyncError.invalidDeviceName(deviceName) }
        let identity: CloudIdentity
        var dataKey: CloudDataKey?
        var recoveryKey: RecoveryKey?
        if let arrived = try arrivedIdentity(of: cloud, join: join, wait: wait, progress: progress) {
            identity = arrived
            if encrypt && !arrived.isEncrypted { throw SyncError.plainCloudThere(location: cloud.location) }
            if arrived.isEncrypted {
                guard let passphrase else { throw SyncError.passphraseNeeded(location: cloud.location) }
                dataKey = try cloud.keyEnvelopes().unlock(with: try passphrase(.open), cloud: arrived.cloud)
            }
        } else if encrypt {
            guard let passphrase else { throw SyncError.passphraseNeeded(location: cloud.location) }
            identity = CloudIdentity(format: CloudIdentity.encryptedFormat)
            let keys = try NewCloudKeys(cloud: identity.cloud, passphrase: try passphrase(.choose))
            try cloud.create(identity, keys: keys.envelopes)
            dataKey = keys.dataKey
            recoveryKey = keys.recoveryKey
        } else {
            identity = CloudIdentity()
            try cloud.create(identity)
        }
        let device = DeviceRecord(id: UUID().uuidString.lowercased(), name: deviceName)
        let link = CloudLinkState(location: cloud.location, cloud: identity.cloud, device: device.id,
                                  deviceName: deviceName, cursor: try CloudCoding.encoder.encode(CloudCursor()),
                                  nextBatch: 1, pushedSequence: 0, linked: Date(), downloadAll: downloadAll,
                                  cacheLimit: cacheLimit)
        let sealed = dataKey.map { cloud.sealed(by: CloudSealing(dataKey: $0, cloud: identity.cloud)) } ?? cloud
        do {
            if let dataKey { try DeviceCloudKey.save(dataKey, cloud: identity.cloud, in: store) }
            try sealed.register(device)
            try store.write { transaction in
                if replacing { try transaction.ledger.removeCloudLink(keepingPins: true) }
                try transaction.ledger.setCloudLink(link)
            }
        } catch {
            // A library left unlinked keeps no key.
            try? DeviceCloudKey.remove(from: store)
            throw error
        }
        return LinkedCloud(state: link, cloud: sealed, recoveryKey: recoveryKey)
    }

    /// The identity of the cloud at `cloud`, once it is there (an encrypted one's with its
    /// keys); nil for a new or empty place where a cloud is to be made (never with `join`).
    private static func arrivedIdentity(of cloud: any CloudBackend, join: Bool, wait: TimeInterval,
                                        progress: (String) -> Void) throws -> CloudIdentity? {
        let start = Date()
        var lastSaid = Date.distantPast
        while true {
            do {
                let identity = try cloud.identity()
                // An encrypted cloud's keys may reach this folder after its identity.
                if try !identity.isEncrypted || cloud.keyEnvelopes().contains(where: { $0.kind == .passphrase }) { return identity }
            } catch CloudError.missing, CloudError.empty {
                if !join { return nil }
            } catch CloudError.arriving {}
            let waited = Date().timeIntervalSince(start)
            guard waited < wait else { throw SyncError.cloudDidNotArrive(location: cloud.location, seconds: Int(wait)) }
            if Date().timeIntervalSince(lastSaid) >= progressInterval {
                lastSaid = Date()
                progress("waiting for the cloud to arrive at \(cloud.location) (\(Int(waited)) s of at most \(Int(wait)) s; a file-sync tool may still be bringing it)…")
            }
            Thread.sleep(forTimeInterval: arrivalPoll)
        }
    }

    /// How often a link waiting for a cloud looks, and says it still waits.
    private static let arrivalPoll: TimeInterval = 0.2
    private static let progressInterval: TimeInterval = 5

    /// Forgets the link, and the key of an encrypted cloud; the library keeps every item as it is.
    public static func unlink(_ store: LibraryStore) throws {
        guard try store.cloudLink() != nil else { throw SyncError.notLinked }
        try store.write { try $0.ledger.removeCloudLink() }
        try DeviceCloudKey.remove(from: store)
    }
}

/// What a link asks a passphrase for: to choose one for a new encrypted cloud (a prompt asks it
/// twice), or to open the encrypted cloud there (asked once; its recovery key does as well).
public enum PassphraseRequest: Sendable {
    case choose, open
}

/// A library just linked: its link, the cloud as it reads and writes it (sealed, for an
/// encrypted cloud), and the recovery key of an encrypted cloud it made, to show once.
public struct LinkedCloud {
    public let state: CloudLinkState
    public let cloud: any CloudBackend
    public let recoveryKey: RecoveryKey?
}

/// What only an encrypted cloud has: its passphrase, and the move of a plain cloud to one.
extension CloudLinking {
    /// Changes the passphrase of the encrypted cloud `store` is linked to (`cloud`, as located):
    /// the data key this library holds is wrapped anew under the next number, and the older
    /// passphrase envelopes go. Nothing is encrypted again, so a device that was offline keeps
    /// syncing with the key it holds.
    public static func changePassphrase(of store: LibraryStore, in cloud: any CloudBackend, to passphrase: String) throws {
        guard let link = try store.cloudLink() else { throw SyncError.notLinked }
        guard let (cloudID, key) = try DeviceCloudKey.load(from: store) else { throw SyncError.notEncryptedHere }
        let identity = try cloud.identity()
        guard identity.cloud == link.cloud, cloudID == link.cloud else {
            throw CloudError.differentCloud(location: cloud.location, expected: link.cloud, found: identity.cloud)
        }
        // The key here must be the cloud's: this device's own record opens with it.
        guard try cloud.sealed(by: CloudSealing(dataKey: key, cloud: cloudID)).devices().readable.contains(where: { $0.id == link.device }) else {
            throw CloudKeyError.notAKey
        }
        let number = (try cloud.keyEnvelopes().newestPassphrase?.number ?? 0) + 1
        try cloud.putPassphraseEnvelope(try .passphrase(passphrase, number: number, wrapping: key, cloud: cloudID))
    }

    /// Moves `store` from the plain cloud it is linked to onto a new encrypted cloud it makes at
    /// `cloud` (clouds are write-once, so a plain one never turns encrypted). The old link goes
    /// only in the write that records the new one: a failure before leaves the library linked as
    /// it was, and the old cloud is never written. Every item must be here, for the old cloud is
    /// not asked again; the caller then syncs, which uploads every item, and writes a snapshot.
    public static func moveToEncryptedCloud(_ store: LibraryStore, at cloud: any CloudBackend, deviceName: String? = nil,
                                            passphrase: String) throws -> LinkedCloud {
        let old = try checkMoveToEncryptedCloud(store, at: cloud)
        let notDownloaded = try store.placeholderIDs().count
        guard notDownloaded == 0 else { throw SyncError.notDownloaded(count: notDownloaded) }
        return try makeLink(store, to: cloud, deviceName: deviceName ?? old.deviceName, downloadAll: old.downloadAll,
                            cacheLimit: old.cacheLimit, join: false, encrypt: true, passphrase: { _ in passphrase },
                            wait: 0, progress: { _ in }, replacing: true)
    }

    /// The link `store` would leave for a new encrypted cloud at `cloud`; throws when there is
    /// none, when its cloud is encrypted already, or when `cloud` is not a new or empty place. A
    /// command asks this before the passphrase and the downloads a move needs.
    public static func checkMoveToEncryptedCloud(_ store: LibraryStore, at cloud: any CloudBackend) throws -> CloudLinkState {
        guard let link = try store.cloudLink() else { throw SyncError.notLinked }
        guard !DeviceCloudKey.isHeld(by: store) else { throw SyncError.alreadyEncrypted(location: link.location) }
        do {
            _ = try cloud.identity()
            throw SyncError.notANewPlace(location: cloud.location)
        } catch CloudError.missing, CloudError.empty {
            return link
        } catch CloudError.arriving {
            throw SyncError.notANewPlace(location: cloud.location)
        }
    }
}
