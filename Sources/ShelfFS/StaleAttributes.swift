import Synchronization

/// The inodes whose attributes the kernel holds as stale: it marks a file so after every read
/// and write it sends (even on a `noatime` mount) and asks `getattr` at the file's next `stat`.
///
/// A listing naming such a file is worth a `readdirplus`, which refreshes the attributes of
/// every name it lists; a listing naming none can be served from the kernel's cached copy
/// without asking the mount at all.
final class StaleAttributes: Sendable {
    private let inodes = Mutex<Set<UInt64>>([])

    /// The kernel got bytes of `inode` from the mount (a read or a write was answered).
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

    /// Whether any of `listed` is stale in the kernel.
    func containsAny(_ listed: some Sequence<UInt64>) -> Bool {
        inodes.withLock { inodes in !inodes.isEmpty && listed.contains(where: inodes.contains) }
    }
}
