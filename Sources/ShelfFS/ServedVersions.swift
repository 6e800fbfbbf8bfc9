import Synchronization
import ShelfModel

/// What the mount has shown of each item, for the two questions a change from elsewhere
/// raises while programs hold the old bytes:
///
/// - **Which versions a writer may have read.** The versions of each item whose bytes were
///   handed to readers since this mount last saved it. A save is merged against the one its
///   bytes came from (``ItemCommitter``), so a program that read a file before a change from
///   elsewhere arrived does not undo that change by writing back what it read. The kernel can
///   only hold pages of bytes the mount served, so these are all the versions a reader can
///   have seen here; a save starts the list again with the version it made.
/// - **Which size the kernel holds.** The version of each item inode whose size the kernel was
///   last given. Until the kernel drops its copy (the change follower's invalidation) it cuts
///   every read at that size, so reads serve that version's bytes: a reader never gets a newer
///   version cut short, and what it writes back never loses its end.
final class ServedVersions: Sendable {
    /// How many versions are remembered per item; older ones are unlikely bases and, if one is,
    /// the save keeps the other side as a conflict copy instead of merging.
    private static let kept = 4
    private struct State {
        var servedByItem: [ItemID: [Int64]] = [:]
        var sizedByInode: [UInt64: Int64] = [:]
    }
    private let state = Mutex(State())

    /// A read of item `id` was answered with the bytes of `version`.
    func served(_ id: ItemID, version: Int64) {
        state.withLock { state in
            var list = state.servedByItem[id, default: []]
            guard list.last != version else { return }
            list.removeAll { $0 == version }
            list.append(version)
            if list.count > Self.kept { list.removeFirst(list.count - Self.kept) }
            state.servedByItem[id] = list
        }
    }

    /// This mount saved item `id` at `version` through `inode`, whose size in the kernel is the
    /// saved bytes'. `startsAgain`: from now on its writers start from there; an emptied file
    /// is more likely the middle of an editor's save, whose bytes come from what was read.
    func saved(_ id: ItemID, version: Int64, through inode: UInt64?, startsAgain: Bool) {
        if !startsAgain { served(id, version: version) }
        state.withLock { state in
            if startsAgain { state.servedByItem[id] = [version] }
            if let inode { state.sizedByInode[inode] = version }
        }
    }

    /// The versions of item `id` readers may hold, oldest first.
    func versions(of id: ItemID) -> [Int64] {
        state.withLock { $0.servedByItem[id] ?? [] }
    }

    /// The kernel was given the size of `version` for item inode `inode`.
    func sized(_ inode: UInt64, as version: Int64) {
        sized([(inode, version)])
    }

    /// The kernel was given the sizes of these item inodes' versions (a listing).
    func sized(_ entries: [(inode: UInt64, version: Int64)]) {
        guard !entries.isEmpty else { return }
        state.withLock { state in
            for (inode, version) in entries { state.sizedByInode[inode] = version }
        }
    }

    /// The version whose size the kernel holds for `inode`, if it was given one.
    func sizedVersion(of inode: UInt64) -> Int64? {
        state.withLock { $0.sizedByInode[inode] }
    }

    /// The kernel forgot `inode`.
    func forget(_ inode: UInt64) {
        _ = state.withLock { $0.sizedByInode.removeValue(forKey: inode) }
    }
}
