import Synchronization
import ShelfModel

/// Items deleted through the mount a moment ago, by the path they had. git's checkout, stash and
/// branch switches, `rm x; cp y x` and rsync `--delete-before` replace a file by unlink + create:
/// a file created at such a path within ``window`` is that item again (``ItemCommitter``), so a
/// note without an `id:` line keeps its id and history and leaves no trash entry behind.
final class RecentUnlinks: Sendable {
    /// How long a deleted item's path stays claimable: long enough for git or rsync to get from
    /// the unlink of a tree's files to their creation, short enough that a note written by
    /// hand much later at an old name is a new one.
    static let window: Duration = .seconds(60)

    private struct State {
        var byPath: [MountPath: (id: ItemID, at: ContinuousClock.Instant)] = [:]
        /// Paths in the order they were deleted, so expired ones leave without a scan.
        var order: [(path: MountPath, at: ContinuousClock.Instant)] = []
        var expired = 0
    }

    private let state = Mutex(State())
    private let now: @Sendable () -> ContinuousClock.Instant

    init(now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.now = now
    }

    /// Item `id` was deleted through the mount from `path`.
    func deleted(_ id: ItemID, at path: MountPath) {
        let time = now()
        state.withLock { state in
            Self.dropExpired(before: time - Self.window, from: &state)
            state.byPath[path] = (id, time)
            state.order.append((path, time))
        }
    }

    /// The item deleted from `path` within the window, if any (it may have come back since).
    func item(deletedAt path: MountPath) -> ItemID? {
        let time = now()
        return state.withLock { state in
            guard let entry = state.byPath[path], entry.at >= time - Self.window else { return nil }
            return entry.id
        }
    }

    private static func dropExpired(before limit: ContinuousClock.Instant, from state: inout State) {
        while state.expired < state.order.count, state.order[state.expired].at < limit {
            let (path, at) = state.order[state.expired]
            if state.byPath[path]?.at == at { state.byPath[path] = nil }
            state.expired += 1
        }
        // Compact once the expired prefix is most of the array, so the work stays amortised O(1).
        if state.expired > 64, state.expired * 2 > state.order.count {
            state.order.removeFirst(state.expired)
            state.expired = 0
        }
    }
}
