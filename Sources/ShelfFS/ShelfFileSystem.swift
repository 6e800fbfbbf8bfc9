import Foundation
import Glibc
import FuseKit
import Logging
import ShelfModel
import ShelfMarkdown
import ShelfStore
import ShelfSync
import Synchronization

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
/// 4. Short locks, each a leaf held for memory work only and never while waiting for anything:
///    a buffer's state, the buffer table, item index, inode table, descriptors, served
///    versions, recent saves, the kernel cache's queue.
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
    let inodes = InodeTable()
    let descriptors = PlainDescriptors()
    let kernel = KernelCache()
    let plain: PlainFileArea
    let folders: ItemFolders
    let newItemFiles = NewItemFiles()
    let listings: FolderListings
    let saves: SavePipeline
    let statusFolder: StatusFolder
    let logger = Logger(label: "shelf.fs")
    let namespaceLock = NSLock()
    let downloads: PlaceholderDownloads
    let announcer: ChangeAnnouncer
    /// The mount's device number, for finding its files in `/proc/locks`; learnt on first need.
    private let mountDevice = Mutex<dev_t?>(nil)
    /// When each item was last read through the mount: a cache budget evicts the oldest first.
    let lastReads = Mutex<[ItemID: Date]>([:])
    /// The change-feed position the index was loaded at: following starts there.
    let loadedSequence: Int64

    /// Prepares the plain-file area (top folders and every item's folder) and loads the index.
    /// `idleSaveDelay`: how long a written file is left alone before it is saved without a close.
    /// `sync`: the engine of a library linked to a cloud, which fills placeholders on first
    /// read (a reader waits at most `downloadTimeout`) and reports to `/.shelf/sync.json`.
    init(store: LibraryStore, idleSaveDelay: TimeInterval = 1, sync: SyncEngine? = nil,
         downloadTimeout: Duration = .seconds(10)) throws {
        self.store = store
        announcer = ChangeAnnouncer(waitForInvalidations: { [kernel] in kernel.waitUntilDelivered() })
        plain = PlainFileArea(root: store.plainFilesFolder)
        folders = ItemFolders(plain: plain)
        var asideCopy: (@Sendable (ItemID, StoreWriter) throws -> AsideCopy?)?
        if let sync { asideCopy = { id, writer in try sync.asideCopy(ofCurrentStateOf: id, with: writer) } }
        let committer = ItemCommitter(store: store, asideCopy: asideCopy)
        let journal = try SavePipeline.replayJournal(of: store, into: committer, logger: logger)
        for item in try store.repairInvalidItems() { logger.warning("moved \(item.path) to the trash: \(item.reason)") }
        loadedSequence = try store.lastSequence()
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
                    served.served(record.item.id, version: record.version)
                }
            })
        statusFolder = StatusFolder(store: store, index: index, sync: sync)
        listings = FolderListings(index: index, inodes: inodes, plain: plain, folders: folders, newItemFiles: newItemFiles)
        saves = SavePipeline(store: store, journal: journal, idleSaveDelay: idleSaveDelay, index: index, inodes: inodes,
                             plain: plain, folders: folders, newItemFiles: newItemFiles, kernel: kernel,
                             served: served, committer: committer, namespaceLock: namespaceLock, logger: logger)
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
            if let summary = index.summary(at: path) { return .item(summary.id) }
            if let pending = newItemFiles.pending(at: path) { return .newItemFile(pending) }
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

    // MARK: Attributes

    func attributes(of inode: UInt64) throws -> FileAttributes {
        guard let key = inodes.key(of: inode) else { throw Errno.noEntry }
        return try attributes(of: key, inode: inode)
    }

    func attributes(of key: NodeKey, inode: UInt64) throws -> FileAttributes {
        switch key {
        case .plain(let path):
            return FileAttributes(try plain.status(path), inode: Inode(inode))
        case .item(let id):
            let shape = try itemShape(id, inode: inode)
            var attributes = Self.fileAttributes(inode, size: shape.size, modified: FileTime(shape.modified),
                                                 permissions: shape.permissions)
            attributes.isOnlineOnly = placeholder(inode) != nil
            return attributes
        case .newItemFile:
            if let shape = saves.buffers.buffer(of: inode)?.shape {
                return Self.fileAttributes(inode, size: shape.size, modified: FileTime(shape.modified),
                                           permissions: shape.permissions ?? ItemRecord.defaultPermissions)
            }
            // Its first save made it an item meanwhile (and then let go of its buffer).
            if let current = inodes.key(of: inode), case .item = current { return try attributes(of: current, inode: inode) }
            return Self.fileAttributes(inode, size: 0, modified: .now, permissions: ItemRecord.defaultPermissions)
        case .status(let name):
            if name.isEmpty {
                let now = FileTime.now
                return FileAttributes(inode: Inode(inode), kind: .directory, permissions: 0o555, linkCount: 2,
                                      accessTime: now, modificationTime: now, changeTime: now)
            }
            let snapshot = try statusFolder.refreshedSnapshot(of: name)
            return FileAttributes(inode: Inode(inode), kind: .regular, permissions: 0o444,
                                  size: UInt64(snapshot.bytes.count), accessTime: snapshot.modified,
                                  modificationTime: snapshot.modified, changeTime: snapshot.modified)
        }
    }

    /// Size and modification time of an item inode: of its held bytes if any (unsaved writes, or
    /// the version a replaced file shows), otherwise of the item as the index knows it. An
    /// item deleted while a program still holds its file shows its last bytes.
    private func itemShape(_ id: ItemID, inode: UInt64) throws -> (size: Int, modified: Date, permissions: UInt32) {
        // The buffer first, then the index: a save updates the index before it lets go of the
        // buffer, so read in this order the two never show a state older than both.
        if let shape = saves.buffers.buffer(of: inode)?.shape {
            return (shape.size, shape.modified,
                    shape.permissions ?? index.summary(id: id)?.permissions ?? ItemRecord.defaultPermissions)
        }
        if let summary = index.summary(id: id) {
            saves.served.sized(inode, as: summary.version)
            return (summary.size, summary.modified, summary.permissions)
        }
        guard let file = try store.file(id: id) else { throw Errno.noEntry }
        return (file.content.count, Date(), ItemRecord.defaultPermissions)
    }

    private static func fileAttributes(_ inode: UInt64, size: Int, modified: FileTime, permissions: UInt32) -> FileAttributes {
        FileAttributes(inode: Inode(inode), kind: .regular, permissions: permissions, size: UInt64(size),
                       accessTime: modified, modificationTime: modified, changeTime: modified)
    }

    /// Attributes as the kernel caches them (`getattr`, `setattr`): they are fresh there now.
    func cachedAttributes(of inode: UInt64) throws -> CachedAttributes {
        let attributes = try attributes(of: inode)
        kernel.staleAttributes.refreshed([inode])
        return CachedAttributes(attributes, timeout: timeout(for: inodes.key(of: inode)))
    }

    private func timeout(for key: NodeKey?) -> Duration {
        if case .status = key { return Self.statusTimeout }
        return Self.cacheTimeout
    }

    /// The kernel entry for `key`, which gives the kernel one more lookup of its inode.
    func entry(for key: NodeKey) throws -> Entry {
        let node = inodes.nodes(for: [key])[0]
        let attributes = try attributes(of: key, inode: node.inode)
        sent([node])
        let timeout = timeout(for: key)
        return Entry(attributes: attributes, attributeTimeout: timeout, entryTimeout: timeout)
    }

    // MARK: Lookup and listing

    func lookup(parent: UInt64, name: String) throws -> Entry {
        let path = try folderPath(parent).appending(name)
        guard let key = resolve(path) else { return .negative(timeout: Self.negativeTimeout) }
        return try entry(for: key)
    }

    /// The kernel let go of `inode`: once it no longer knows it, its real file (if plain) is
    /// closed and the bytes it held (if a replaced item file) are dropped.
    func forget(_ inode: UInt64, count: UInt64) {
        guard inodes.forget(inode, count: count) else { return }
        descriptors.forget(inode)
        saves.served.forget(inode)
        saves.buffers.releaseIfSaved(inode)
    }

    typealias Listed = FolderListings.Listed

    /// The names in folder `inode` (see ``FolderListings``).
    func list(_ inode: UInt64) throws -> [Listed] {
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

    /// How the kernel may cache `folder`'s listing for this open: remade when that is cheaper
    /// than a `getattr` for each name with stale attributes (after reading most of a folder's
    /// files), served from the kernel's copy otherwise — so a few files read in a large folder
    /// never cost a listing of all of it.
    func listingCache(_ listed: [Listed], of folder: UInt64) -> ListingCache {
        guard case .plain = inodes.key(of: folder) else { return .none }
        let worthRemaking = max(1, listed.count / Self.namesListedPerRequest)
        return kernel.staleAttributes.contains(atLeast: worthRemaking, of: listed.lazy.map(\.inode)) ? .refill : .serve
    }

    /// One name of a `readdirplus` batch.
    enum ListingEntry {
        /// The name with its entry and attributes: one more lookup of its inode for the kernel.
        case full(Entry)
        /// The name alone: the kernel already holds the item's entry, fresh.
        case nameOnly
        /// The name went away since the listing was made.
        case gone
    }

    /// The entries of `listed` names for one `readdirplus` batch. An item whose entry the kernel
    /// holds fresh is sent as a name alone, which the kernel lists without looking it up and
    /// updating it again — when a large folder's cached listing has to be made again without
    /// anything having changed, it then costs little more than a plain `readdir`. Items'
    /// attributes come from one pass over the index under one lock, not a lookup per name; the
    /// names with held bytes are asked one by one.
    func entries(for listed: ArraySlice<Listed>) -> [ListingEntry] {
        let held = saves.buffers.heldInodes()
        let nameOnly = itemsFreshInKernel(listed, except: held)
        var shapes = index.shapes(zip(listed, nameOnly).compactMap { $1 ? nil : $0.slot }).makeIterator()
        var sized: [(inode: UInt64, version: Int64)] = []
        defer { saves.served.sized(sized) }
        return zip(listed, nameOnly).map { listed, nameOnly in
            if nameOnly { return .nameOnly }
            let shape = listed.slot.flatMap { _ in shapes.next() ?? nil }
            if let shape, !held.contains(listed.inode) {
                sized.append((listed.inode, shape.version))
                var attributes = Self.fileAttributes(listed.inode, size: shape.size, modified: FileTime(shape.modified),
                                                     permissions: shape.permissions)
                attributes.isOnlineOnly = shape.isPlaceholder
                return .full(Entry(attributes: attributes, attributeTimeout: Self.cacheTimeout,
                                   entryTimeout: Self.cacheTimeout))
            }
            guard let attributes = try? attributes(of: listed.key, inode: listed.inode) else { return .gone }
            let timeout = timeout(for: listed.key)
            return .full(Entry(attributes: attributes, attributeTimeout: timeout, entryTimeout: timeout))
        }
    }

    /// For each of `listed`, whether it is an item (without bytes `held` unsaved) whose entry the
    /// kernel holds fresh: it got it within the last half of the entry timeout and has not
    /// marked the attributes stale since (nor been told to drop them). Half the timeout, so that
    /// a name listed alone still has a while before the kernel would look it up again.
    private func itemsFreshInKernel(_ listed: ArraySlice<Listed>, except held: Set<UInt64>) -> [Bool] {
        let candidates = listed.map { $0.slot != nil && !held.contains($0.inode) }
        let recent = inodes.entriesSent(since: .now - Self.cacheTimeout / 2, of: listed.map(\.node))
        let stale = kernel.staleAttributes.areStale(listed.map(\.inode))
        return candidates.indices.map { candidates[$0] && recent[$0] && !stale[$0] }
    }

    // MARK: Reading and writing

    /// The items whose files a program holds now — unsaved writes in them, or a lock on them —
    /// so changes from the cloud must wait; every item when the kernel's lock table cannot be
    /// read (fail closed). Takes only short locks (never waits for the store),
    /// so sync asks it before its transactions. Never call it from a request handler: the first
    /// call asks the mount for its device.
    func busyItems() -> ItemsInUse {
        assert(!LibraryStore.isWritingOnThisThread, "sync must ask which items are busy before its transaction")
        var held = Set(saves.buffers.unsavedInodes())
        let device = mountDevice.withLock { device in
            if device == nil, let mountpoint = announcer.mountpoint { device = KernelFileLocks.device(of: mountpoint) }
            return device
        }
        var unknown: String?
        if let device {
            do { held.formUnion(try KernelFileLocks.lockedInodes(onDevice: device)) } catch { unknown = "\(error)" }
        }
        return ItemsInUse(Set(held.compactMap { inode in
            if case .item(let id)? = inodes.key(of: inode) { id } else { nil }
        }), everyItemBecause: unknown)
    }

    /// Sync wrote or removed the plain file at `path` behind the mount's back: the kernel
    /// drops what it cached of it (name, attributes, pages) and the mount its open descriptor,
    /// which may name the file it replaced; watchers of its folder hear of a new or changed
    /// file from the announcer (a removed one from the kernel's delete notification).
    func plainFileChangedElsewhere(_ path: MountPath) {
        let inode = inodes.kernelInode(for: .plain(path))
        if let inode {
            descriptors.forget(inode)
            invalidate(.content(Inode(inode)))
        }
        guard let parent = inodes.kernelInode(for: .plain(path.parent)) else { return }
        invalidate(.content(Inode(parent)))
        switch (plain.exists(path), inode) {
        case (true, nil):
            invalidate(.entry(parent: Inode(parent), name: path.name))
            announcer.announce(plain.isDirectory(path) ? .createdFolder(path) : .created(path, .plain(path)))
        case (true, _?):
            if !plain.isDirectory(path) { announcer.announce(.modified(path)) }
        case (false, let inode?):
            invalidate(.deletion(parent: Inode(parent), child: Inode(inode), name: path.name))
        case (false, nil):
            invalidate(.entry(parent: Inode(parent), name: path.name))
        }
    }

    /// The item `inode` stands for while its bytes are still in the cloud (and nothing
    /// written to it waits): reading it downloads it first.
    func placeholder(_ inode: UInt64) -> ItemID? {
        guard downloads.isLinked, case .item(let id)? = inodes.key(of: inode), index.summary(id: id)?.isPlaceholder == true,
              saves.buffers.buffer(of: inode) == nil, downloads.fetchedContent(of: id) == nil else { return nil }
        return id
    }

    /// The bytes a read of item inode `inode` serves, and their version: those of the version
    /// whose size the kernel was last given, which cuts every read there until the change
    /// follower's invalidation reaches it — so a reader never gets a newer version cut short.
    private func storedBytes(of id: ItemID, inode: UInt64) throws -> (version: Int64, content: Data) {
        let version = saves.served.sizedVersion(of: inode) ?? index.version(of: id)
        if let version, let content = saves.recentSaves.content(of: id, version: version) { return (version, content) }
        guard let file = try store.file(id: id) else { throw Errno.noEntry }
        if let version, version != file.version, let content = try store.file(id: id, version: version) {
            return (version, content)
        }
        // Evicted elsewhere (`shelf evict`) and not in the index yet: its bytes are the cloud's.
        if file.content.count != index.summary(id: id)?.size, try store.downloadState(of: id) != nil {
            throw PlaceholderDownloads.NotHere(id: id)
        }
        return (file.version, file.content)
    }

    /// Up to `size` bytes of `inode` at `offset`.
    func read(_ inode: UInt64, offset: Int64, size: Int) throws -> [UInt8] {
        guard let key = inodes.key(of: inode) else { throw Errno.noEntry }
        kernel.staleAttributes.markStale(inode)
        switch key {
        case .item(let id):
            if downloads.isLinked { lastReads.withLock { $0[id] = Date() } }
            if let bytes = saves.buffers.buffer(of: inode)?.read(offset: Int(offset), size: size) { return bytes }
            if downloads.isLinked, let content = downloads.fetchedContent(of: id) {
                if let version = index.version(of: id) { saves.served.served(id, version: version) }
                return Self.slice(content, offset: offset, size: size)
            }
            let (version, content) = try storedBytes(of: id, inode: inode)
            saves.served.served(id, version: version)
            return Self.slice(content, offset: offset, size: size)
        case .newItemFile:
            if let bytes = saves.buffers.buffer(of: inode)?.read(offset: Int(offset), size: size) { return bytes }
            // Its first save made it an item meanwhile (and then let go of its buffer).
            if case .item? = inodes.key(of: inode) { return try read(inode, offset: offset, size: size) }
            return []
        case .plain(let path):
            let descriptor = try descriptors.descriptor(of: inode, path: path, in: plain, writable: false)
            var bytes = [UInt8](repeating: 0, count: size)
            let count = bytes.withUnsafeMutableBytes { pread(descriptor.fd, $0.baseAddress, size, off_t(offset)) }
            guard count >= 0 else { throw Errno.current }
            bytes.removeSubrange(count...)
            return bytes
        case .status(let name):
            return Self.slice(try statusFolder.snapshot(of: name).bytes, offset: offset, size: size)
        }
    }

    private static func slice(_ bytes: some Collection<UInt8>, offset: Int64, size: Int) -> [UInt8] {
        Array(bytes.dropFirst(Int(offset)).prefix(size))
    }

    /// Writes `data` at `offset` (at the end when `appending`); returns the count written.
    /// Item files' writes go to the ``SavePipeline``, to be saved later.
    func write(_ inode: UInt64, offset: Int64, data: [UInt8], appending: Bool) throws -> Int {
        guard let key = inodes.key(of: inode) else { throw Errno.noEntry }
        kernel.staleAttributes.markStale(inode)
        switch key {
        case .item, .newItemFile:
            // Writes land among the bytes the file has: a placeholder gets them first.
            if let id = placeholder(inode) { try downloadNow(id) }
            try saves.apply(.write(offset: Int(offset), data: data, appending: appending), to: inode, key: key)
            return data.count
        case .plain(let path):
            let descriptor = try descriptors.descriptor(of: inode, path: path, in: plain, writable: true)
            var position = off_t(offset)
            if appending {
                var info = stat()
                guard fstat(descriptor.fd, &info) == 0 else { throw Errno.current }
                position = info.st_size
            }
            let count = data.withUnsafeBytes { pwrite(descriptor.fd, $0.baseAddress, data.count, position) }
            guard count >= 0 else { throw Errno.current }
            return count
        case .status:
            throw Errno.accessDenied
        }
    }

    /// Downloads placeholder `id` before a write changes it, and brings the index up to date
    /// so the write starts from the downloaded bytes. A failure is `EIO`, never "no such file".
    private func downloadNow(_ id: ItemID) throws {
        do {
            try downloads.waitUntilDownloaded(id)
        } catch {
            logger.warning("cannot download \(id) before writing to it: \(error)")
            throw Errno.ioError
        }
        if let summary = try store.summary(id: id) { index.put(summary) }
    }

    /// `fsync`: saves an item's unsaved writes and waits until the store has them on disk;
    /// plain files are synced to their disk.
    func sync(_ inode: UInt64) throws {
        switch inodes.key(of: inode) {
        case .item, .newItemFile:
            try saves.save(inode)
            try store.synchronize()
        case .plain(let path):
            let descriptor = try descriptors.descriptor(of: inode, path: path, in: plain, writable: false)
            guard fsync(descriptor.fd) == 0 else { throw Errno.current }
        case .status: return
        case nil: throw Errno.noEntry
        }
    }

    /// `fsync` of a folder, which makes the renames into it durable on a disk filesystem:
    /// commits the saves waiting in it (an atomic save's rename does not wait for the store),
    /// then waits until the store and the folder's plain files are on disk.
    func syncFolder(_ inode: UInt64) throws {
        let folder = try folderPath(inode)
        for unsaved in saves.buffers.unsavedInodes() {
            if let key = inodes.key(of: unsaved), path(of: key)?.parent == folder { try saves.save(unsaved) }
        }
        try store.synchronize()
        try plain.syncFolder(folder)
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

    // MARK: Attributes changes

    func setAttributes(_ inode: UInt64, changes: AttributeChanges) throws -> CachedAttributes {
        guard let key = inodes.key(of: inode) else { throw Errno.noEntry }
        switch key {
        case .plain(let path):
            if let permissions = changes.permissions { try plain.changeMode(path, to: mode_t(permissions)) }
            if changes.uid != nil || changes.gid != nil {
                try plain.changeOwner(path, uid: changes.uid ?? UInt32.max, gid: changes.gid ?? UInt32.max)
            }
            if let size = changes.size {
                // Through the descriptor: a file unlinked while open is still truncated.
                let descriptor = try descriptors.descriptor(of: inode, path: path, in: plain, writable: true)
                guard ftruncate(descriptor.fd, off_t(size)) == 0 else { throw Errno.current }
            }
            if changes.accessTime != nil || changes.modificationTime != nil {
                try plain.setTimes(path, access: changes.accessTime.map { timespec($0.resolved) },
                                   modification: changes.modificationTime.map { timespec($0.resolved) })
            }
        case .item, .newItemFile:
            // A size change truncates or extends what the file shows, saved like a write.
            if let size = changes.size {
                if let id = placeholder(inode) { try downloadNow(id) }
                try saves.apply(.resize(Int(size)), to: inode, key: key)
            }
            // Mode bits and the modification time are the item's (rsync -a, cp -p, tar keep
            // them). Owner and access time are the mount's: changing them succeeds and does nothing.
            if changes.permissions != nil || changes.modificationTime != nil {
                try setItemFileTimes(inode, modified: changes.modificationTime?.resolved.date,
                                     permissions: changes.permissions.map { UInt32($0 & 0o7777) })
            }
        case .status:
            throw Errno.accessDenied
        }
        return try cachedAttributes(of: inode)
    }

    /// Sets an item's modification time and mode bits, after its pending writes (a time set
    /// after writing is not overtaken by the save of those writes).
    private func setItemFileTimes(_ inode: UInt64, modified: Date?, permissions: UInt32?) throws {
        guard case .item(let id) = try keyWithWritesSaved(inode) else { throw Errno.noEntry }
        let record = try store.write { try $0.setFileTimes(id: id, modified: modified, permissions: permissions) }
        index.put(ItemSummary(record))
        saves.buffers.buffer(of: inode)?.setModified(record.modified)
    }

    // MARK: Extended attributes

    func extendedAttribute(_ inode: UInt64, name: String) throws -> [UInt8] {
        guard !ItemAttributes.isUnsupported(name) else { throw Errno.notSupported }
        switch try keyWithWritesSaved(inode) {
        case .plain(let path): return try plain.getAttribute(path, name: name)
        case .item(let id):
            guard let value = try itemAttributes(id)[name] else { throw Errno.noAttribute }
            return value
        case .newItemFile, .status: throw Errno.noAttribute
        case nil: throw Errno.noEntry
        }
    }

    /// The names a listing shows: an item's `user.shelf.*` are read by name only (as Ceph's
    /// virtual attributes are), so rsync -X and cp -a neither copy them out nor try to remove them.
    func extendedAttributeNames(_ inode: UInt64) throws -> [String] {
        switch try keyWithWritesSaved(inode) {
        case .plain(let path): return try plain.attributeNames(path).filter { !ItemAttributes.isUnsupported($0) }
        case .item(let id): return try store.extendedAttributes(id: id).keys.sorted()
        case .newItemFile, .status: return []
        case nil: throw Errno.noEntry
        }
    }

    func setExtendedAttribute(_ inode: UInt64, name: String, value: [UInt8], mode: ExtendedAttributeMode) throws {
        guard !ItemAttributes.isUnsupported(name) else { throw Errno.notSupported }
        switch try keyWithWritesSaved(inode) {
        case .plain(let path):
            let flags: Int32 = switch mode {
            case .any: 0
            case .createOnly: LinuxCalls.xattrCreate
            case .replaceOnly: LinuxCalls.xattrReplace
            }
            try plain.setAttribute(path, name: name, value: value, flags: flags)
        case .item(let id) where name == ItemAttributes.pin:
            try setPinned(String(decoding: value, as: UTF8.self) != "0", id)
        case .item(let id):
            try changeItemAttribute(id, name: name) { current in
                switch (mode, current) {
                case (.createOnly, .some): throw Errno.exists
                case (.replaceOnly, nil): throw Errno.noAttribute
                default: return Data(value)
                }
            }
        case .newItemFile, .status: throw Errno.accessDenied
        case nil: throw Errno.noEntry
        }
    }

    func removeExtendedAttribute(_ inode: UInt64, name: String) throws {
        guard !ItemAttributes.isUnsupported(name) else { throw Errno.notSupported }
        switch try keyWithWritesSaved(inode) {
        case .plain(let path): try plain.removeAttribute(path, name: name)
        case .item(let id) where name == ItemAttributes.pin:
            try setPinned(false, id)
        case .item(let id):
            try changeItemAttribute(id, name: name) { current in
                guard current != nil else { throw Errno.noAttribute }
                return nil
            }
        case .newItemFile, .status: throw Errno.noAttribute
        case nil: throw Errno.noEntry
        }
    }

    /// `setfattr -n user.shelf.pin -v 1` keeps an item downloaded (and starts its download);
    /// `-v 0` or removing the attribute lets the cache budget evict it again.
    private func setPinned(_ pinned: Bool, _ id: ItemID) throws {
        try store.write { try $0.setPinned(pinned, id) }
        if pinned, index.summary(id: id)?.isPlaceholder == true {
            downloads.whenDownloaded(id) { [logger] error in
                if let error { logger.warning("cannot download pinned item \(id): \(error)") }
            }
        }
    }

    /// Sets or removes one of the user's attributes of an item: `change` gets the current value
    /// and returns the new one (nil removes it). `user.shelf.*` describe the record and are
    /// not the user's to set; other namespaces (`trusted.*`) are not kept for items.
    private func changeItemAttribute(_ id: ItemID, name: String, _ change: @escaping (Data?) throws -> Data?) throws {
        guard ItemAttributes.isUserSettable(name) else {
            throw name.hasPrefix(ItemAttributes.shelfPrefix) ? Errno.notPermitted : Errno.notSupported
        }
        try store.write { writer in
            let value = try change(try writer.extendedAttributes(id: id)[name])
            try writer.setExtendedAttribute(id: id, name: name, value: value)
        }
    }

    /// What `inode` stands for once its unsaved writes are committed: an item's attributes
    /// describe the save that `close()` just ended (read-your-writes), not the one before it.
    private func keyWithWritesSaved(_ inode: UInt64) throws -> NodeKey? {
        if saves.buffers.buffer(of: inode)?.isDirty == true { try saves.save(inode) }
        let key = inodes.key(of: inode)
        if case .item(let id)? = key, downloads.isLinked { try downloads.fillPending([id]) }
        return key
    }

    /// Shelf's description of the item and the user's own attributes, by name.
    private func itemAttributes(_ id: ItemID) throws -> [String: [UInt8]] {
        guard let summary = try store.summary(id: id) else { throw Errno.noEntry }
        let diagnostics = summary.hasDraft ? try store.record(id: id)?.draftDiagnostics : nil
        let download: ItemAttributes.Download
        if !summary.isPlaceholder {
            download = .downloaded
        } else if downloads.isDownloading(id) {
            download = .downloading
        } else if let error = try store.downloadState(of: id)?.error {
            download = .error(error)
        } else {
            download = .notDownloaded
        }
        return try store.extendedAttributes(id: id).mapValues { Array($0) }
            .merging(ItemAttributes.described(summary, draftDiagnostics: diagnostics, download: download,
                                              isPinned: try store.isPinned(id))) { _, shelf in shelf }
    }

    // MARK: Symlinks and space

    func readLink(_ inode: UInt64) throws -> String {
        guard case .plain(let path) = inodes.key(of: inode) else { throw Errno.invalid }
        return try plain.readLink(path)
    }

    func statistics() throws -> FilesystemStatistics {
        try FilesystemStatistics.of(path: plain.root.path)
    }
}

extension FileAttributes {
    /// The attributes of a real file of the plain-file area, under the mount's inode number.
    init(_ info: stat, inode: Inode) {
        func time(_ spec: timespec) -> FileTime { FileTime(seconds: Int64(spec.tv_sec), nanoseconds: Int32(spec.tv_nsec)) }
        self.init(inode: inode, kind: FileKind(mode: info.st_mode) ?? .regular, permissions: info.st_mode & 0o7777,
                  size: UInt64(info.st_size), linkCount: UInt32(info.st_nlink), uid: info.st_uid, gid: info.st_gid,
                  accessTime: time(info.st_atim), modificationTime: time(info.st_mtim), changeTime: time(info.st_ctim))
    }
}

extension timespec {
    init(_ time: FileTime) {
        self.init(tv_sec: Int(time.seconds), tv_nsec: Int(time.nanoseconds))
    }
}
