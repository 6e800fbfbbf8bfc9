import Foundation
import Glibc
import FuseKit
import Logging
import ShelfModel
import ShelfMarkdown
import ShelfStore
import ShelfSystem

/// The filesystem a Shelf library shows: item files generated from the store, everything else
/// stored verbatim in the plain-file area, and the `/.shelf/` status folder.
///
/// Every operation is a synchronous method that throws an ``Errno``-convertible error, so the
/// dispatch tests drive it without a kernel; ``ShelfFuseOperations`` forwards the kernel's requests here.
///
/// ## Stateless opens
/// The kernel opens and closes files without asking (FuseKit's "Stateless files"): a cached
/// `cat` costs no request at all. Reads and writes arrive by inode. An item inode reads from the
/// store, from its ``ItemBuffer`` while it holds unsaved writes or the bytes of a version its
/// name has moved on from, or from ``RecentSaves`` right after a save; a plain inode reads and
/// writes its real file through ``PlainDescriptors``. Writes to items go through the
/// ``SavePipeline``: saved when the writer closes the file, after a pause in writing, on
/// `fsync`, and before the file is renamed or removed.
///
/// This type routes requests: names (``resolve(_:)``), attributes, reads and writes, and the
/// namespace changes in `ShelfFileSystem+Namespace`; listings are ``FolderListings``', saves the
/// pipeline's, the kernel's caches ``KernelCache``'s.
///
/// ## Kernel caching
/// Entries and attributes of items and folders are cached for a minute, and pages for as long
/// as the kernel likes: changes that do not come through this mount are pushed with the notifier
/// (``ChangeFollower``). Names that do not exist are cached briefly, status files not at all.
/// A file replaced by a rename keeps showing the bytes it had to the programs that still read
/// it (its inode is frozen at that version), so a reader never mixes two versions of a save.
///
/// ## Parallelism and locks
/// The lock order, outermost first. A thread holding one may take only those below it:
///
/// 1. `namespaceLock` — namespace changes (create, rename, unlink, folder changes, first saves
///    of new item files), so two renames never interleave. Held while waiting for the store.
/// 2. An item buffer's save turn (``ItemBuffer``) — one save of a buffer at a time. Held while
///    waiting for the store.
/// 3. The store's writer (`LibraryStore.write`). Inside a transaction no mount lock above is
///    ever taken, and nothing waits for the mount: sync asks which items are busy before its
///    transaction (``busyItems()``). Debug builds assert both.
/// 4. Short locks, held for memory work only and never while waiting for anything. Where one
///    is taken inside another, in this order: the inode table (which asks the buffer table
///    whether an inode holds unsaved writes before it drops it), the buffer table (which reads
///    the item index in ``ItemBuffers/freeze``), a buffer's state, the item index. The rest are
///    leaves: descriptors, served versions, recent saves, recent unlinks (read inside a save's
///    transaction), items' access times and owners, the kernel cache's queue, the log of
///    repeated failures.
///
/// Reads, writes and saves of existing items never take `namespaceLock`, so readers and
/// writers of different files never queue behind one another; a namespace change saves the
/// file it moves before it takes `namespaceLock`. A request that waits longer than a few
/// seconds is logged with its operation and path (FuseKit's request watch), so a wedge names
/// itself.
///
/// ## Deadlocks
/// No handler touches the mount itself or waits for the kernel: invalidations only queue on
/// FuseKit's notifier, whose own thread talks to the kernel, and the close watcher adds its
/// watches on its own thread.
final class ShelfFileSystem: Sendable {
    static let cacheTimeout: Duration = .seconds(60)
    static let negativeTimeout: Duration = .milliseconds(500)
    static let statusTimeout: Duration = .zero

    let store: LibraryStore
    let index: ItemIndex
    let inodes: InodeTable
    let descriptors = PlainDescriptors()
    let kernel = KernelCache()
    let plain: PlainFileArea
    let folders: ItemFolders
    let newItemFiles = NewItemFiles()
    let recentUnlinks = RecentUnlinks()
    let accessTimes = ItemAccessTimes()
    let owners: ItemFileOwners
    let listings: FolderListings
    let saves: SavePipeline
    let statusFolder: StatusFolder
    let logger = Logger(label: "shelf.fs")
    let namespaceLock = NSLock()
    let downloads: PlaceholderDownloads
    let announcer: ChangeAnnouncer
    /// The process behind each request's thread, so a save is merged against what its own
    /// writer read (``ServedVersions``).
    let processes = RequestProcesses()
    /// What the sync engine asks of the mount (nothing of it is the filesystem's own).
    let syncView: MountSyncView
    /// The change-feed position the index was loaded at: following starts there.
    let loadedSequence: Int64

    /// Prepares the plain-file area (top folders and every item's folder) and loads the index.
    /// `idleSaveDelay`: how long a written file is left alone before it is saved without a close.
    /// `sync`: the engine of a library linked to a cloud, which fills placeholders on first
    /// read (a reader waits at most `downloadTimeout`) and reports to `/.shelf/sync.json`.
    init(store: LibraryStore, idleSaveDelay: TimeInterval = 1, sync: (any MountSync)? = nil,
         downloadTimeout: Duration = .seconds(10), lockTable: String = KernelFileLocks.table) throws {
        self.store = store
        announcer = ChangeAnnouncer(waitForInvalidations: { [kernel] in kernel.waitUntilDelivered() })
        plain = try PlainFileArea(root: store.plainFilesFolder)
        folders = ItemFolders(plain: plain)
        let committer = ItemCommitter(store: store, conflicts: sync, recentUnlinks: recentUnlinks)
        let journal = try SavePipeline.replayJournal(of: store, into: committer, plain: plain, logger: logger)
        let buffers = ItemBuffers(journal: journal)
        inodes = InodeTable(holdsWrites: { [buffers] in buffers.holdsUnsavedWrites($0) })
        for item in try store.repairInvalidItems() { logger.warning("moved \(item.path) to the trash: \(item.reason)") }
        loadedSequence = try store.lastSequence()
        owners = ItemFileOwners(try store.owners())
        let summaries = try store.summaries()
        index = ItemIndex(summaries)
        // Filling a placeholder makes a version of the bytes readers were served while it was
        // being filled: a save made from them was read from that version.
        let served = ServedVersions()
        downloads = PlaceholderDownloads(
            engine: sync.map { engine in .init(fetch: { try engine.fetch($0) }, fill: { try engine.fill($0) }) },
            timeout: downloadTimeout, filled: { [index] records in
                for record in records {
                    index.put(ItemSummary(record))
                    served.filled(record.item.id, version: record.version)
                }
            })
        statusFolder = StatusFolder(store: store, index: index, sync: sync)
        listings = FolderListings(index: index, inodes: inodes, plain: plain, folders: folders, newItemFiles: newItemFiles)
        saves = SavePipeline(store: store, buffers: buffers, idleSaveDelay: idleSaveDelay, index: index, inodes: inodes,
                             plain: plain, folders: folders, newItemFiles: newItemFiles, owners: owners, kernel: kernel,
                             served: served, committer: committer, namespaceLock: namespaceLock, logger: logger)
        syncView = MountSyncView(buffers: buffers, inodes: inodes, downloads: downloads, folders: folders, plain: plain,
                                 descriptors: descriptors, kernel: kernel, announcer: announcer, lockTable: lockTable)
        plain.removeLeftovers()
        let itemFolders = Set(ItemKind.allCases.map { MountPath($0.folderName) })
            .union(summaries.map { MountPath($0.path).parent })
        for folder in itemFolders { try folders.ensure(folder) }
    }

    /// Starts saving in the background: writers' closes come from `closeWatcher` (every item
    /// folder is watched), the pipeline saves what is due.
    func startSaving(closeWatcher: CloseWatcher) {
        folders.watch(with: closeWatcher) { [weak self] event in self?.handle(event) }
        saves.start()
    }

    /// Queues `invalidation` for the kernel (safe from request handlers: it only queues).
    func invalidate(_ invalidation: Notifier.Invalidation) {
        kernel.invalidate(invalidation)
    }

    // MARK: Names

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

    // MARK: Lookup and listing

    func lookup(parent: UInt64, name: String) throws -> Entry {
        guard name.utf8.count <= Self.nameMax else { throw Errno.nameTooLong }
        let path = try folderPath(parent).appending(name)
        guard let key = resolve(path) else { return .negative(timeout: Self.negativeTimeout) }
        return try entry(for: key)
    }

    /// The kernel let go of `inode`: once it no longer knows it, everything kept for it goes,
    /// here and only here — its real file (if plain) is closed, the bytes it held (if a replaced
    /// item file, and saved) are dropped, and so is the note that the kernel's attributes of it
    /// are stale.
    func forget(_ inode: UInt64, count: UInt64) {
        guard inodes.forget(inode, count: count) else { return }
        descriptors.forget(inode)
        saves.buffers.releaseIfSaved(inode)
        kernel.staleAttributes.forgotten(inode)
    }

    typealias Listed = FolderListings.Listed

    /// The names in folder `inode` (see ``FolderListings``).
    func list(_ inode: UInt64) throws -> FolderListings.Listing {
        try listings.list(try folderPath(inode))
    }

    /// `.` and `..` of folder `inode`.
    func dotEntries(of inode: UInt64) throws -> [Listed] {
        listings.dotEntries(of: try folderPath(inode), inode: inode)
    }

    /// The kernel received entries of `nodes` (a lookup, or the names of a `readdirplus` batch
    /// that fit): one more lookup of each, and their attributes are fresh there.
    func sent(_ nodes: [InodeTable.Node]) {
        inodes.countLookups(nodes)
        kernel.staleAttributes.refreshed(nodes.lazy.map(\.inode))
    }

    /// What the kernel does with its cached copy of a folder's listing when the folder is opened.
    enum ListingCache: Equatable {
        /// No copy is kept: the status folder, whose files change with every save.
        case none
        /// The kernel lists from its copy without asking the mount (filling it first if it has
        /// none yet). Names with stale attributes cost a `getattr` each at their next `stat`.
        case serve
        /// The kernel drops its copy and fills it again from this open's `readdirplus`, which
        /// refreshes every listed name's attributes.
        case refill
    }

    /// A `getattr` costs about as much as this many names of a `readdirplus` listing (measured:
    /// a request about 25 µs, a listing of 100,000 names about 0.3 s).
    static let namesListedPerRequest = 8

    /// How the kernel may cache `folder`'s listing for this open: remade when its names changed
    /// since the last listing, or when that is cheaper than a `getattr` for each name with stale
    /// attributes (after reading most of a folder's files); served from the kernel's copy
    /// otherwise — so a few files read in a large folder never cost a listing of all of it.
    func listingCache(_ listing: FolderListings.Listing, of folder: UInt64) -> ListingCache {
        guard case .plain = inodes.key(of: folder) else { return .none }
        if listing.namesChanged { return .refill }
        let worthRemaking = max(1, listing.names.count / Self.namesListedPerRequest)
        return kernel.staleAttributes.contains(atLeast: worthRemaking, of: listing.names.lazy.map(\.inode)) ? .refill : .serve
    }

    /// One name of a `readdirplus` batch.
    enum ListingEntry {
        /// The name with its entry and attributes: one more lookup of its inode (`node`) for
        /// the kernel.
        case full(Entry, InodeTable.Node)
        /// The name alone: the kernel already holds the item's entry, fresh, or its file was
        /// replaced since the listing was made.
        case nameOnly
        /// The name went away since the listing was made.
        case gone
    }

    /// The entries of `listed` names for one `readdirplus` batch. An item whose entry the kernel
    /// holds fresh is sent as a name alone, which the kernel lists without looking it up and
    /// updating it again — when a large folder's cached listing has to be made again without
    /// anything having changed, it then costs little more than a plain `readdir`. Items'
    /// attributes come from one pass over the index under one lock, not a lookup per name; the
    /// names with held bytes are asked one by one. A name whose file was replaced since the
    /// listing was made (see ``ChangeFollower``) is sent alone too: the kernel looks up its new
    /// file, rather than keeping the name on the old one.
    func entries(for listed: ArraySlice<Listed>) -> [ListingEntry] {
        let held = saves.buffers.heldInodes()
        let states = inodes.entryStates(since: .now - Self.cacheTimeout / 2, of: listed.map(\.node))
        let nameOnly = zip(itemsFreshInKernel(listed, sent: states.map(\.sent), except: held), states).map { $0 || !$1.isCurrent }
        var shapes = index.shapes(zip(listed, nameOnly).compactMap { $1 ? nil : $0.slot }).makeIterator()
        return zip(listed, nameOnly).map { listed, nameOnly in
            if nameOnly { return .nameOnly }
            let shape = listed.slot.flatMap { _ in shapes.next() ?? nil }
            if let shape, !held.contains(listed.inode) {
                var attributes = Self.fileAttributes(listed.inode, size: shape.size, modified: FileTime(shape.modified),
                                                     permissions: shape.permissions)
                attributes.isOnlineOnly = shape.isPlaceholder
                if let id = listed.slot?.id { showKept(id, in: &attributes) }
                return .full(Entry(attributes: attributes, attributeTimeout: Self.cacheTimeout,
                                   entryTimeout: Self.cacheTimeout), listed.node)
            }
            guard var attributes = try? attributes(of: listed.key, inode: listed.inode) else { return .gone }
            let node = sharedNode(listed.node, key: listed.key, attributes: &attributes)
            let timeout = timeout(for: listed.key)
            return .full(Entry(attributes: attributes, attributeTimeout: timeout, entryTimeout: timeout), node)
        }
    }

    /// For each of `listed`, whether it is an item (without bytes `held` unsaved) whose entry the
    /// kernel holds fresh: it got it within the last half of the entry timeout (`sent`) and has
    /// not marked the attributes stale since (nor been told to drop them). Half the timeout, so
    /// that a name listed alone still has a while before the kernel would look it up again.
    private func itemsFreshInKernel(_ listed: ArraySlice<Listed>, sent recent: [Bool], except held: Set<UInt64>) -> [Bool] {
        let candidates = listed.map { $0.slot != nil && !held.contains($0.inode) }
        let stale = kernel.staleAttributes.areStale(listed.map(\.inode))
        return candidates.indices.map { candidates[$0] && recent[$0] && !stale[$0] }
    }

    // MARK: Saving

    /// What the close watcher saw: a writer closed a file in a watched folder.
    private func handle(_ event: CloseWatcher.Event) {
        switch event {
        case .closed(let parent, let name):
            guard let path = try? folderPath(parent.rawValue).appending(name), let key = resolve(path),
                  let inode = inodes.existingInode(for: key) else { return }
            saves.scheduler.closed(inode)
        case .watching(let folder):
            // Closes in the folder before its watch began were not seen (a file written into
            // a folder just made): save what waits there soon, unless it is written again.
            guard let folder = try? folderPath(folder.rawValue) else { return }
            for inode in saves.buffers.unsavedInodes() {
                if let key = inodes.key(of: inode), path(of: key)?.parent == folder { saves.scheduler.soon(inode) }
            }
        case .eventsLost:
            for inode in saves.buffers.unsavedInodes() { saves.scheduler.closed(inode) }
        }
    }

}

extension FileAttributes {
    /// The attributes of a real file of the plain-file area, under the mount's inode number.
    init(_ info: stat, inode: Inode) {
        func time(_ spec: timespec) -> FileTime { FileTime(seconds: Int64(spec.tv_sec), nanoseconds: Int32(spec.tv_nsec)) }
        self.init(inode: inode, kind: FileKind(mode: info.st_mode) ?? .regular, permissions: info.st_mode & 0o7777,
                  size: UInt64(info.st_size), linkCount: UInt32(info.st_nlink), uid: info.st_uid, gid: info.st_gid,
                  accessTime: time(info.st_atim), modificationTime: time(info.st_mtim), changeTime: time(info.st_ctim),
                  deviceNumber: UInt64(info.st_rdev))
    }
}

extension timespec {
    init(_ time: FileTime) {
        self.init(tv_sec: Int(time.seconds), tv_nsec: Int(time.nanoseconds))
    }
}
