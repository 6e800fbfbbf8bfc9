import Foundation
import Glibc
import Synchronization
import FuseKit
import Logging
import ShelfModel
import ShelfMarkdown
import ShelfStore

/// The filesystem a Shelf library shows: item files generated from the store, everything else
/// stored verbatim in the plain-file area, and the `/.shelf/` status folder.
///
/// Every operation is a synchronous method that throws an ``Errno``-convertible error, so the
/// dispatch tests drive it without a kernel; ``ShelfFuseOperations`` forwards the kernel's requests here.
///
/// ## Kernel caching
/// Entries and attributes of items and folders are cached for a minute: changes that do not
/// come through this mount are pushed with the notifier (``ChangeFollower``). Names that do not
/// exist are cached briefly, status files not at all.
///
/// ## Parallelism and locks
/// Each piece of state has its own short lock (item index, inode table, open-file table, one
/// buffer per open), held for dictionary work only. Two locks are held across store calls: an
/// open's own buffer during its commit (so its writes never interleave with its save), and
/// `namespaceLock` during namespace changes (create, rename, unlink, folder changes, first saves
/// of new item files) so two renames never interleave. Reads, writes and saves of existing items
/// never take `namespaceLock`, so readers and writers of different files never queue behind
/// one another. Lock order: an open's buffer, then `namespaceLock`, then the short locks.
///
/// ## Deadlocks
/// No handler touches the mount itself or waits for the kernel: invalidations only queue on
/// FuseKit's notifier, whose own thread talks to the kernel.
final class ShelfFileSystem: Sendable {
    static let cacheTimeout: Duration = .seconds(60)
    static let negativeTimeout: Duration = .milliseconds(500)
    static let statusTimeout: Duration = .zero

    let store: LibraryStore
    let index: ItemIndex
    let inodes = InodeTable()
    let openFiles = OpenFileTable()
    let plain: PlainFileArea
    /// The session's invalidation queue, once mounted; before that the kernel caches nothing.
    private let notifier = Mutex<Notifier?>(nil)
    let committer: ItemCommitter
    let statusFolder: StatusFolder
    let logger = Logger(label: "shelf.fs")
    /// Item files created through the mount and not saved yet, by their placeholder identity.
    let newItemFiles = Mutex<[UUID: MountPath]>([:])
    /// The store version of each item inode the kernel last read pages of, for `keep_cache`.
    let cachedVersions = Mutex<[UInt64: Int64]>([:])
    /// The size each item inode last had in an attribute reply: the kernel clamps page-cache
    /// reads to it, so an open of bytes of another size must bypass the page cache.
    private let toldSizes = Mutex<[UInt64: Int]>([:])
    let namespaceLock = NSLock()
    /// The change-feed position the index was loaded at: following starts there.
    let loadedSequence: Int64

    /// Prepares the plain-file area (top folders and every item's folder) and loads the index.
    init(store: LibraryStore) throws {
        self.store = store
        plain = PlainFileArea(root: store.plainFilesFolder)
        loadedSequence = try store.lastSequence()
        let summaries = try store.summaries()
        index = ItemIndex(summaries)
        committer = ItemCommitter(store: store)
        statusFolder = StatusFolder(store: store, index: index)
        let folders = Set(ItemKind.allCases.map { MountPath($0.folderName) })
            .union(summaries.map { MountPath($0.path).parent })
        for folder in folders { try ensureFolder(folder) }
    }

    func attach(_ notifier: Notifier) {
        self.notifier.withLock { $0 = notifier }
    }

    /// Queues `invalidation` for the kernel (safe from request handlers: it only queues).
    func invalidate(_ invalidation: Notifier.Invalidation) {
        notifier.withLock { $0 }?.submit(invalidation)
    }

    /// Creates `folder` and its parents in the plain-file area if missing (an item moved by the
    /// CLI into a new shelf needs its folder to be listable).
    func ensureFolder(_ folder: MountPath) throws {
        try FileManager.default.createDirectory(atPath: plain.realPath(folder), withIntermediateDirectories: true)
    }

    // MARK: Names

    /// The folder path an inode stands for, or `ENOTDIR`.
    func folderPath(_ inode: UInt64) throws(Errno) -> MountPath {
        switch inodes.key(of: inode) {
        case .plain(let path): return path
        case .status(name: ""): return .statusFolder
        case nil: throw Errno(ENOENT)
        default: throw Errno(ENOTDIR)
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
            if let pending = newItemFiles.withLock({ $0.first { $0.value == path }?.key }) {
                return .newItemFile(pending)
            }
            return nil
        }
        return plain.exists(path) ? .plain(path) : nil
    }

    /// The path `key` is at now (nil for a trashed item or a vanished file).
    func path(of key: NodeKey) -> MountPath? {
        switch key {
        case .plain(let path): path
        case .item(let id): index.summary(id: id).map { MountPath($0.path) }
        case .newItemFile(let pending): newItemFiles.withLock { $0[pending] }
        case .status(let name): name.isEmpty ? .statusFolder : MountPath.statusFolder.appending(name)
        }
    }

    // MARK: Attributes

    func attributes(of inode: UInt64) throws -> FileAttributes {
        guard let key = inodes.key(of: inode) else { throw Errno(ENOENT) }
        return try attributes(of: key, inode: inode)
    }

    func attributes(of key: NodeKey, inode: UInt64) throws -> FileAttributes {
        switch key {
        case .plain(let path):
            return FileAttributes(try plain.status(path), inode: Inode(inode))
        case .item(let id):
            guard let summary = index.summary(id: id) else { throw Errno(ENOENT) }
            let modified = FileTime(summary.modified)
            let size = unsavedSize(of: inode) ?? summary.size
            toldSizes.withLock { $0[inode] = size }
            return FileAttributes(inode: Inode(inode), kind: .regular, permissions: 0o644,
                                  size: UInt64(size),
                                  accessTime: modified, modificationTime: modified, changeTime: modified)
        case .newItemFile:
            let now = FileTime.now
            return FileAttributes(inode: Inode(inode), kind: .regular, permissions: 0o644,
                                  size: UInt64(unsavedSize(of: inode) ?? 0),
                                  accessTime: now, modificationTime: now, changeTime: now)
        case .status(let name):
            let now = FileTime.now
            if name.isEmpty {
                return FileAttributes(inode: Inode(inode), kind: .directory, permissions: 0o555, linkCount: 2,
                                      accessTime: now, modificationTime: now, changeTime: now)
            }
            return FileAttributes(inode: Inode(inode), kind: .regular, permissions: 0o444,
                                  size: UInt64(try statusFolder.content(of: name).count),
                                  accessTime: now, modificationTime: now, changeTime: now)
        }
    }

    /// The size of the newest unsaved writes to `inode`, which `stat` must show until they are saved.
    private func unsavedSize(of inode: UInt64) -> Int? {
        openFiles.itemFiles(of: inode).compactMap(\.unsavedSize).max()
    }

    func cachedAttributes(of inode: UInt64) throws -> CachedAttributes {
        let attributes = try attributes(of: inode)
        return CachedAttributes(attributes, timeout: timeout(for: inodes.key(of: inode)))
    }

    private func timeout(for key: NodeKey?) -> Duration {
        if case .status = key { return Self.statusTimeout }
        return Self.cacheTimeout
    }

    /// The kernel entry for `key`; counts one lookup when `counting`.
    func entry(for key: NodeKey, counting: Bool) throws -> Entry {
        let inode = inodes.inode(for: key, lookup: false)
        let attributes = try attributes(of: key, inode: inode)
        if counting { inodes.countLookup(inode) }
        let timeout = timeout(for: key)
        return Entry(attributes: attributes, attributeTimeout: timeout, entryTimeout: timeout)
    }

    // MARK: Lookup and listing

    func lookup(parent: UInt64, name: String) throws -> Entry {
        let path = try folderPath(parent).appending(name)
        guard let key = resolve(path) else { return .negative(timeout: Self.negativeTimeout) }
        return try entry(for: key, counting: true)
    }

    func forget(_ inode: UInt64, count: UInt64) {
        inodes.forget(inode, count: count)
    }

    /// One name in a folder listing.
    struct Listed: Equatable {
        var name: String
        var key: NodeKey

        var isDotEntry: Bool { name == "." || name == ".." }
    }

    /// The folder's names, sorted: real entries of the plain-file area (minus anything shadowed
    /// by item names), the folder's items and unsaved new item files, and `.shelf` at the root.
    func list(_ inode: UInt64) throws -> [Listed] {
        let folder = try folderPath(inode)
        if folder == .statusFolder {
            return StatusFolder.fileNames.map { Listed(name: $0, key: .status(name: $0)) }
        }
        let isItemFolder = PathRules.isItemFolder(folder)
        var listed: [Listed] = try plain.entries(of: folder).compactMap { name in
            if isItemFolder && PathRules.isItemFileName(name) { return nil }
            if folder.isRoot && name == MountPath.statusFolder.rawValue { return nil }
            if name.hasPrefix(PlainFileArea.internalPrefix) { return nil }
            return Listed(name: name, key: .plain(folder.appending(name)))
        }
        if isItemFolder {
            for name in index.itemNames(in: folder) {
                if let summary = index.summary(at: folder.appending(name)) {
                    listed.append(Listed(name: name, key: .item(summary.id)))
                }
            }
            let pending = newItemFiles.withLock { $0.filter { $0.value.parent == folder } }
            listed += pending.map { Listed(name: $0.value.name, key: .newItemFile($0.key)) }
        }
        if folder.isRoot { listed.append(Listed(name: MountPath.statusFolder.rawValue, key: .status(name: ""))) }
        return listed.sorted { $0.name < $1.name }
    }

    /// `.` and `..` of a folder, which start every kernel listing (and, unlike other names,
    /// give the kernel no lookup count in `readdirplus`).
    func dotEntries(of inode: UInt64) throws -> [Listed] {
        let folder = try folderPath(inode)
        let parent: NodeKey = folder == .statusFolder ? .plain(.root) : .plain(folder.parent)
        return [Listed(name: ".", key: inodes.key(of: inode) ?? .plain(folder)), Listed(name: "..", key: parent)]
    }

    /// The kind a listed name shows in a plain `readdir`.
    func kind(of listed: Listed) -> FileKind {
        switch listed.key {
        case .plain(let path): (try? plain.status(path)).flatMap { FileKind(mode: $0.st_mode) } ?? .regular
        case .status(let name): name.isEmpty ? .directory : .regular
        case .item, .newItemFile: .regular
        }
    }

    func inode(for key: NodeKey) -> UInt64 {
        inodes.inode(for: key, lookup: false)
    }

    // MARK: Opening, reading, writing

    func open(_ inode: UInt64, flags: OpenFlags) throws -> OpenedFile {
        guard let key = inodes.key(of: inode) else { throw Errno(ENOENT) }
        switch key {
        case .plain(let path):
            let descriptor = try plain.open(path, flags: flags.rawValue & ~(O_CREAT | O_EXCL))
            return OpenedFile(handle: openFiles.add(.plain(PlainOpenFile(inode: inode, descriptor: descriptor))))
        case .status(let name):
            guard !flags.isWritable else { throw Errno(EACCES) }
            let content = try statusFolder.content(of: name)
            return OpenedFile(handle: openFiles.add(.status(content)), directIO: true)
        case .item(let id):
            let hasWriter = openFiles.itemFiles(of: inode).contains(where: \.writable)
            guard let file = try store.file(id: id) else { throw Errno(ENOENT) }
            let truncates = flags.truncates && flags.isWritable
            let open = ItemOpenFile(inode: inode, bytes: truncates ? [] : Array(file.content.utf8),
                                    baseVersion: file.version, writable: flags.isWritable,
                                    appends: flags.appends, dirty: truncates)
            // The kernel keeps one size per inode, and a writer's `O_TRUNC` or unsaved writes
            // change it; a reader opened meanwhile bypasses the page cache so it reads its
            // whole snapshot whatever size the kernel holds.
            // Likewise when the kernel holds another size than this snapshot's (an inode that a
            // rename-over save replaced, still open or looked up by a reader): its page-cache
            // reads would stop at the old size.
            // (No size on record: the kernel knows this inode from before it became this item.)
            let sizeIsStale = toldSizes.withLock { $0[inode] != file.content.utf8.count }
            if !flags.isWritable, hasWriter || sizeIsStale {
                return OpenedFile(handle: openFiles.add(.item(open)), directIO: true)
            }
            let keepCache = !truncates && cachedVersions.withLock { cached in
                defer { cached[inode] = file.version }
                return cached[inode] == file.version
            }
            return OpenedFile(handle: openFiles.add(.item(open)), keepCache: keepCache, noFlush: !flags.isWritable)
        case .newItemFile:
            // Dirty from the start, so even an empty new file is saved when it is closed.
            let open = ItemOpenFile(inode: inode, bytes: [], baseVersion: nil, writable: flags.isWritable,
                                    appends: flags.appends, dirty: true)
            return OpenedFile(handle: openFiles.add(.item(open)))
        }
    }

    func read(handle: UInt64, offset: Int64, size: Int) throws -> [UInt8] {
        switch openFiles.file(handle) {
        case .item(let open):
            return open.read(offset: Int(offset), size: size)
        case .plain(let open):
            var bytes = [UInt8](repeating: 0, count: size)
            let count = bytes.withUnsafeMutableBytes { pread(open.descriptor, $0.baseAddress, size, off_t(offset)) }
            guard count >= 0 else { throw Errno.current }
            return Array(bytes[..<count])
        case .status(let content):
            guard offset < content.count else { return [] }
            return Array(content[Int(offset)..<min(content.count, Int(offset) + size)])
        case nil:
            throw Errno(EBADF)
        }
    }

    func write(handle: UInt64, offset: Int64, data: [UInt8]) throws -> Int {
        switch openFiles.file(handle) {
        case .item(let open):
            guard open.writable else { throw Errno(EBADF) }
            return open.write(data, at: Int(offset))
        case .plain(let open):
            let count = data.withUnsafeBytes { pwrite(open.descriptor, $0.baseAddress, data.count, off_t(offset)) }
            guard count >= 0 else { throw Errno.current }
            open.noteWrite()
            return count
        case .status, nil:
            throw Errno(EBADF)
        }
    }

    /// `close`: saves the open's unsaved writes — a valid text updates the item, an invalid one
    /// is kept as its draft; either way the save succeeds and is durable (committed to SQLite)
    /// on return. Plain files need nothing: their writes are already in the real file.
    func flush(handle: UInt64) throws {
        switch openFiles.file(handle) {
        case .item(let open): try commit(open)
        case .plain(let open): try commitWritesAfterAdoption(open)
        case .status: return
        case nil: throw Errno(EBADF)
        }
    }

    /// `fsync`: commits an item's unsaved writes and waits until the store has them on disk;
    /// plain files are synced to their disk.
    func sync(handle: UInt64) throws {
        switch openFiles.file(handle) {
        case .item(let open):
            try commit(open)
            try store.synchronize()
        case .plain(let open):
            try commitWritesAfterAdoption(open)
            guard fsync(open.descriptor) == 0 else { throw Errno.current }
        case .status: return
        case nil: throw Errno(EBADF)
        }
    }

    func release(handle: UInt64) throws {
        defer { openFiles.remove(handle) }
        if case .item(let open) = openFiles.file(handle) { try commit(open) }
    }

    /// A temp file renamed onto an item while still open may be written after the rename: those
    /// writes went to the (now unlinked) temp file, so at close its content is saved into the
    /// item it became. Needs a readable descriptor (`mkstemp` and editors open read-write).
    private func commitWritesAfterAdoption(_ open: PlainOpenFile) throws {
        guard case .item(let id) = inodes.key(of: open.inode), open.takeWritten(),
              let bytes = try? PlainFileArea.readAll(fd: open.descriptor),
              let path = path(of: .item(id)) else { return }
        let outcome = try committer.commit(bytes, at: path, into: .existing(id, basedOn: nil))
        _ = saved(outcome, inode: open.inode)
    }

    /// Commits `open`'s unsaved bytes into whatever its inode stands for now.
    func commit(_ open: ItemOpenFile) throws {
        do {
            try open.commitIfDirty { bytes, baseVersion in
                switch inodes.key(of: open.inode) {
                case .item(let id):
                    guard let path = path(of: .item(id)) else { throw Errno(ENOENT) }
                    let outcome = try committer.commit(bytes, at: path, into: .existing(id, basedOn: baseVersion))
                    return saved(outcome, inode: open.inode)
                case .newItemFile(let pending):
                    namespaceLock.lock()
                    defer { namespaceLock.unlock() }
                    guard let path = newItemFiles.withLock({ $0[pending] }) else { throw Errno(ENOENT) }
                    let outcome = try committer.commit(bytes, at: path, into: .new(at: path))
                    newItemFiles.withLock { $0[pending] = nil }
                    inodes.rekey(open.inode, to: .item(outcome.record.item.id))
                    return saved(outcome, inode: open.inode)
                case .plain(let path):
                    // The item was renamed to a plain name while open: its writes follow it
                    // there, and the open keeps its base version (there is no record to bump).
                    try plain.writeAtomically(bytes, to: path)
                    return baseVersion ?? 0
                case .status, nil:
                    throw Errno(EBADF)
                }
            }
        } catch let error as Errno {
            throw error
        } catch {
            logger.error("could not save \(open.inode): \(error)")
            throw Errno(EIO)
        }
    }

    /// Records a save made through this mount: the index learns the new version (so the change
    /// follower knows it needs no invalidation), and the kernel's pages are dropped only when
    /// the file now shows other bytes than the program wrote.
    private func saved(_ outcome: ItemCommitter.Outcome, inode: UInt64) -> Int64 {
        index.put(ItemSummary(outcome.record))
        cachedVersions.withLock { $0[inode] = nil }
        if !outcome.showsWrittenBytes { invalidate(.content(Inode(inode))) }
        return outcome.record.version
    }

    // MARK: Attributes changes

    func setAttributes(_ inode: UInt64, changes: AttributeChanges) throws -> CachedAttributes {
        guard let key = inodes.key(of: inode) else { throw Errno(ENOENT) }
        switch key {
        case .plain(let path):
            if let permissions = changes.permissions { try plain.changeMode(path, to: mode_t(permissions)) }
            if changes.uid != nil || changes.gid != nil {
                try plain.changeOwner(path, uid: changes.uid ?? UInt32.max, gid: changes.gid ?? UInt32.max)
            }
            if let size = changes.size {
                if case .plain(let open) = changes.handle.flatMap(openFiles.file) {
                    guard ftruncate(open.descriptor, off_t(size)) == 0 else { throw Errno.current }
                } else {
                    try plain.truncate(path, to: off_t(size))
                }
            }
            if changes.accessTime != nil || changes.modificationTime != nil {
                try plain.setTimes(path, access: changes.accessTime.map { timespec($0.resolved) },
                                   modification: changes.modificationTime.map { timespec($0.resolved) })
            }
        case .item, .newItemFile:
            // Mode, owner and times of item files are fixed (editors that copy them get success);
            // a size change truncates an open's buffer, or the stored text when none is open.
            if let size = changes.size { try truncateItem(inode, key: key, to: Int(size), handle: changes.handle) }
        case .status:
            throw Errno(EACCES)
        }
        return try cachedAttributes(of: inode)
    }

    private func truncateItem(_ inode: UInt64, key: NodeKey, to size: Int, handle: UInt64?) throws {
        if case .item(let open) = handle.flatMap(openFiles.file) {
            open.truncate(to: size)
            return
        }
        if let writer = openFiles.itemFiles(of: inode).first(where: \.writable) {
            writer.truncate(to: size)
            return
        }
        guard case .item(let id) = key, let record = try store.record(id: id) else { throw Errno(EBUSY) }
        let truncated = ItemOpenFile(inode: inode, bytes: Array(record.content.utf8), baseVersion: record.version,
                                     writable: true, appends: false, dirty: false)
        truncated.truncate(to: size)
        try commit(truncated)
    }

    // MARK: Extended attributes

    static let attributePrefix = "user.shelf."

    func extendedAttribute(_ inode: UInt64, name: String) throws -> [UInt8] {
        switch inodes.key(of: inode) {
        case .plain(let path): return try plain.getAttribute(path, name: name)
        case .item(let id):
            // `ls -l` asks every file for security.* and system.* names: answer those without the store.
            guard name.hasPrefix(Self.attributePrefix), let value = try itemAttributes(id)[name] else { throw Errno(ENODATA) }
            return Array(value.utf8)
        case .newItemFile, .status: throw Errno(ENODATA)
        case nil: throw Errno(ENOENT)
        }
    }

    func extendedAttributeNames(_ inode: UInt64) throws -> [String] {
        switch inodes.key(of: inode) {
        case .plain(let path): return try plain.attributeNames(path)
        case .item(let id): return try itemAttributes(id).keys.sorted()
        case .newItemFile, .status: return []
        case nil: throw Errno(ENOENT)
        }
    }

    func setExtendedAttribute(_ inode: UInt64, name: String, value: [UInt8], mode: ExtendedAttributeMode) throws {
        guard case .plain(let path) = inodes.key(of: inode) else {
            // Item attributes describe the record; they are not the user's to set.
            throw Errno(name.hasPrefix(Self.attributePrefix) ? EPERM : ENOTSUP)
        }
        let flags: Int32 = switch mode {
        case .any: 0
        case .createOnly: LinuxCalls.xattrCreate
        case .replaceOnly: LinuxCalls.xattrReplace
        }
        try plain.setAttribute(path, name: name, value: value, flags: flags)
    }

    func removeExtendedAttribute(_ inode: UInt64, name: String) throws {
        guard case .plain(let path) = inodes.key(of: inode) else { throw Errno(EPERM) }
        try plain.removeAttribute(path, name: name)
    }

    /// `user.shelf.id`, `.kind`, `.version`, and `.error` while an invalid save is pending.
    private func itemAttributes(_ id: ItemID) throws -> [String: String] {
        guard let summary = try store.summary(id: id) else { throw Errno(ENOENT) }
        var attributes = [
            Self.attributePrefix + "id": id.rawValue,
            Self.attributePrefix + "kind": summary.kind.rawValue,
            Self.attributePrefix + "version": String(summary.version),
        ]
        if summary.hasDraft, let diagnostics = try store.record(id: id)?.draftDiagnostics {
            attributes[Self.attributePrefix + "error"] = diagnostics.map(\.description).joined(separator: "\n")
        }
        return attributes
    }

    // MARK: Symlinks and space

    func readLink(_ inode: UInt64) throws -> String {
        guard case .plain(let path) = inodes.key(of: inode) else { throw Errno(EINVAL) }
        return try plain.readLink(path)
    }

    func statistics() throws -> FilesystemStatistics {
        try FilesystemStatistics.of(path: plain.root.path)
    }

    /// Saves every open with unsaved writes (unmount).
    func flushAll() {
        for open in openFiles.dirtyItemFiles() {
            do { try commit(open) } catch { logger.error("unsaved writes of inode \(open.inode) lost at unmount: \(error)") }
        }
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
