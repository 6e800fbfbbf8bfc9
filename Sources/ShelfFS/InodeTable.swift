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

    private struct Entry {
        var key: NodeKey
        var lookups: UInt64 = 0
    }

    private struct State {
        var entries: [UInt64: Entry] = [InodeTable.rootInode: Entry(key: .plain(.root), lookups: 1)]
        var byKey: [NodeKey: UInt64] = [.plain(.root): InodeTable.rootInode]
        var next: UInt64 = InodeTable.rootInode + 1
    }

    private let state = Mutex(State())

    func key(of inode: UInt64) -> NodeKey? {
        state.withLock { $0.entries[inode]?.key }
    }

    /// The inode of `key`, numbered now if it has none; counts one kernel lookup if `lookup`.
    func inode(for key: NodeKey, lookup: Bool) -> UInt64 {
        state.withLock { state in
            let inode = Self.inode(for: key, in: &state)
            if lookup { state.entries[inode]?.lookups += 1 }
            return inode
        }
    }

    private static func inode(for key: NodeKey, in state: inout State) -> UInt64 {
        if let known = state.byKey[key] { return known }
        let inode = state.next
        state.next += 1
        state.byKey[key] = inode
        state.entries[inode] = Entry(key: key)
        return inode
    }

    /// The inodes of `keys` (numbered now where missing), under one lock: a listing's names.
    func inodes(for keys: [NodeKey]) -> [UInt64] {
        state.withLock { state in keys.map { Self.inode(for: $0, in: &state) } }
    }

    /// The kernel received one more entry for each of `inodes` (readdirplus entries that fit).
    func countLookups(_ inodes: [UInt64]) {
        state.withLock { state in
            for inode in inodes { state.entries[inode]?.lookups += 1 }
        }
    }

    /// The inode numbered for `key`, if any.
    func existingInode(for key: NodeKey) -> UInt64? {
        state.withLock { $0.byKey[key] }
    }

    /// The inode of `key` if the kernel holds it (lookup count above zero): only those need
    /// invalidation.
    func kernelInode(for key: NodeKey) -> UInt64? {
        state.withLock { state in
            guard let inode = state.byKey[key], let entry = state.entries[inode], entry.lookups > 0 else { return nil }
            return inode
        }
    }

    /// The kernel dropped `count` references to `inode`. Returns true when it no longer knows
    /// the inode at all.
    @discardableResult
    func forget(_ inode: UInt64, count: UInt64) -> Bool {
        state.withLock { state in
            guard inode != Self.rootInode, var entry = state.entries[inode] else { return false }
            entry.lookups -= min(count, entry.lookups)
            if entry.lookups == 0, !Self.keepsNumber(entry.key) || state.byKey[entry.key] != inode {
                state.entries[inode] = nil
                if state.byKey[entry.key] == inode { state.byKey[entry.key] = nil }
            } else {
                state.entries[inode] = entry
            }
            return entry.lookups == 0
        }
    }

    /// Whether the kernel holds `inode` (its lookup count is above zero).
    func isKnownToKernel(_ inode: UInt64) -> Bool {
        state.withLock { ($0.entries[inode]?.lookups ?? 0) > 0 }
    }

    /// `inode` now stands for `key` (a rename turned a temp file into an item, or moved a plain
    /// file). Whatever inode held `key` before keeps its old meaning only for handles still open
    /// on it.
    func rekey(_ inode: UInt64, to key: NodeKey) {
        state.withLock { state in
            guard var entry = state.entries[inode] else { return }
            if state.byKey[entry.key] == inode { state.byKey[entry.key] = nil }
            entry.key = key
            state.entries[inode] = entry
            state.byKey[key] = inode
        }
    }

    /// The plain path `path` is gone (unlinked, or replaced by a rename).
    func detach(_ key: NodeKey) {
        state.withLock { state in
            if let inode = state.byKey.removeValue(forKey: key), state.entries[inode]?.lookups == 0 {
                state.entries[inode] = nil
            }
        }
    }

    /// Moves every plain entry inside `from` under `to` (a folder rename).
    func renameFolder(_ from: MountPath, to: MountPath) {
        state.withLock { state in
            for (inode, entry) in state.entries {
                guard case .plain(let path) = entry.key, path.isInside(from) else { continue }
                let newKey = NodeKey.plain(path.replacingPrefix(from, with: to))
                if state.byKey[entry.key] == inode { state.byKey[entry.key] = nil }
                state.entries[inode]?.key = newKey
                state.byKey[newKey] = inode
            }
        }
    }

    private static func keepsNumber(_ key: NodeKey) -> Bool {
        if case .item = key { return true }
        return false
    }
}
