import Foundation
import FuseKit
import ShelfModel
import ShelfStore
import ShelfSystem
import Synchronization

/// What the sync engine asks of a mounted library (``SyncedMount``), answered from the mount's
/// parts: which items programs hold, the bytes fetched for readers, when items were last read,
/// and the plain files a pull changed behind the mount's back. The engine gets this view, not
/// the filesystem.
final class MountSyncView: SyncedMount {
    private let parts: MountParts
    private let announcer: ChangeAnnouncer
    /// The kernel's lock table (``KernelFileLocks/table``; tests name one that cannot be read).
    private let lockTable: String
    /// The mount's device number, for finding its files in the lock table; learnt on first need.
    private let mountDevice = Mutex<dev_t?>(nil)

    init(_ parts: MountParts, announcer: ChangeAnnouncer, lockTable: String) {
        self.parts = parts
        self.announcer = announcer
        self.lockTable = lockTable
    }

    /// The items whose files a program holds now — unsaved writes in them, or a lock on them —
    /// so changes from the cloud must wait; every item when the kernel's lock table cannot be
    /// read (fail closed). Takes only short locks (never waits for the store),
    /// so sync asks it before its transactions. Never call it from a request handler: the first
    /// call asks the mount for its device.
    func busyItems() -> ItemsInUse {
        assert(!LibraryStore.isWritingOnThisThread, "sync must ask which items are busy before its transaction")
        var held = Set(parts.buffers.unsavedInodes())
        let device = mountDevice.withLock { device in
            if device == nil, let mountpoint = announcer.mountpoint { device = KernelFileLocks.device(of: mountpoint) }
            return device
        }
        var unknown: String?
        if let device {
            do { held.formUnion(try KernelFileLocks.lockedInodes(onDevice: device, table: lockTable)) } catch { unknown = "\(error)" }
        }
        return ItemsInUse(Set(held.compactMap { inode in
            if case .item(let id)? = parts.inodes.key(of: inode) { id } else { nil }
        }), everyItemBecause: unknown)
    }

    /// Puts the bytes fetched for readers in place (sync asks before its transactions).
    func fillFetchedBytes() throws {
        try parts.downloads.fillPending()
    }

    /// When each item was last read through this mount (sync's cache budget asks).
    func readTimes() -> [ItemID: Date] {
        parts.downloads.readTimes()
    }

    func plainFileChangedElsewhere(_ path: String, wasThere: Bool) {
        plainFileChangedElsewhere(MountPath(path), wasThere: wasThere)
    }

    /// Sync wrote or removed the plain file at `path` behind the mount's back: the kernel
    /// drops what it cached of it (name, attributes, pages) and the mount its open descriptor,
    /// which may name the file it replaced; cached listings are made again (folders sync made
    /// on the way to it included); watchers of its folder hear of a new file or a changed one
    /// (`wasThere`: whatever the kernel still holds of it, which memory pressure may have
    /// dropped) from the announcer, of a removed one from the kernel's delete notification.
    func plainFileChangedElsewhere(_ path: MountPath, wasThere: Bool) {
        parts.folders.noteNamespaceChange()
        let inode = parts.inodes.kernelInode(for: .plain(path))
        if let inode {
            parts.descriptors.forget(inode)
            parts.kernel.invalidate(.content(Inode(inode)))
        }
        guard let parent = parts.inodes.kernelInode(for: .plain(path.parent)) else {
            // Its folder may be new here too (sync wrote into a folder it made): the nearest
            // folder the kernel knows drops its listing and its entry for the next one down.
            var folder = path.parent
            while !folder.isRoot {
                if let known = parts.inodes.kernelInode(for: .plain(folder.parent)) {
                    parts.kernel.invalidate(.content(Inode(known)))
                    parts.kernel.invalidate(.entry(parent: Inode(known), name: folder.name))
                    break
                }
                folder = folder.parent
            }
            return
        }
        parts.kernel.invalidate(.content(Inode(parent)))
        switch (parts.plain.exists(path), inode) {
        case (true, _):
            if inode == nil { parts.kernel.invalidate(.entry(parent: Inode(parent), name: path.name)) }
            if !wasThere {
                announcer.announce(parts.plain.isDirectory(path) ? .createdFolder(path) : .created(path, .plain(path)))
            } else if !parts.plain.isDirectory(path) {
                announcer.announce(.modified(path))
            }
        case (false, let inode?):
            parts.kernel.invalidate(.deletion(parent: Inode(parent), child: Inode(inode), name: path.name))
        case (false, nil):
            parts.kernel.invalidate(.entry(parent: Inode(parent), name: path.name))
        }
    }
}
