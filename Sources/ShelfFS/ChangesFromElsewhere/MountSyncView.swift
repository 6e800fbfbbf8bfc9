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
    private let buffers: ItemBuffers
    private let inodes: InodeTable
    private let downloads: PlaceholderDownloads
    private let folders: ItemFolders
    private let plain: PlainFileArea
    private let descriptors: PlainDescriptors
    private let kernel: KernelCache
    private let announcer: ChangeAnnouncer
    /// The kernel's lock table (``KernelFileLocks/table``; tests name one that cannot be read).
    private let lockTable: String
    /// The mount's device number, for finding its files in the lock table; learnt on first need.
    private let mountDevice = Mutex<dev_t?>(nil)

    init(buffers: ItemBuffers, inodes: InodeTable, downloads: PlaceholderDownloads, folders: ItemFolders,
         plain: PlainFileArea, descriptors: PlainDescriptors, kernel: KernelCache, announcer: ChangeAnnouncer,
         lockTable: String) {
        self.buffers = buffers
        self.inodes = inodes
        self.downloads = downloads
        self.folders = folders
        self.plain = plain
        self.descriptors = descriptors
        self.kernel = kernel
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
        var held = Set(buffers.unsavedInodes())
        let device = mountDevice.withLock { device in
            if device == nil, let mountpoint = announcer.mountpoint { device = KernelFileLocks.device(of: mountpoint) }
            return device
        }
        var unknown: String?
        if let device {
            do { held.formUnion(try KernelFileLocks.lockedInodes(onDevice: device, table: lockTable)) } catch { unknown = "\(error)" }
        }
        return ItemsInUse(Set(held.compactMap { inode in
            if case .item(let id)? = inodes.key(of: inode) { id } else { nil }
        }), everyItemBecause: unknown)
    }

    /// Puts the bytes fetched for readers in place (sync asks before its transactions).
    func fillFetchedBytes() throws {
        try downloads.fillPending()
    }

    /// When each item was last read through this mount (sync's cache budget asks).
    func readTimes() -> [ItemID: Date] {
        downloads.readTimes()
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
        folders.noteNamespaceChange()
        let inode = inodes.kernelInode(for: .plain(path))
        if let inode {
            descriptors.forget(inode)
            kernel.invalidate(.content(Inode(inode)))
        }
        guard let parent = inodes.kernelInode(for: .plain(path.parent)) else {
            // Its folder may be new here too (sync wrote into a folder it made): the nearest
            // folder the kernel knows drops its listing and its entry for the next one down.
            var folder = path.parent
            while !folder.isRoot {
                if let known = inodes.kernelInode(for: .plain(folder.parent)) {
                    kernel.invalidate(.content(Inode(known)))
                    kernel.invalidate(.entry(parent: Inode(known), name: folder.name))
                    break
                }
                folder = folder.parent
            }
            return
        }
        kernel.invalidate(.content(Inode(parent)))
        switch (plain.exists(path), inode) {
        case (true, _):
            if inode == nil { kernel.invalidate(.entry(parent: Inode(parent), name: path.name)) }
            if !wasThere {
                announcer.announce(plain.isDirectory(path) ? .createdFolder(path) : .created(path, .plain(path)))
            } else if !plain.isDirectory(path) {
                announcer.announce(.modified(path))
            }
        case (false, let inode?):
            kernel.invalidate(.deletion(parent: Inode(parent), child: Inode(inode), name: path.name))
        case (false, nil):
            kernel.invalidate(.entry(parent: Inode(parent), name: path.name))
        }
    }
}
