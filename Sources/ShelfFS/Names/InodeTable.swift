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
/// Every name of one plain file with hard links is one inode, as the kernel expects of `link`:
/// a node has its first name as its key and any others as further names, and nodes of such
/// files are found by the real file's inode number (``node(for:sharing:)``).
///
/// Items keep their number for the life of the mount (the kernel may forget and look up again
/// and still see the same file) until a change from elsewhere gives them another (``detach(_:)``);
/// plain entries are dropped when the kernel forgets them, so the
/// table grows with what the kernel holds plus the number of items ever looked up — never with
/// open files, because Shelf holds no descriptor per item.
///
/// An inode whose file holds unsaved writes is never dropped, whatever the kernel forgets or a
/// name moves on to: its writes are saved into what it stands for, and a new file's name must
/// find them again. The table asks the buffers (`holdsWrites`) under its own lock when it would
/// drop one. Lock order: the table, then the buffer table and a buffer's state inside it.
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
        /// A plain file's names besides `key`'s (hard links), and its real inode number once it
        /// has more than one name.
        fileprivate var otherPaths: [MountPath] = []
        fileprivate var realFile: UInt64?
        /// The pending key of a new file its first save made an item, which still finds it
        /// until the new file's entry is gone (``becameItem(_:_:)``).
        fileprivate var pendingKey: NodeKey?

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
        /// Nodes of plain files with more than one name, by the real file's inode number.
        var linkedFiles: [UInt64: Node] = [:]

        init() {
            let root = Node(inode: InodeTable.rootInode, key: .plain(.root), lookups: 1)
            nodes = [InodeTable.rootInode: root]
            byKey = [.plain(.root): root]
        }
    }

    private let state = Mutex(State())
    /// Whether an inode's file has writes not saved yet (``ItemBuffers/holdsUnsavedWrites(_:)``).
    private let holdsWrites: @Sendable (UInt64) -> Bool

    init(holdsWrites: @escaping @Sendable (UInt64) -> Bool) {
        self.holdsWrites = holdsWrites
    }

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

    /// For each of `nodes`, under one lock: whether the kernel holds it with an entry it got at
    /// `instant` or later, and whether it still stands for its key (not detached from it since:
    /// an item changed elsewhere, a plain name replaced).
    func entryStates(since instant: ContinuousClock.Instant, of nodes: [Node]) -> [(sent: Bool, isCurrent: Bool)] {
        state.withLock { state in
            nodes.map { node in
                (node.lookups > 0 && node.entrySent.map { $0 >= instant } == true, state.byKey[node.key] === node)
            }
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
    /// the inode at all; it is dropped then unless it is an item's current file or holds writes.
    @discardableResult
    func forget(_ inode: UInt64, count: UInt64) -> Bool {
        state.withLock { state in
            guard inode != Self.rootInode, let node = state.nodes[inode] else { return false }
            node.lookups -= min(count, node.lookups)
            guard node.lookups == 0 else { return false }
            if isDroppedWhenForgotten(node, in: state) { Self.drop(node, from: &state) }
            return true
        }
    }

    /// Drops `inode` if the kernel forgot it while it held writes, now saved.
    func dropForgotten(_ inode: UInt64) {
        state.withLock { state in
            guard let node = state.nodes[inode], isDroppedWhenForgotten(node, in: state) else { return }
            Self.drop(node, from: &state)
        }
    }

    /// Whether a node goes now that the kernel no longer knows it: an item's current file keeps
    /// its number (a listing made before may still name it).
    private func isDroppedWhenForgotten(_ node: Node, in state: State) -> Bool {
        (!Self.keepsNumber(node.key) || state.byKey[node.key] !== node) && isUnused(node)
    }

    /// Whether nothing needs `node` any more: the kernel holds no lookup of it and its file no
    /// unsaved writes. No node is dropped otherwise.
    private func isUnused(_ node: Node) -> Bool {
        node.lookups == 0 && !holdsWrites(node.inode)
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
            // Its other names (hard links) stay plain files, numbered anew when looked up.
            for path in node.otherPaths where state.byKey[.plain(path)] === node { state.byKey[.plain(path)] = nil }
            Self.forgetLinks(of: node, in: &state)
            node.key = key
            state.byKey[key] = node
            state.generation += 1
        }
    }

    /// New file `inode`'s first save made it item `id`. It answers to both keys until
    /// ``newFileEntryGone(_:)``: a lookup while the save moves the name from the pending file
    /// to the item finds this inode under either, never a second one.
    func becameItem(_ inode: UInt64, _ id: ItemID) {
        state.withLock { state in
            guard let node = state.nodes[inode] else { return }
            let pending = node.key
            node.key = .item(id)
            node.pendingKey = pending
            state.byKey[.item(id)] = node
            state.generation += 1
        }
    }

    /// The pending new file `inode` was is gone from the new files: its key finds it no more.
    func newFileEntryGone(_ inode: UInt64) {
        state.withLock { state in
            guard let node = state.nodes[inode], let pending = node.pendingKey else { return }
            if state.byKey[pending] === node { state.byKey[pending] = nil }
            node.pendingKey = nil
        }
    }

    /// `key` no longer stands for the inode the kernel holds: a plain path is gone (unlinked, or
    /// replaced by a rename; a file with another name keeps its inode under that name), or an
    /// item's name goes to another file. Its next lookup numbers another inode, and the one the
    /// kernel holds is dropped once forgotten. `inode`: only while `key` still stands for it,
    /// since a rename may have put another file in its place, whose name it is (and whose
    /// unsaved bytes a new inode would not show). Returns whether it detached.
    @discardableResult
    func detach(_ key: NodeKey, ifStill inode: UInt64? = nil) -> Bool {
        state.withLock { state in
            guard let node = state.byKey[key], inode == nil || node.inode == inode else { return false }
            state.byKey[key] = nil
            state.generation += 1
            if case .plain(let path) = key, Self.removeName(path, of: node, in: state) { return true }
            if isUnused(node) { Self.drop(node, from: &state) }
            return true
        }
    }

    /// Takes `path` from `node`'s names; returns whether it still has one.
    private static func removeName(_ path: MountPath, of node: Node, in state: State) -> Bool {
        node.otherPaths.removeAll { $0 == path }
        if node.key != .plain(path) { return state.byKey[node.key] === node }
        guard !node.otherPaths.isEmpty else { return false }
        node.key = .plain(node.otherPaths.removeFirst())
        return true
    }

    /// Whether plain inode `inode` has a known name other than `path` (a hard link), so its
    /// file stays reachable by path once `path` is removed.
    func hasOtherName(_ inode: UInt64, than path: MountPath) -> Bool {
        state.withLock { state in
            guard let node = state.nodes[inode] else { return false }
            return node.otherPaths.contains { $0 != path } || (node.key != .plain(path) && state.byKey[node.key] === node)
        }
    }

    /// The node of plain file `path`, whose real file (inode number `realFile`) has more than
    /// one name: the node of its other names if the table has one, so that every name of it
    /// is one inode. A node numbered for `path` alone that the kernel does not hold yet (a
    /// listing's) gives way to it.
    func node(for path: MountPath, sharing realFile: UInt64) -> Node {
        state.withLock { state in
            let key = NodeKey.plain(path)
            let known = state.byKey[key]
            if let shared = state.linkedFiles[realFile], shared.isInTable, shared !== known,
               known.map(isUnused) ?? true {
                if let known { Self.drop(known, from: &state) }
                if state.byKey[shared.key] === shared { shared.otherPaths.append(path) } else { shared.key = key }
                state.byKey[key] = shared
                state.generation += 1
                return shared
            }
            let node = known ?? Self.node(for: key, in: &state)
            if state.linkedFiles[realFile]?.isInTable != true {
                node.realFile = realFile
                state.linkedFiles[realFile] = node
            }
            return node
        }
    }

    /// The plain file name `from` is now `to` (one file, not a folder): its node follows, found
    /// by that name alone — no walk over the table, whose size grows with the library.
    func renameFile(_ from: MountPath, to: MountPath) {
        state.withLock { state in
            guard let node = state.byKey.removeValue(forKey: .plain(from)) else { return }
            Self.rename(node, from: from, to: to, in: &state)
            state.generation += 1
        }
    }

    /// Moves every plain name inside `from` under `to` (a folder rename).
    func renameFolder(_ from: MountPath, to: MountPath) {
        state.withLock { state in
            let moving = state.byKey.compactMap { key, node -> (MountPath, Node)? in
                guard case .plain(let path) = key, path.isInside(from) else { return nil }
                return (path, node)
            }
            for (path, _) in moving { state.byKey[.plain(path)] = nil }
            for (path, node) in moving { Self.rename(node, from: path, to: path.replacingPrefix(from, with: to), in: &state) }
            state.generation += 1
        }
    }

    /// Gives `node` the name `to` in place of `from` (its key or one of its other names).
    private static func rename(_ node: Node, from: MountPath, to: MountPath, in state: inout State) {
        if node.key == .plain(from) {
            node.key = .plain(to)
        } else if let other = node.otherPaths.firstIndex(of: from) {
            node.otherPaths[other] = to
        }
        state.byKey[.plain(to)] = node
    }

    private static func drop(_ node: Node, from state: inout State) {
        state.nodes[node.inode] = nil
        if state.byKey[node.key] === node { state.byKey[node.key] = nil }
        if let pending = node.pendingKey, state.byKey[pending] === node { state.byKey[pending] = nil }
        for path in node.otherPaths where state.byKey[.plain(path)] === node { state.byKey[.plain(path)] = nil }
        forgetLinks(of: node, in: &state)
        node.isInTable = false
        state.generation += 1
    }

    private static func forgetLinks(of node: Node, in state: inout State) {
        node.otherPaths = []
        if let realFile = node.realFile, state.linkedFiles[realFile] === node { state.linkedFiles[realFile] = nil }
        node.realFile = nil
    }

    private static func keepsNumber(_ key: NodeKey) -> Bool {
        if case .item = key { return true }
        return false
    }
}
