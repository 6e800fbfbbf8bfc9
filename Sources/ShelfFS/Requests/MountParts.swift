import Foundation
import Logging
import ShelfStore

/// What the mount's handlers share: the store, the item index and its one writer, the inodes
/// and names, the plain-file area, unsaved bytes, downloads and the kernel's caches. Built once
/// by ``ShelfFileSystem``; each handler (``FileContent``, ``NamespaceChanges``, the
/// ``SavePipeline``…) takes what it needs from here, beside the handlers it calls.
struct MountParts: Sendable {
    let store: LibraryStore
    let view: MountView
    var index: ItemIndex { view.index }
    let inodes: InodeTable
    let names: MountNames
    let plain: PlainFileArea
    let folders: ItemFolders
    let descriptors: PlainDescriptors
    let newItemFiles: NewItemFiles
    let recentUnlinks: RecentUnlinks
    let buffers: ItemBuffers
    let downloads: PlaceholderDownloads
    let statusFolder: StatusFolder
    let accessTimes: ItemAccessTimes
    let owners: ItemFileOwners
    let kernel: KernelCache
    /// Held by namespace changes and by a new file's first save, which names it in the store
    /// (see the lock order in ``ShelfFileSystem``).
    let namespaceLock: NSLock
    let logger: Logger
}
