import Foundation
import Synchronization
import ShelfModel

/// The file bytes of the latest saves through the mount, for the reads that follow them.
///
/// The kernel does not keep what a program wrote through FUSE: a page written in part is not
/// marked up to date, so the first read after a save (an editor reloading, a tool re-indexing
/// the changed file, the next `sed -i`) comes back to the daemon. The store would answer it with
/// a read transaction whose cached pages the save has just made stale, several times the cost
/// of the request itself; these bytes answer it from memory.
///
/// An entry serves only the version it was saved as, so a change from elsewhere (a newer
/// version in the index) is never hidden by it. Bounded by ``capacity`` bytes, oldest save
/// dropped first; a file over a quarter of it is not kept.
///
/// A second one keeps the large files read lately (``FileContent``'s reads), which the
/// store could otherwise only serve range by range at a cost that grows with the offset.
final class RecentSaves: Sendable {
    /// Total bytes kept by default: the saves of a busy editing session, a few MB at most.
    static let capacity = 4 << 20

    let capacity: Int

    init(capacity: Int = RecentSaves.capacity) {
        self.capacity = capacity
    }

    private struct Saved {
        var version: Int64
        var content: Data
        /// The position of this save in `order`, telling it from an older save of the same item.
        var sequence: UInt64
    }

    private struct State {
        var saved: [ItemID: Saved] = [:]
        /// Saves, oldest first, from `head` on; entries whose sequence no longer matches were
        /// replaced by a newer save of their item.
        var order: [(id: ItemID, sequence: UInt64)] = []
        var head = 0
        var nextSequence: UInt64 = 0
        var total = 0
    }

    private let state = Mutex(State())

    /// Keeps `content` as what `id` shows at `version`.
    func keep(_ id: ItemID, version: Int64, content: Data) {
        let size = content.count
        state.withLock { state in
            if let old = state.saved.removeValue(forKey: id) { state.total -= old.content.count }
            guard size <= capacity / 4 else { return }
            state.saved[id] = Saved(version: version, content: content, sequence: state.nextSequence)
            state.order.append((id, state.nextSequence))
            state.nextSequence += 1
            state.total += size
            while state.total > capacity { Self.dropOldest(&state) }
            Self.compact(&state)
        }
    }

    /// The bytes `id` shows at `version`, if that is the version last saved here.
    func content(of id: ItemID, version: Int64) -> Data? {
        state.withLock { state in
            guard let saved = state.saved[id], saved.version == version else { return nil }
            return saved.content
        }
    }

    /// Drops the order's dead entries (dropped, or replaced by a newer save of their item) once
    /// they outnumber the live ones, so an item saved over and over does not grow it.
    private static func compact(_ state: inout State) {
        guard state.order.count - state.head > 2 * state.saved.count + 64 else { return }
        let saved = state.saved
        state.order = state.order[state.head...].filter { saved[$0.id]?.sequence == $0.sequence }
        state.head = 0
    }

    private static func dropOldest(_ state: inout State) {
        let (id, sequence) = state.order[state.head]
        state.head += 1
        guard let saved = state.saved[id], saved.sequence == sequence else { return }
        state.saved[id] = nil
        state.total -= saved.content.count
    }
}
