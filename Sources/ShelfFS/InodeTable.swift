import Foundation
import Synchronization
import ShelfModel

/// What an inode stands for.
enum NodeKey: Hashable, Sendable {
    /// A real file, folder or symlink in the plain-file area (the root and `Books/` included).
    case plain(MountPath)
    /// A live or recently trashed item, by identity: renames keep the inode.
    case item(ItemID)
    /// An item file created through the mount that has not been saved yet.
    case newItemFile(UUID)
    /// The status folder (`name` empty) or one of its files.
    case status(name: String)
}

/// Inode numbers and the kernel's lookup counts.
///
/// Items keep their number for the life of the mount (the kernel may forget and look up again
/// and still see the same file); plain entries are dropped when the kernel forgets them, so the
/// table grows with what the kernel holds plus the number of items ever looked up — never with
/// open files, because Shelf holds no descriptor per item.
final class InodeTable: Sendable {
    static let rootInode: UInt64 = 1

    /// One inode: what it stands for and how many lookups the kernel holds. A folder listing
    /// keeps the nodes of its names, so counting the lookups a `readdirplus` batch hands out
    /// needs no search. Mutable state is guarded by the table's lock.
    final class Node: @unchecked Sendable {
        let inode: UInt64
        fileprivate var key: NodeKey
        fileprivate var lookups: UInt64 = 0
        /// When the kernel last got this inode's entry (a lookup or a `readdirplus` entry).
        fileprivate var entrySent: ContinuousClock.Instant?
        /// False once dropped from the table (the kernel forgot it, or its name went away).
        fileprivate var isInTable = true

        fileprivate init(inode: UInt64, key: NodeKey, lookups: UInt64 = 0) {
            self.inode = inode
            self.key = key
            self.lookups = lookups
        }
    }

    private struct State {
        var nodes: [UInt64: Node]
        var byKey: [NodeKey: Node]
        var next: UInt64 = InodeTable.rootInode + 1
        /// Changes whenever a key gets another inode or loses one (see ``generation``).
        var generation: UInt64 = 0

        init() {
            let root = Node(inode: InodeTable.rootInode, key: .plain(.root), lookups: 1)
            nodes = [InodeTable.rootInode: root]
            byKey = [.plain(.root): root]
        }
    }

    private let state = Mutex(State())

    /// Changes whenever the numbering of any key changes: a listing of nodes made at one
    /// generation is still right at the same generation.
    var generation: UInt64 { state.withLock { $0.generation } }

    func key(of inode: UInt64) -> NodeKey? {
        state.withLock { $0.nodes[inode]?.key }
    }

    /// The inode of `key`, numbered now if it has none.
    func inode(for key: NodeKey) -> UInt64 {
        state.withLock { state in Self.node(for: key, in: &state).inode }
    }

    /// The nodes of `keys` (numbered now where missing), under one lock: a listing's names.
    func nodes(for keys: [NodeKey]) -> [Node] {
        state.withLock { state in keys.map { Self.node(for: $0, in: &state) } }
    }

    private static func node(for key: NodeKey, in state: inout State) -> Node {
        if let known = state.byKey[key] { return known }
        let node = Node(inode: state.next, key: key)
        state.next += 1
        state.byKey[key] = node
        state.nodes[node.inode] = node
        return node
    }

    /// The kernel received one more entry for each of `nodes` (readdirplus entries that fit).
    /// A node dropped since its listing was made (the kernel forgot it meanwhile) is taken
    /// back, since the kernel now knows it again.
    func countLookups(_ nodes: [Node]) {
        let now = ContinuousClock.now
        state.withLock { state in
            for node in nodes {
                if !node.isInTable {
                    node.isInTable = true
                    state.nodes[node.inode] = node
                    if state.byKey[node.key] == nil { state.byKey[node.key] = node }
                    state.generation += 1
                }
                node.lookups += 1
                node.entrySent = now
            }
        }
    }

    /// For each of `nodes`, whether the kernel holds it with an entry it got at `instant` or later.
    func entriesSent(since instant: ContinuousClock.Instant, of nodes: [Node]) -> [Bool] {
        state.withLock { _ in
            nodes.map { node in node.lookups > 0 && node.entrySent.map { $0 >= instant } == true }
        }
    }

    /// The inode numbered for `key`, if any.
    func existingInode(for key: NodeKey) -> UInt64? {
        state.withLock { $0.byKey[key]?.inode }
    }

    /// The inode of `key` if the kernel holds it (lookup count above zero): only those need
    /// invalidation.
    func kernelInode(for key: NodeKey) -> UInt64? {
        state.withLock { state in
            guard let node = state.byKey[key], node.lookups > 0 else { return nil }
            return node.inode
        }
    }

    /// The kernel dropped `count` references to `inode`. Returns true when it no longer knows
    /// the inode at all.
    @discardableResult
    func forget(_ inode: UInt64, count: UInt64) -> Bool {
        state.withLock { state in
            guard inode != Self.rootInode, let node = state.nodes[inode] else { return false }
            node.lookups -= min(count, node.lookups)
            guard node.lookups == 0 else { return false }
            if !Self.keepsNumber(node.key) || state.byKey[node.key] !== node { Self.drop(node, from: &state) }
            return true
        }
    }

    /// Whether the kernel holds `inode` (its lookup count is above zero).
    func isKnownToKernel(_ inode: UInt64) -> Bool {
        state.withLock { ($0.nodes[inode]?.lookups ?? 0) > 0 }
    }

    /// `inode` now stands for `key` (a rename turned a temp file into an item, or moved a plain
    /// file). Whatever inode held `key` before keeps its old meaning only for programs still
    /// reading it.
    func rekey(_ inode: UInt64, to key: NodeKey) {
        state.withLock { state in
            guard let node = state.nodes[inode] else { return }
            if state.byKey[node.key] === node { state.byKey[node.key] = nil }
            node.key = key
            state.byKey[key] = node
            state.generation += 1
        }
    }

    /// The plain path `path` is gone (unlinked, or replaced by a rename).
    func detach(_ key: NodeKey) {
        state.withLock { state in
            guard let node = state.byKey.removeValue(forKey: key) else { return }
            state.generation += 1
            if node.lookups == 0 { Self.drop(node, from: &state) }
        }
    }

    /// The plain file at `from` is now at `to` (a rename of one file, not a folder): its inode
    /// follows it, and whatever inode `to` had stands for nothing.
    func renameFile(_ from: MountPath, to: MountPath) {
        state.withLock { state in
            if let replaced = state.byKey.removeValue(forKey: .plain(to)), replaced.lookups == 0 {
                Self.drop(replaced, from: &state)
            }
            guard let node = state.byKey.removeValue(forKey: .plain(from)) else { return }
            node.key = .plain(to)
            state.byKey[.plain(to)] = node
            state.generation += 1
        }
    }

    /// Moves every plain entry inside `from` under `to` (a folder rename).
    func renameFolder(_ from: MountPath, to: MountPath) {
        state.withLock { state in
            for node in state.nodes.values {
                guard case .plain(let path) = node.key, path.isInside(from) else { continue }
                let newKey = NodeKey.plain(path.replacingPrefix(from, with: to))
                if state.byKey[node.key] === node { state.byKey[node.key] = nil }
                node.key = newKey
                state.byKey[newKey] = node
            }
            state.generation += 1
        }
    }

    private static func drop(_ node: Node, from state: inout State) {
        state.nodes[node.inode] = nil
        if state.byKey[node.key] === node { state.byKey[node.key] = nil }
        node.isInTable = false
        state.generation += 1
    }

    private static func keepsNumber(_ key: NodeKey) -> Bool {
        if case .item = key { return true }
        return false
    }
}
