import FuseKit
import ShelfStore

/// Paths to what lives there and back: the status folder, new item files waiting for their first
/// save, items (from the index) and the plain-file area, in that order of precedence.
final class MountNames: Sendable {
    private let inodes: InodeTable
    private let index: ItemIndex
    private let newItemFiles: NewItemFiles
    private let plain: PlainFileArea

    init(inodes: InodeTable, index: ItemIndex, newItemFiles: NewItemFiles, plain: PlainFileArea) {
        self.inodes = inodes
        self.index = index
        self.newItemFiles = newItemFiles
        self.plain = plain
    }

    /// The folder path an inode stands for, or `ENOTDIR`.
    func folderPath(_ inode: UInt64) throws(Errno) -> MountPath {
        switch inodes.key(of: inode) {
        case .plain(let path): return path
        case .status(name: ""): return .statusFolder
        case nil: throw Errno.noEntry
        default: throw Errno.notDirectory
        }
    }

    /// What lives at `path` now, if anything.
    func resolve(_ path: MountPath) -> NodeKey? {
        if path == .statusFolder { return .status(name: "") }
        if PathRules.isStatusPath(path) {
            return path.parent == .statusFolder && StatusFolder.fileNames.contains(path.name)
                ? .status(name: path.name) : nil
        }
        if PathRules.isItemPath(path) {
            // A new file first: while its first save lands, the index may hold its item already
            // (the change follower saw it) before the file's inode takes the item's key.
            if let pending = newItemFiles.pending(at: path) { return .newItemFile(pending) }
            if let summary = index.summary(at: path) { return .item(summary.id) }
            return nil
        }
        return plain.exists(path) ? .plain(path) : nil
    }

    /// The path `key` is at now (nil for a trashed item or a vanished file).
    func path(of key: NodeKey) -> MountPath? {
        switch key {
        case .plain(let path): path
        case .item(let id): index.summary(id: id).map { MountPath($0.path) }
        case .newItemFile(let pending): newItemFiles.path(of: pending)
        case .status(let name): name.isEmpty ? .statusFolder : MountPath.statusFolder.appending(name)
        }
    }

    /// The inode `name` in folder `parent` stands for, if the table numbered one.
    func existingInode(parent: UInt64, name: String) -> UInt64? {
        guard let path = try? folderPath(parent).appending(name), let key = resolve(path) else { return nil }
        return inodes.existingInode(for: key)
    }

    /// Those of `candidates` whose files are directly in `folder`.
    func inodes(_ candidates: [UInt64], in folder: MountPath) -> [UInt64] {
        candidates.filter { inode in inodes.key(of: inode).flatMap(path(of:))?.parent == folder }
    }
}
