import Foundation
import Glibc
import FuseKit
import Logging
import ShelfModel
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
/// This type builds the mount's parts and routes each request to the one that answers it:
/// names to ``MountNames``, what `stat` and listings show to ``NodeAttributes`` and
/// ``FolderListings``, bytes to ``FileContent``, `setattr` to ``AttributeEditor``, extended
/// attributes to ``ExtendedAttributes``, and namespace changes to ``NamespaceChanges``. Saves
/// are the ``SavePipeline``'s; the item index is written by the ``MountView`` alone.
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
    /// Longest name a folder entry may have (`NAME_MAX`).
    static let nameMax = 255

    /// What the handlers share (the store, the index's writer, inodes, names, plain files…).
    let parts: MountParts
    let listings: FolderListings
    let nodeAttributes: NodeAttributes
    let saves: SavePipeline
    let announcer: ChangeAnnouncer
    /// The process behind each request's thread, so a save is merged against what its own
    /// writer read (``ServedVersions``).
    let processes = RequestProcesses()
    /// What the sync engine asks of the mount (nothing of it is the filesystem's own).
    let syncView: MountSyncView
    /// The change-feed position the index was loaded at: following starts there.
    let loadedSequence: Int64
    private let content: FileContent
    private let editor: AttributeEditor
    private let extendedAttributes: ExtendedAttributes
    private let namespace: NamespaceChanges

    /// Prepares the plain-file area (top folders and every item's folder) and loads the index.
    /// `idleSaveDelay`: how long a written file is left alone before it is saved without a close.
    /// `sync`: the engine of a library linked to a cloud, which fills placeholders on first
    /// read (a reader waits at most `downloadTimeout`) and reports to `/.shelf/sync.json`.
    init(store: LibraryStore, idleSaveDelay: TimeInterval = 1, sync: (any MountSync)? = nil,
         downloadTimeout: Duration = .seconds(10), lockTable: String = KernelFileLocks.table) throws {
        let logger = Logger(label: "shelf.fs")
        let kernel = KernelCache()
        let announcer = ChangeAnnouncer(waitForInvalidations: { kernel.waitUntilDelivered() })
        let plain = try PlainFileArea(root: store.plainFilesFolder)
        let folders = ItemFolders(plain: plain)
        let (newItemFiles, recentUnlinks) = (NewItemFiles(), RecentUnlinks())
        let committer = ItemCommitter(store: store, conflicts: sync, recentUnlinks: recentUnlinks)
        let journal = try SavePipeline.replayJournal(of: store, into: committer, plain: plain, logger: logger)
        let buffers = ItemBuffers(journal: journal)
        let inodes = InodeTable(holdsWrites: { buffers.holdsUnsavedWrites($0) })
        for item in try store.repairInvalidItems() { logger.warning("moved \(item.path) to the trash: \(item.reason)") }
        loadedSequence = try store.lastSequence()
        let summaries = try store.summaries()
        let index = ItemIndex(summaries)
        let view = MountView(index: index, store: store, inodes: inodes, buffers: buffers, folders: folders,
                             newItemFiles: newItemFiles, kernel: kernel, announcer: announcer)
        // Filling a placeholder makes a version of the bytes readers were served while it was
        // being filled: a save made from them was read from that version.
        let served = ServedVersions()
        let downloads = PlaceholderDownloads(
            engine: sync.map { engine in .init(fetch: { try engine.fetch($0) }, fill: { try engine.fill($0) }) },
            timeout: downloadTimeout, filled: { records in
                for record in records {
                    view.recorded(record)
                    served.filled(record.item.id, version: record.version)
                }
            })
        parts = MountParts(store: store, view: view, inodes: inodes,
                           names: MountNames(inodes: inodes, index: index, newItemFiles: newItemFiles, plain: plain),
                           plain: plain, folders: folders, descriptors: PlainDescriptors(), newItemFiles: newItemFiles,
                           recentUnlinks: recentUnlinks, buffers: buffers, downloads: downloads,
                           statusFolder: StatusFolder(store: store, index: index, sync: sync), accessTimes: ItemAccessTimes(),
                           owners: ItemFileOwners(try store.owners()), kernel: kernel, namespaceLock: NSLock(), logger: logger)
        self.announcer = announcer
        listings = FolderListings(parts)
        saves = SavePipeline(parts, served: served, committer: committer, idleSaveDelay: idleSaveDelay)
        syncView = MountSyncView(parts, announcer: announcer, lockTable: lockTable)
        nodeAttributes = NodeAttributes(parts: parts)
        content = FileContent(parts: parts, attributes: nodeAttributes, saves: saves)
        editor = AttributeEditor(parts: parts, attributes: nodeAttributes, content: content, saves: saves)
        extendedAttributes = ExtendedAttributes(parts: parts, saves: saves)
        namespace = NamespaceChanges(parts: parts, attributes: nodeAttributes, editor: editor, saves: saves)
        plain.removeLeftovers()
        let itemFolders = Set(ItemKind.allCases.map { MountPath($0.folderName) })
            .union(summaries.map { MountPath($0.path).parent })
        for folder in itemFolders { try folders.ensure(folder) }
    }

    /// Starts saving in the background: writers' closes come from `closeWatcher` (every item
    /// folder is watched), the pipeline saves what is due.
    func startSaving(closeWatcher: CloseWatcher) {
        parts.folders.watch(with: closeWatcher) { [weak self] event in self?.handle(event) }
        saves.start()
    }

    // MARK: Names and listings

    func lookup(parent: UInt64, name: String) throws -> Entry {
        guard name.utf8.count <= Self.nameMax else { throw Errno.nameTooLong }
        let path = try parts.names.folderPath(parent).appending(name)
        guard let key = parts.names.resolve(path) else { return .negative(timeout: Self.negativeTimeout) }
        return try nodeAttributes.entry(for: key)
    }

    /// The kernel let go of `inode`: once it no longer knows it, everything kept for it goes,
    /// here and only here — its real file (if plain) is closed, the bytes it held (if a replaced
    /// item file, and saved) are dropped, and so is the note that the kernel's attributes of it
    /// are stale.
    func forget(_ inode: UInt64, count: UInt64) {
        guard parts.inodes.forget(inode, count: count) else { return }
        parts.descriptors.forget(inode)
        parts.buffers.releaseForgotten(inode)
        parts.kernel.staleAttributes.forgotten(inode)
    }

    typealias Listed = FolderListings.Listed
    typealias ListingCache = NodeAttributes.ListingCache
    typealias ListingEntry = NodeAttributes.ListingEntry

    /// The names in folder `inode` (see ``FolderListings``).
    func list(_ inode: UInt64) throws -> FolderListings.Listing {
        try listings.list(try parts.names.folderPath(inode))
    }

    /// `.` and `..` of folder `inode`.
    func dotEntries(of inode: UInt64) throws -> [Listed] {
        listings.dotEntries(of: try parts.names.folderPath(inode), inode: inode)
    }

    func listingCache(_ listing: FolderListings.Listing, of folder: UInt64) -> ListingCache {
        nodeAttributes.listingCache(listing, of: folder)
    }

    func entries(for listed: ArraySlice<Listed>) -> [ListingEntry] {
        nodeAttributes.entries(for: listed)
    }

    func sent(_ nodes: [InodeTable.Node]) {
        nodeAttributes.sent(nodes)
    }

    // MARK: Attributes

    func attributes(of inode: UInt64) throws -> FileAttributes {
        try nodeAttributes.attributes(of: inode)
    }

    func cachedAttributes(of inode: UInt64) throws -> CachedAttributes {
        try nodeAttributes.cachedAttributes(of: inode)
    }

    func setAttributes(_ inode: UInt64, changes: AttributeChanges,
                       by writer: @autoclosure () -> ProcessID? = nil) throws -> CachedAttributes {
        try editor.setAttributes(inode, changes: changes, by: writer())
    }

    func extendedAttribute(_ inode: UInt64, name: String) throws -> [UInt8] {
        try extendedAttributes.value(of: inode, name: name)
    }

    func extendedAttributeNames(_ inode: UInt64) throws -> [String] {
        try extendedAttributes.names(of: inode)
    }

    func setExtendedAttribute(_ inode: UInt64, name: String, value: [UInt8], mode: ExtendedAttributeMode) throws {
        try extendedAttributes.set(inode, name: name, value: value, mode: mode)
    }

    func removeExtendedAttribute(_ inode: UInt64, name: String) throws {
        try extendedAttributes.remove(inode, name: name)
    }

    func readLink(_ inode: UInt64) throws -> String {
        guard case .plain(let path) = parts.inodes.key(of: inode) else { throw Errno.invalid }
        return try parts.plain.readLink(path)
    }

    func statistics() throws -> FilesystemStatistics {
        try FilesystemStatistics.of(path: parts.plain.root.path)
    }

    // MARK: Content

    func read(_ inode: UInt64, offset: Int64, size: Int, for reader: @autoclosure () -> ProcessID? = nil) throws -> [UInt8] {
        try content.read(inode, offset: offset, size: size, for: reader())
    }

    func write(_ inode: UInt64, offset: Int64, data: [UInt8], appending: Bool,
               by writer: @autoclosure () -> ProcessID? = nil) throws -> Int {
        try content.write(inode, offset: offset, data: data, appending: appending, by: writer())
    }

    func makeDurable(_ inode: UInt64) throws {
        try content.makeDurable(inode)
    }

    func makeFolderDurable(_ inode: UInt64) throws {
        try content.makeFolderDurable(inode)
    }

    // MARK: Namespace

    func create(parent: UInt64, name: String, mode: UInt32, flags: OpenFlags, creator: FileOwner? = nil) throws -> CreatedFile {
        try namespace.create(parent: parent, name: name, mode: mode, flags: flags, creator: creator)
    }

    func makeNode(parent: UInt64, name: String, mode: UInt32, device: UInt64, creator: FileOwner? = nil) throws -> Entry {
        try namespace.makeNode(parent: parent, name: name, mode: mode, device: device, creator: creator)
    }

    func makeDirectory(parent: UInt64, name: String, mode: UInt32, creator: FileOwner? = nil) throws -> Entry {
        try namespace.makeDirectory(parent: parent, name: name, mode: mode, creator: creator)
    }

    func makeSymlink(parent: UInt64, name: String, target: String, creator: FileOwner? = nil) throws -> Entry {
        try namespace.makeSymlink(parent: parent, name: name, target: target, creator: creator)
    }

    func unlink(parent: UInt64, name: String) throws {
        try namespace.unlink(parent: parent, name: name)
    }

    func removeDirectory(parent: UInt64, name: String) throws {
        try namespace.removeDirectory(parent: parent, name: name)
    }

    func link(_ inode: UInt64, newParent: UInt64, newName: String) throws -> Entry {
        try namespace.link(inode, newParent: newParent, newName: newName)
    }

    func rename(parent: UInt64, name: String, newParent: UInt64, newName: String, flags: RenameFlags,
                by renamer: @autoclosure () -> ProcessID? = nil) throws {
        try namespace.rename(parent: parent, name: name, newParent: newParent, newName: newName, flags: flags,
                             by: renamer())
    }

    // MARK: Saving

    /// What the close watcher saw: a writer closed a file in a watched folder.
    private func handle(_ event: CloseWatcher.Event) {
        switch event {
        case .closed(let parent, let name):
            if let inode = parts.names.existingInode(parent: parent.rawValue, name: name) { saves.scheduler.closed(inode) }
        case .watching(let folder):
            // Closes in the folder before its watch began were not seen (a file written into
            // a folder just made): save what waits there soon, unless it is written again.
            guard let folder = try? parts.names.folderPath(folder.rawValue) else { return }
            for inode in parts.names.inodes(parts.buffers.unsavedInodes(), in: folder) { saves.scheduler.soon(inode) }
        case .eventsLost:
            for inode in parts.buffers.unsavedInodes() { saves.scheduler.closed(inode) }
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
