import Foundation
import Synchronization
import FuseKit
import ShelfModel
import ShelfStore
import ShelfSystem

/// Brings changes made outside this mount (the CLI, an import, another mount, sync) into the
/// kernel's view: a thread reads the store's change feed whenever the library's database
/// changes (``FolderChangeSignal``; at least every `fallback` interval), updates the item
/// index and queues invalidations on the session's notifier.
///
/// A changed item reaches the kernel as a disk filesystem's rename over the file would (how
/// Syncthing and every atomic save deliver one): its name gets another inode at the next
/// lookup, while the inode programs already hold keeps the bytes it showed until they let go.
/// A reader never sees a file change between its `fstat` and its `read` (Foundation, Node and
/// git read exactly the size `fstat` gave), and the kernel never holds a size of other bytes
/// than those its inode serves.
///
/// Only what the kernel holds is invalidated (inodes with a lookup count, names in folders it
/// has looked up); a folder whose names change also loses the kernel's cached listing. A file
/// with unsaved writes keeps its pages (its save keeps both sides as a conflict copy). Changes
/// this mount made itself are already in the index at the same version and cost nothing.
final class ChangeFollower: Sendable {
    private let fileSystem: ShelfFileSystem
    private let fallback: TimeInterval
    /// Made when the thread starts: a file system that is never mounted holds no inotify
    /// instance (a user has 128 at most).
    private let signal = Mutex<FolderChangeSignal?>(nil)
    private let sequence: Mutex<Int64>
    /// How many times the feed was read: an idle mount reads it rarely.
    let feedReads = Atomic<Int>(0)
    private let worker = WorkerThread(name: "shelf.change-follower")

    /// Follows the feed from `sequence`, the feed position the index was loaded at.
    init(fileSystem: ShelfFileSystem, after sequence: Int64, fallback: TimeInterval = 5) {
        self.fileSystem = fileSystem
        self.sequence = Mutex(sequence)
        self.fallback = fallback
    }

    func start() {
        let signal = signal.withLock { signal in
            if signal == nil { signal = FolderChangeSignal.library(fileSystem.store.folder) }
            return signal!
        }
        worker.start { [self] in followUntilStopped(signal) }
    }

    /// Stops the thread and waits for its last poll to end.
    func stop() {
        worker.stop { signal.withLock { $0 }?.wakeUp() }
    }

    private func followUntilStopped(_ signal: FolderChangeSignal) {
        repeat {
            do {
                try poll()
            } catch {
                fileSystem.logger.error("cannot read the library's change feed: \(error)")
            }
            // Waits for the library to change (or the fallback interval).
            signal.wait(fallback: fallback, settle: 0.01)
        } while !worker.isStopping
    }

    /// Applies every change since the last poll; returns how many there were.
    @discardableResult
    func poll() throws -> Int {
        let after = sequence.withLock { $0 }
        feedReads.add(1, ordering: .relaxed)
        let changes = try fileSystem.store.changes(after: after)
        guard let last = changes.last else { return 0 }
        var seen = Set<ItemID>()
        for change in changes where seen.insert(change.id).inserted {
            try apply(change.id)
        }
        sequence.withLock { $0 = last.sequence }
        return changes.count
    }

    /// Brings the index's entry for `id` up to the store's. A save through this mount may
    /// record a newer state between the store read and the update: then the read is stale, and
    /// the store is read again.
    private func apply(_ id: ItemID) throws {
        let index = fileSystem.index
        var known: ItemSummary?
        var current: ItemSummary?
        // The item file the kernel holds, kept at the version it shows before the index moves on.
        var kept: (inode: UInt64, version: Int64)?
        repeat {
            known = index.summary(id: id)
            current = try fileSystem.store.summary(id: id)
            if known == current { return }
            if let current {
                for folder in try fileSystem.folders.ensure(MountPath(current.path).parent) { announceName(folder) }
            }
            if let known, let current, known.version != current.version, !known.isPlaceholder, kept?.version != known.version,
               let inode = fileSystem.inodes.kernelInode(for: .item(id)), try fileSystem.saves.keepShown(inode, version: known.version) {
                kept = (inode, known.version)
            }
        } while !index.put(current, for: id, ifStill: known)
        // A newer placeholder state: bytes fetched for the one it replaced are not its.
        if current?.isPlaceholder == true { fileSystem.downloads.discard(id) }
        // An item appearing where a new file of this mount waits for its first save is that
        // save landing, or another device's item that save will meet: the name shows the new
        // file either way, so nothing is announced (its announcement would look the name up as
        // the item's, and give the file a second inode).
        if known == nil, let current, fileSystem.newItemFiles.pending(at: MountPath(current.path)) != nil { return }
        let itemInode = fileSystem.inodes.kernelInode(for: .item(id))
        if let current, known?.path != current.path { announceName(MountPath(current.path)) }
        if let known, known.path != current?.path {
            forgetName(MountPath(known.path), deletedInode: current == nil ? itemInode : nil)
        }
        // A file with unsaved writes keeps showing them: its save will keep both sides.
        let isDirty = itemInode.map(fileSystem.saves.buffers.holdsUnsavedWrites) == true
        // A download changes what is stored, not what the file reads (reads waited for it):
        // only its blocks change, and no watcher is told of a change.
        let isDownload = known?.isPlaceholder == true && current?.isPlaceholder == false && known?.size == current?.size
        if isDownload {
            if let itemInode { fileSystem.invalidate(.attributes(Inode(itemInode))) }
            return
        }
        if let itemInode, let known, let current, !isDirty {
            if known.version != current.version {
                if kept?.inode == itemInode {
                    fileSystem.saves.giveAnotherFile(to: id, at: MountPath(current.path))
                } else {
                    fileSystem.invalidate(.content(Inode(itemInode)))
                }
            } else if known.modified != current.modified || known.permissions != current.permissions {
                fileSystem.invalidate(.attributes(Inode(itemInode)))
            }
        }
        announce(id, from: known, to: current, isDirty: isDirty)
    }

    /// Has the change repeated through the mount for inotify watchers, where the kernel knows
    /// the folder (a watch holds its inode, so no other folder can have one).
    private func announce(_ id: ItemID, from known: ItemSummary?, to current: ItemSummary?, isDirty: Bool) {
        let inodes = fileSystem.inodes
        let isWatchable = { (path: MountPath) in inodes.kernelInode(for: .plain(path.parent)) != nil }
        guard let current else {
            if let known, isWatchable(MountPath(known.path)) { fileSystem.announcer.announce(.deleted(MountPath(known.path), .item(id))) }
            return
        }
        let path = MountPath(current.path)
        guard let known else {
            if isWatchable(path) { fileSystem.announcer.announce(.created(path, .item(id))) }
            return
        }
        let old = MountPath(known.path)
        if old != path, isWatchable(old) || isWatchable(path) {
            fileSystem.announcer.announce(.renamed(from: old, to: path, .item(id)))
        }
        if known.version != current.version, !isDirty, isWatchable(path) {
            fileSystem.announcer.announce(.modified(path))
        }
    }

    /// A name appeared: drop a cached "no such file" for it, and the folder's cached listing.
    private func announceName(_ path: MountPath) {
        fileSystem.kernel.nameAppeared(path.name, in: fileSystem.inodes.kernelInode(for: .plain(path.parent)))
    }

    /// A name went away: drop it. `deletedInode`: the item itself is gone (trashed), which
    /// watchers hear of from the announcer's unlink, or without one from the kernel's delete
    /// notification. A program that has the file open keeps reading it (the trash keeps its
    /// bytes), and what it writes to it brings the item back.
    private func forgetName(_ path: MountPath, deletedInode inode: UInt64?) {
        fileSystem.kernel.nameLeft(path.name, in: fileSystem.inodes.kernelInode(for: .plain(path.parent)),
                                   deleted: fileSystem.announcer.isAnnouncing ? nil : inode)
    }
}
