import Foundation
import FuseKit
import ShelfModel
import ShelfStore

/// Proof of being the ``MountView``, which alone makes one: nothing else writes the item index.
struct IndexWriter: Sendable {
    fileprivate init() {}
}

/// What the mount shows of the library's items: the one writer of the ``ItemIndex``, and where
/// an item changed elsewhere reaches the kernel's caches and inotify watchers.
///
/// A save, move or trash through this mount is recorded as it happens: the kernel learnt of it
/// from the request itself. A change made elsewhere (the CLI, an import, another mount, sync;
/// read from the change feed by ``ChangeFollower``) is recorded, then shown the way a disk
/// filesystem's rename over the file would show it (how Syncthing and every atomic save deliver
/// one): its name gets another inode at the next lookup, while the inode programs already hold
/// keeps the bytes it showed until they let go. A reader never sees a file change between its
/// `fstat` and its `read` (Foundation, Node and git read exactly the size `fstat` gave), and the
/// kernel never holds a size of other bytes than those its inode serves.
///
/// Only what the kernel holds is invalidated (inodes with a lookup count, names in folders it
/// has looked up); a folder whose names change also loses the kernel's cached listing. A file
/// with unsaved writes keeps its pages (its save keeps both sides as a conflict copy). Changes
/// this mount made itself are already in the index at the same version and cost nothing.
final class MountView: Sendable {
    let index: ItemIndex
    private let store: LibraryStore
    private let inodes: InodeTable
    private let buffers: ItemBuffers
    private let folders: ItemFolders
    private let newItemFiles: NewItemFiles
    private let kernel: KernelCache
    private let announcer: ChangeAnnouncer
    private let writer = IndexWriter()

    init(index: ItemIndex, store: LibraryStore, inodes: InodeTable, buffers: ItemBuffers, folders: ItemFolders,
         newItemFiles: NewItemFiles, kernel: KernelCache, announcer: ChangeAnnouncer) {
        self.index = index
        self.store = store
        self.inodes = inodes
        self.buffers = buffers
        self.folders = folders
        self.newItemFiles = newItemFiles
        self.kernel = kernel
        self.announcer = announcer
    }

    // MARK: This mount's own changes

    /// A save, move or attribute change through this mount, or a download, stored `record`.
    func recorded(_ record: ItemRecord) {
        index.put(ItemSummary(record), writer)
    }

    /// Item `id` changed in the store on this mount's behalf (a download it waited for, a folder
    /// it moved): the index takes the stored state.
    func reload(_ id: ItemID) throws {
        if let summary = try store.summary(id: id) { index.put(summary, writer) }
    }

    /// Item `id` went to the trash through this mount.
    func removed(_ id: ItemID) {
        index.remove(id, writer)
    }

    /// Item `record` came back from the trash through this mount: its name appears.
    func restored(_ record: ItemRecord) {
        index.put(ItemSummary(record), writer)
        let path = MountPath(record.path)
        kernel.nameAppeared(path.name, in: inodes.kernelInode(for: .plain(path.parent)))
    }

    /// Keeps what the item file `inode` shows now (`version`; nil: the stored one) as its bytes,
    /// for the programs still reading it once another file took its name: a rename over it, or
    /// a change from elsewhere. Bytes it holds already are what it shows; returns false when
    /// they are unsaved writes, when that version is no longer kept, or when the item moved on
    /// meanwhile (a save through this mount published a newer version, which the file shows).
    @discardableResult
    func keepShown(_ inode: UInt64, version: Int64? = nil) throws -> Bool {
        guard case .item(let id)? = inodes.key(of: inode) else { return false }
        if let kept = buffers.keepHeld(inode) { return kept }
        let file: (version: Int64, content: Data)?
        if let version {
            file = try store.file(id: id, version: version).map { (version, $0) }
        } else {
            file = try store.file(id: id)
        }
        guard let file else { return false }
        return buffers.freeze(inode, bytes: Array(file.content), version: file.version,
                              modified: index.summary(id: id)?.modified ?? Date()) { index.version(of: id) == file.version }
    }

    /// Item `id`'s name (`path`) stands for another file from its next lookup, as after a rename
    /// over it; the file `kept` keeps what ``keepShown(_:version:)`` kept for it. Nothing
    /// changes when `kept` is no longer the item's file: a rename over it took the name already.
    func giveAnotherFile(to id: ItemID, at path: MountPath, insteadOf kept: UInt64) {
        guard inodes.detach(.item(id), ifStill: kept) else { return }
        kernel.nameLeft(path.name, in: inodes.kernelInode(for: .plain(path.parent)))
    }

    // MARK: Changes from elsewhere

    /// An item's move from what the index knew to what the store holds.
    struct Change {
        let id: ItemID
        let known: ItemSummary?
        let current: ItemSummary?
        /// The item file the kernel holds, kept at the version it showed before the index moved on.
        let kept: (inode: UInt64, version: Int64)?
    }

    /// Brings the index's entry for `id` up to the store's; nil when it was current. A save
    /// through this mount may record a newer state between the store read and the update: then
    /// the read is stale, and the store is read again.
    func recordFromStore(_ id: ItemID) throws -> Change? {
        var known: ItemSummary?
        var current: ItemSummary?
        var kept: (inode: UInt64, version: Int64)?
        repeat {
            known = index.summary(id: id)
            current = try store.summary(id: id)
            if known == current { return nil }
            if let current {
                for folder in try folders.ensure(MountPath(current.path).parent) { announceName(folder) }
            }
            if let known, let current, known.version != current.version, !known.isPlaceholder, kept?.version != known.version,
               let inode = inodes.kernelInode(for: .item(id)), try keepShown(inode, version: known.version) {
                kept = (inode, known.version)
            }
        } while !index.put(current, for: id, ifStill: known, writer)
        return Change(id: id, known: known, current: current, kept: kept)
    }

    /// Shows a recorded change to the kernel and to inotify watchers.
    func show(_ change: Change) {
        let (id, known, current) = (change.id, change.known, change.current)
        // An item appearing where a new file of this mount waits for its first save is that
        // save landing, or another device's item that save will meet: the name shows the new
        // file either way, so nothing is announced (its announcement would look the name up as
        // the item's, and give the file a second inode).
        if known == nil, let current, newItemFiles.pending(at: MountPath(current.path)) != nil { return }
        let itemInode = inodes.kernelInode(for: .item(id))
        if let current, known?.path != current.path { announceName(MountPath(current.path)) }
        if let known, known.path != current?.path {
            forgetName(MountPath(known.path), deletedInode: current == nil ? itemInode : nil)
        }
        // A file with unsaved writes keeps showing them: its save will keep both sides.
        let isDirty = itemInode.map(buffers.holdsUnsavedWrites) == true
        // A download changes what is stored, not what the file reads (reads waited for it):
        // only its blocks change, and no watcher is told of a change.
        let isDownload = known?.isPlaceholder == true && current?.isPlaceholder == false && known?.size == current?.size
        if isDownload {
            if let itemInode { kernel.invalidate(.attributes(Inode(itemInode))) }
            return
        }
        if let itemInode, let known, let current, !isDirty {
            if known.version != current.version {
                if change.kept?.inode == itemInode {
                    giveAnotherFile(to: id, at: MountPath(current.path), insteadOf: itemInode)
                } else {
                    kernel.invalidate(.content(Inode(itemInode)))
                }
            } else if known.modified != current.modified || known.permissions != current.permissions {
                kernel.invalidate(.attributes(Inode(itemInode)))
            }
        }
        announce(id, from: known, to: current, isDirty: isDirty)
    }

    /// Has the change repeated through the mount for inotify watchers, where the kernel knows
    /// the folder (a watch holds its inode, so no other folder can have one).
    private func announce(_ id: ItemID, from known: ItemSummary?, to current: ItemSummary?, isDirty: Bool) {
        let isWatchable = { [inodes] (path: MountPath) in inodes.kernelInode(for: .plain(path.parent)) != nil }
        guard let current else {
            if let known, isWatchable(MountPath(known.path)) { announcer.announce(.deleted(MountPath(known.path), .item(id))) }
            return
        }
        let path = MountPath(current.path)
        guard let known else {
            if isWatchable(path) { announcer.announce(.created(path, .item(id))) }
            return
        }
        let old = MountPath(known.path)
        if old != path, isWatchable(old) || isWatchable(path) {
            announcer.announce(.renamed(from: old, to: path, .item(id)))
        }
        if known.version != current.version, !isDirty, isWatchable(path) {
            announcer.announce(.modified(path))
        }
    }

    /// A name appeared: drop a cached "no such file" for it, and the folder's cached listing.
    private func announceName(_ path: MountPath) {
        kernel.nameAppeared(path.name, in: inodes.kernelInode(for: .plain(path.parent)))
    }

    /// A name went away: drop it. `deletedInode`: the item itself is gone (trashed), which
    /// watchers hear of from the announcer's unlink, or without one from the kernel's delete
    /// notification. A program that has the file open keeps reading it (the trash keeps its
    /// bytes), and what it writes to it brings the item back.
    private func forgetName(_ path: MountPath, deletedInode inode: UInt64?) {
        kernel.nameLeft(path.name, in: inodes.kernelInode(for: .plain(path.parent)),
                        deleted: announcer.isAnnouncing ? nil : inode)
    }
}
