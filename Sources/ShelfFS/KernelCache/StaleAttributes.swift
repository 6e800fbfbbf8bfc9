import Synchronization

/// The inodes whose attributes the kernel holds as stale: it marks a file so after every read
/// and write it sends (even on a `noatime` mount) and after an invalidation, and asks `getattr`
/// at the file's next `stat`.
///
/// A listing naming many such files is worth a `readdirplus`, which refreshes the attributes
/// of every name it lists; a listing naming few can be served from the kernel's cached copy
/// without asking the mount at all.
final class StaleAttributes: Sendable {
    private let inodes = Mutex<Set<UInt64>>([])

    /// The kernel holds `inode`'s attributes as stale: it got bytes of it from the mount (a read
    /// or a write was answered), or was told to drop them.
    func markStale(_ inode: UInt64) {
        _ = inodes.withLock { $0.insert(inode) }
    }

    /// The kernel got fresh attributes of these inodes (lookup, getattr, readdirplus, setattr).
    func refreshed(_ refreshed: some Sequence<UInt64>) {
        inodes.withLock { inodes in
            guard !inodes.isEmpty else { return }
            for inode in refreshed { inodes.remove(inode) }
        }
    }

    /// The kernel forgot `inode`: it holds none of its attributes any more.
    func forgotten(_ inode: UInt64) {
        _ = inodes.withLock { $0.remove(inode) }
    }

    /// For each of `inodes`, whether it is stale in the kernel.
    func areStale(_ inodes: [UInt64]) -> [Bool] {
        self.inodes.withLock { stale in
            stale.isEmpty ? Array(repeating: false, count: inodes.count) : inodes.map(stale.contains)
        }
    }

    /// Whether at least `count` of `listed` (one or more) are stale in the kernel.
    func contains(atLeast count: Int, of listed: some Sequence<UInt64>) -> Bool {
        inodes.withLock { inodes in
            guard inodes.count >= count else { return false }
            var found = 0
            for inode in listed where inodes.contains(inode) {
                found += 1
                if found == count { return true }
            }
            return false
        }
    }
}
