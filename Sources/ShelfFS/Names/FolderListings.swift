import Synchronization
import FuseKit
import ShelfStore

/// The names in each folder of the mount, in bytes order: the plain-file area's real entries
/// (minus anything shadowed by item names) and the folder's items and unsaved new item files.
/// `/.shelf/` is reachable by its path but never listed (like ZFS's `.zfs` with
/// `snapdir=hidden`), so git, tar, rsync and Syncthing walking the tree leave it alone. A folder's last listing is reused while nothing it was made from has
/// changed, so listing a folder of 100,000 books again costs nothing.
final class FolderListings: Sendable {
    /// One name in a folder listing, with the inode it stands for (and, for an item, its
    /// index slot): what a `readdirplus` batch needs, without a search per name.
    struct Listed {
        var name: String
        var key: NodeKey
        var node: InodeTable.Node
        var slot: ItemIndex.Slot?

        var inode: UInt64 { node.inode }
        var isDotEntry: Bool { name == "." || name == ".." }
    }

    /// What a folder's listing was made from: the folder's item names, the numbering of
    /// inodes, and the plain-file area's names. A listing stays right while all three stand.
    private struct Stamp: Equatable {
        var items: UInt64
        var numbering: UInt64
        var names: UInt64
    }

    private let parts: MountParts
    /// The last listing of each folder, reused while its stamp still holds.
    private let cache = Mutex<[MountPath: (stamp: Stamp, listed: [Listed])]>([:])

    init(_ parts: MountParts) {
        self.parts = parts
    }

    /// A folder's names, and whether they changed since the folder was last listed.
    struct Listing {
        var names: [Listed]
        /// Names came or went since the last listing (or unsaved new files make it one that is
        /// never kept): a copy the kernel filled from an earlier listing is out of date, even
        /// after an invalidation, which can reach the kernel before the reads that fill it.
        var namesChanged: Bool
    }

    /// The names in `folder`, from the cache while its stamp holds.
    func list(_ folder: MountPath) throws -> Listing {
        let stamp = Stamp(items: parts.index.generation(of: folder), numbering: parts.inodes.generation,
                          names: parts.folders.namespaceGeneration)
        // Unsaved new files are listed but not stamped: such a folder is listed afresh.
        let hasNewFiles = !parts.newItemFiles.names(in: folder).isEmpty
        let cached = cache.withLock { $0[folder] }
        if !hasNewFiles, let cached, cached.stamp == stamp {
            return Listing(names: cached.listed, namesChanged: false)
        }
        let listed = try makeListing(of: folder)
        if !hasNewFiles { cache.withLock { $0[folder] = (stamp, listed) } }
        let namesChanged = hasNewFiles || cached.map { !$0.listed.lazy.map(\.name).elementsEqual(listed.lazy.map(\.name)) } ?? false
        return Listing(names: listed, namesChanged: namesChanged)
    }

    /// `.` and `..` of `folder` (whose inode is `inode`), which start every kernel listing
    /// (and, unlike other names, give the kernel no lookup count in `readdirplus`).
    func dotEntries(of folder: MountPath, inode: UInt64) -> [Listed] {
        let parent: NodeKey = folder == .statusFolder ? .plain(.root) : .plain(folder.parent)
        let keys = [parts.inodes.key(of: inode) ?? .plain(folder), parent]
        return zip([".", ".."], zip(keys, parts.inodes.nodes(for: keys))).map { Listed(name: $0, key: $1.0, node: $1.1) }
    }

    /// The kind a listed name shows in a plain `readdir`.
    func kind(of listed: Listed) -> FileKind {
        switch listed.key {
        case .plain(let path): (try? parts.plain.status(path)).flatMap { FileKind(mode: $0.st_mode) } ?? .regular
        case .status(let name): name.isEmpty ? .directory : .regular
        case .item, .newItemFile: .regular
        }
    }

    /// Items come sorted from the index, so a folder of 100,000 books costs a merge with its
    /// few other names and one pass to number them.
    private func makeListing(of folder: MountPath) throws -> [Listed] {
        var others: [(name: String, key: NodeKey)] = []
        var items: [(name: String, slot: ItemIndex.Slot)] = []
        if folder == .statusFolder {
            others = StatusFolder.fileNames.map { ($0, .status(name: $0)) }
        } else {
            let isItemFolder = PathRules.isItemFolder(folder)
            for name in try parts.plain.entries(of: folder) {
                if isItemFolder && ItemPath.isItemFileName(name) { continue }
                if folder.isRoot && name == MountPath.statusFolder.rawValue { continue }
                if name.hasBytePrefix(PlainFileArea.internalPrefix) { continue }
                others.append((name, .plain(folder.appending(name))))
            }
            if isItemFolder {
                // A new file's name shows the new file, also while its first save lands and the
                // index holds its item already (as a lookup resolves it).
                let newFiles = parts.newItemFiles.names(in: folder)
                let newNames = Set(newFiles.map(\.name))
                items = parts.index.items(in: folder).items.filter { newNames.isEmpty || !newNames.contains($0.name) }
                others += newFiles.map { ($0.name, .newItemFile($0.pending)) }
            }
        }
        others.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        var merged: [(name: String, key: NodeKey, slot: ItemIndex.Slot?)] = []
        merged.reserveCapacity(items.count + others.count)
        var nextOther = others.startIndex
        for item in items {
            while nextOther < others.endIndex, others[nextOther].name.utf8.lexicographicallyPrecedes(item.name.utf8) {
                merged.append((others[nextOther].name, others[nextOther].key, nil))
                nextOther += 1
            }
            merged.append((item.name, .item(item.slot.id), item.slot))
        }
        merged += others[nextOther...].map { ($0.name, $0.key, nil) }
        let nodes = parts.inodes.nodes(for: merged.map(\.key))
        return zip(merged, nodes).map { Listed(name: $0.name, key: $0.key, node: $1, slot: $0.slot) }
    }
}
