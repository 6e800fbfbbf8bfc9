import Synchronization
import ShelfModel

/// The versions of each item whose bytes this mount has handed to readers since its last save
/// of that item: what a program that now writes the file may have read. A save is merged
/// against the one its bytes came from (``ItemCommitter``), so a program that read a file
/// before a change from elsewhere arrived does not undo that change by writing back what it
/// read.
///
/// The kernel can only hold pages of bytes the mount served, so these are all the versions a
/// reader can have seen through this mount. A save through the mount starts the list again
/// with the version it made: the writer holds those bytes.
final class ServedVersions: Sendable {
    /// How many versions are remembered per item; older ones are unlikely bases and, if one is,
    /// the save keeps the other side as a conflict copy instead of merging.
    private static let kept = 4
    private let versions = Mutex<[ItemID: [Int64]]>([:])

    /// A read of item `id` was answered with the bytes of `version`.
    func served(_ id: ItemID, version: Int64) {
        versions.withLock { versions in
            var list = versions[id, default: []]
            guard list.last != version else { return }
            list.removeAll { $0 == version }
            list.append(version)
            if list.count > Self.kept { list.removeFirst(list.count - Self.kept) }
            versions[id] = list
        }
    }

    /// This mount saved item `id` at `version`: from now on its writers start from there.
    func saved(_ id: ItemID, version: Int64) {
        versions.withLock { $0[id] = [version] }
    }

    /// The versions of item `id` readers may hold, oldest first.
    func versions(of id: ItemID) -> [Int64] {
        versions.withLock { $0[id] ?? [] }
    }
}
