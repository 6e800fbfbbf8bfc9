import Synchronization
import FuseKit

/// What the kernel caches of the mount, as far as the mount can tell: invalidations go to the
/// session's notifier once mounted (before that the kernel caches nothing), and the attributes
/// they drop count as stale until the kernel gets them again.
final class KernelCache: Sendable {
    let staleAttributes = StaleAttributes()
    private let notifier = Mutex<Notifier?>(nil)

    /// Sends invalidations to `notifier` (the mounted session's) from now on.
    func attach(_ notifier: Notifier) {
        self.notifier.withLock { $0 = notifier }
    }

    /// Waits (a while at most) until the kernel has received every invalidation queued so far.
    /// Never from a request handler.
    func waitUntilDelivered() {
        notifier.withLock { $0 }?.waitUntilIdle(timeout: .seconds(2))
    }

    /// Queues `invalidation` for the kernel (safe from request handlers: it only queues).
    func invalidate(_ invalidation: Notifier.Invalidation) {
        switch invalidation {
        case .content(let inode), .attributes(let inode): staleAttributes.markStale(inode.rawValue)
        case .entry, .deletion: break
        }
        notifier.withLock { $0 }?.submit(invalidation)
    }

    /// `name` appeared in folder `parent` (nil: a folder the kernel does not hold, so it
    /// caches nothing of it): the kernel drops a cached "no such file" for the name, and the
    /// folder's cached listing.
    func nameAppeared(_ name: String, in parent: UInt64?) {
        guard let parent else { return }
        invalidate(.entry(parent: Inode(parent), name: name))
        invalidate(.content(Inode(parent)))
    }

    /// `name` in folder `parent` no longer stands for what the kernel holds: the folder's
    /// cached listing goes, and the name — as a deletion of `deleted` when given, which tells
    /// watchers, else as an entry to look up again (another file took the name, or none).
    func nameLeft(_ name: String, in parent: UInt64?, deleted: UInt64? = nil) {
        guard let parent else { return }
        invalidate(.content(Inode(parent)))
        if let deleted {
            invalidate(.deletion(parent: Inode(parent), child: Inode(deleted), name: name))
        } else {
            invalidate(.entry(parent: Inode(parent), name: name))
        }
    }
}
