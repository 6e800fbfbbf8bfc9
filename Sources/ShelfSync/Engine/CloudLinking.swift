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
        try store.write { try $0.ledger.setCloudLink(link) }
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
        try store.write { try $0.ledger.removeCloudLink() }
    }
}
