import Foundation
import ShelfModel
import ShelfStore

/// Items' cloud histories as this device knows them, inside one store transaction: which
/// change was made on top of which, and their nearest common ancestors (``ChangeApplier``
/// merges against them). Each change is decoded, and each depth read, once per transaction:
/// merges walk the same stretch of a history again and again. It lives as long as its
/// transaction, so it never holds a change the store lost to a rollback.
final class ChangeHistory {
    private let writer: StoreWriter
    private var decoded: [ChangeID: CloudChange] = [:]
    private var generations: [ChangeID: Int] = [:]

    init(writer: StoreWriter) { self.writer = writer }

    /// The change `id`, if this device knows it.
    func known(_ id: ChangeID) throws -> CloudChange? {
        if let change = decoded[id] { return change }
        let change = try writer.ledger.cloudChange(id)
        if let change { decoded[id] = change }
        return change
    }

    /// Keeps `change` in the ledger: known from now on.
    func remember(_ change: CloudChange) throws {
        try writer.ledger.remember(change)
        decoded[change.id] = change
    }

    /// Those of `changes` that no other of them contains, oldest first.
    func heads(among changes: [CloudChange]) throws -> [CloudChange] {
        var candidates: [CloudChange] = []
        for change in changes where !candidates.contains(where: { $0.id == change.id }) { candidates.append(change) }
        let heads = try candidates.filter { candidate in
            try !candidates.contains { other in
                guard other.id != candidate.id else { return false }
                return try isAncestor(candidate.id, of: other)
            }
        }
        return heads.sorted { $1.isNewer(than: $0) }
    }

    /// The changes `id` was made on top of, as far as this device knows (``CloudChange/parents``).
    private func parents(of id: ChangeID) throws -> [ChangeID] {
        try knownParents(of: id) ?? []
    }

    /// The changes `id` was made on top of; nil for a change not known here.
    private func knownParents(of id: ChangeID) throws -> [ChangeID]? {
        if id.contains("~") { return CloudChange.edits(in: id) }
        return try known(id)?.parents
    }

    /// The changes both `first` and `second` are or were made on top of, of which none is
    /// another's ancestor. Walks both histories at once, deepest changes first, and stops once
    /// everything still to visit lies below a common ancestor found: the walk covers the edits
    /// since the two sides parted, not the item's whole history (as git's merge-base does).
    func nearestCommonAncestors(_ first: ChangeID, _ second: ChangeID) throws -> [ChangeID] {
        var reached: [ChangeID: Reach] = [first: .first]
        reached[second, default: []].insert(.second)
        // Ordered by generation, deepest last; a change's parents are all shallower, so a change
        // leaves the queue only after every reached change made on top of it.
        var queue: [(generation: Int, id: ChangeID)] = []
        func enqueue(_ id: ChangeID) throws {
            let generation = try generation(of: id)
            let index = queue.firstIndex { $0.generation > generation } ?? queue.endIndex
            queue.insert((generation, id), at: index)
        }
        for id in Set([first, second]) { try enqueue(id) }
        var nearest: [ChangeID] = []
        while queue.contains(where: { !reached[$0.id, default: []].contains(.belowCommon) }) {
            let id = queue.removeLast().id
            var reach = reached[id, default: []]
            if reach.isSuperset(of: [.first, .second]), !reach.contains(.belowCommon) {
                nearest.append(id)
                reach.insert(.belowCommon)
            }
            for parent in try parents(of: id) {
                if reached[parent] == nil { try enqueue(parent) }
                reached[parent, default: []].formUnion(reach)
            }
        }
        return nearest
    }

    /// Which sides of a common-ancestor walk reached a change.
    private struct Reach: OptionSet {
        let rawValue: UInt8
        static let first = Reach(rawValue: 1)
        static let second = Reach(rawValue: 2)
        /// Below a common ancestor already found: not a nearest one.
        static let belowCommon = Reach(rawValue: 4)
    }

    /// A change's depth in its item's history as this device knows it: one more than its
    /// deepest parent's (1 without known parents; 0 for a change not known here). Every
    /// ancestor of a change is shallower, which lets walks stop early. Computed once per change
    /// and kept in the ledger.
    private func generation(of id: ChangeID) throws -> Int {
        if let known = generations[id] { return known }
        if let stored = try writer.ledger.changeGeneration(id) {
            generations[id] = stored
            return stored
        }
        var computed: [ChangeID: Int] = [:]
        var stack = [id]  // iterative: histories run deeper than the call stack
        while let next = stack.last {
            guard computed[next] == nil else {
                stack.removeLast()
                continue
            }
            guard let parents = try knownParents(of: next) else {
                computed[next] = 0
                continue
            }
            var deepest = 0
            var unknown: [ChangeID] = []
            for parent in parents {
                if let generation = try computed[parent] ?? writer.ledger.changeGeneration(parent) {
                    deepest = max(deepest, generation)
                } else {
                    unknown.append(parent)
                }
            }
            guard unknown.isEmpty else {
                stack += unknown
                continue
            }
            computed[next] = deepest + 1
            try writer.ledger.setChangeGeneration(next, deepest + 1)
        }
        return computed[id] ?? 0
    }

    /// Whether `ancestor` is among the changes `change` was made on top of, through the
    /// changes this device knows.
    func isAncestor(_ ancestor: ChangeID, of change: CloudChange) throws -> Bool {
        let depth = try generation(of: ancestor)
        var pending = change.parents
        var seen = Set<ChangeID>()
        while let next = pending.popLast() {
            if next == ancestor { return true }
            // What is no deeper than `ancestor` cannot have been made on top of it.
            guard seen.insert(next).inserted, try generation(of: next) > depth else { continue }
            pending += try parents(of: next)
        }
        return false
    }
}
