import Synchronization
import ShelfModel
import ShelfStore

/// The owners of item files that are not the mount's (``FileOwner``), as the store keeps them,
/// in memory so that `stat` and listings read no database. Loaded at mount; the mount is what
/// changes them (`chown`, a file another user creates), so it updates both. Its lock is a leaf.
final class ItemFileOwners: Sendable {
    private let owners: Mutex<[ItemID: FileOwner]>

    init(_ owners: [ItemID: FileOwner]) {
        self.owners = Mutex(owners)
    }

    func owner(of id: ItemID) -> FileOwner? {
        owners.withLock { $0[id] }
    }

    /// `owner` of `id` (nil: the mount's owner), just stored.
    func set(_ owner: FileOwner?, of id: ItemID) {
        owners.withLock { $0[id] = owner }
    }
}
