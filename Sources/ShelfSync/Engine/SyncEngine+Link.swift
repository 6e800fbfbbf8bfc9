import Foundation
import Logging
import ShelfModel
import ShelfStore
import Synchronization

/// Checking the cloud is still the one linked to (``CloudLinking`` links and unlinks), and what
/// is left to upload.
extension SyncEngine {
    /// Throws unless the cloud is the one this library linked to, or one it met and joined.
    func checkIdentity() throws {
        let link = try requireLink()
        let identity = try cloud.identity()
        guard try identity.cloud == link.cloud || joinsCloudThatMet(identity, link) else {
            throw CloudError.differentCloud(location: cloud.location, expected: link.cloud, found: identity.cloud)
        }
        if identity.isEncrypted && !cloud.sealing.isSealed { throw SyncError.noKeyHere(location: cloud.location) }
        if !identity.isEncrypted && cloud.sealing.isSealed { throw SyncError.notEncrypted(location: cloud.location) }
    }

    /// Two devices that linked to one shared folder before either's cloud reached the other
    /// each made one; the file-sync tool kept one identity and set the other aside. The device
    /// whose identity was set aside (its own record beside it proves the folder is the one it
    /// wrote to) joins the one kept: every device's log and bytes are in that one folder, so
    /// nothing splits or is lost — as if it had joined the other's cloud with its library.
    /// Encrypted clouds made so cannot join: each has its own key.
    private func joinsCloudThatMet(_ kept: CloudIdentity, _ link: CloudLinkState) throws -> Bool {
        guard !cloud.sealing.isSealed, try cloud.identitiesSetAside().contains(where: { $0.cloud == link.cloud }),
              try cloud.devices().readable.contains(where: { $0.id == link.device }) else { return false }
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
                return local.state.needsPush(since: try writer.ledger.syncedCloudChange(of: id))
            }.count
        }
    }
}
