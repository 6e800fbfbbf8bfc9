import Foundation
import Glibc
import Logging
import ShelfModel
import ShelfStore
import Synchronization

/// Linking a library to a cloud and unlinking it, checking it is still the cloud linked to,
/// and what is left to upload.
extension SyncEngine {
    /// Links `store` to the cloud at `cloud`: creates one in a new or empty place, or joins the
    /// one there. Nothing moves until the first sync, which brings the cloud's items here and
    /// uploads this library's.
    ///
    /// A cloud a file-sync tool is still bringing is waited for, up to `wait`, with `progress`
    /// told every few seconds: where parts of one are there already, or with `join` (the user
    /// says another device made it) in an empty place too. Two devices that each make a cloud
    /// in one shared folder anyway are joined when they meet (``checkIdentity()``).
    /// `downloadAll`: fetch every item's bytes as they arrive instead of on first read.
    @discardableResult
    public static func link(_ store: LibraryStore, to cloud: any CloudBackend, deviceName: String,
                            downloadAll: Bool = false, cacheLimit: Int? = nil, join: Bool = false,
                            wait: TimeInterval = 600, progress: (String) -> Void = { _ in }) throws -> CloudLinkState {
        if let link = try store.cloudLink() { throw SyncError.alreadyLinked(location: link.location) }
        guard CloudInputRules.isDeviceName(deviceName) else { throw SyncError.invalidDeviceName(deviceName) }
        let identity: CloudIdentity
        if let arrived = try arrivedIdentity(of: cloud, join: join, wait: wait, progress: progress) {
            identity = arrived
        } else {
            identity = CloudIdentity()
            try cloud.create(identity)
        }
        let device = DeviceRecord(id: UUID().uuidString.lowercased(), name: deviceName)
        try cloud.register(device)
        let link = CloudLinkState(location: cloud.location, cloud: identity.cloud, device: device.id,
                                  deviceName: deviceName, cursor: try CloudCoding.encoder.encode(CloudCursor()),
                                  nextBatch: 1, pushedSequence: 0, linked: Date(), downloadAll: downloadAll,
                                  cacheLimit: cacheLimit)
        try store.write { try $0.setCloudLink(link) }
        return link
    }

    /// The identity of the cloud at `cloud`, once it is there; nil for a new or empty place
    /// where a cloud is to be made (never with `join`).
    private static func arrivedIdentity(of cloud: any CloudBackend, join: Bool, wait: TimeInterval,
                                        progress: (String) -> Void) throws -> CloudIdentity? {
        let start = Date()
        var lastSaid = Date.distantPast
        while true {
            do {
                return try cloud.identity()
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

    /// Forgets the link; the library keeps every item as it is.
    public static func unlink(_ store: LibraryStore) throws {
        guard try store.cloudLink() != nil else { throw SyncError.notLinked }
        try store.write { try $0.removeCloudLink() }
    }

    /// Throws unless the cloud is the one this library linked to, or one it met and joined.
    func checkIdentity() throws {
        let link = try requireLink()
        let identity = try cloud.identity()
        guard try identity.cloud == link.cloud || joinsCloudThatMet(identity, link) else {
            throw CloudError.differentCloud(location: cloud.location, expected: link.cloud, found: identity.cloud)
        }
    }

    /// Two devices that linked to one shared folder before either's cloud reached the other
    /// each made one; the file-sync tool kept one identity and set the other aside. The device
    /// whose identity was set aside (its own record beside it proves the folder is the one it
    /// wrote to) joins the one kept: every device's log and bytes are in that one folder, so
    /// nothing splits or is lost — as if it had joined the other's cloud with its library.
    private func joinsCloudThatMet(_ kept: CloudIdentity, _ link: CloudLinkState) throws -> Bool {
        guard try cloud.identitiesSetAside().contains(where: { $0.cloud == link.cloud }),
              try cloud.devices().contains(where: { $0.id == link.device }) else { return false }
        try record { $0.cloud = kept.cloud }
        logger.notice("the cloud this device made at \(cloud.location) met another made there before it arrived; joined that one (\(kept.cloud))")
        return true
    }

    /// Items changed here that the cloud has not heard of yet.
    public func pendingUploads() throws -> Int {
        guard let link = try store.cloudLink() else { return 0 }
        var ids = Set<ItemID>()
        var after = link.pushedSequence
        while true {
            let feed = try store.changes(after: after, limit: 10_000)
            guard let last = feed.last else { break }
            ids.formUnion(feed.map(\.id))
            after = last.sequence
        }
        return try store.write { writer in
            try ids.filter { id in
                guard let local = try ItemState.stored(id, in: writer) else { return false }
                return local.state.needsPush(since: try writer.syncedCloudChange(of: id))
            }.count
        }
    }
}
