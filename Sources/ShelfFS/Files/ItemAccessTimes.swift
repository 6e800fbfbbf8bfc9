import Synchronization
import FuseKit
import ShelfModel

/// Access times set on item files (`utimensat`, `touch -a`, `tar`, `rsync --atimes`), kept
/// apart from the modification time for as long as the mount runs. The store keeps no access
/// time (reading never changes a record, and a time per read would be a write per read), so
/// an item shows its modification time as its access time until one is set, and again after
/// a remount. Its lock is a leaf.
final class ItemAccessTimes: Sendable {
    private let times = Mutex<[ItemID: FileTime]>([:])

    func set(_ time: FileTime, of id: ItemID) {
        times.withLock { $0[id] = time }
    }

    /// The access time set on `id`, if any.
    func time(of id: ItemID) -> FileTime? {
        times.withLock { $0[id] }
    }
}
