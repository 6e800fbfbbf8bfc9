import Foundation
import FuseKit
import ShelfModel
import ShelfStore
import ShelfSystem
import Synchronization

/// The kernel's side of a Shelf mount: forwards each FUSE request to the library filesystem
/// and answers it, and follows the library's change feed while mounted.
///
/// `ShelfMount` is the usual way in; tests hand this to a `TestMount` and call
/// ``attach(_:)`` with the session's notifier.
public final class ShelfFuseOperations: FuseOperations {
    let fileSystem: ShelfFileSystem
    let follower: ChangeFollower
    /// The engine of a linked library, which `shelf sync` asks for a round.
    private let syncEngine: (any MountSync)?
    /// Where `shelf` commands ask this mount to commit closed saves; nil until attached.
    private let control = Mutex<MountControl.Server?>(nil)
    /// Whether other users may reach the mount (``letOtherUsersIn()``): the files they create are theirs.
    private let othersAllowed = Mutex(false)
    /// Folder listings by `opendir` handle: one consistent snapshot per open, so offsets hold.
    private let listings = Mutex<(next: UInt64, open: [UInt64: OpenListing])>((1, [:]))
    /// Reads of placeholders that cannot be downloaded, logged without repeating.
    private let failedDownloads: RepeatedFailures

    /// Loads the library's index. Throws the store's error when the library cannot be read.
    /// `idleSaveDelay`: how long a file may go unwritten before its writes are saved without
    /// a close (see ``SaveScheduler``).
    /// `sync`: the engine of a library linked to a cloud (nil otherwise). Placeholders are
    /// filled through it — a reader waits at most `downloadTimeout`, then gets `EIO` — and it
    /// learns which files programs hold (their cloud changes wait; they are never evicted) and
    /// which were read last (the cache budget evicts the others first). `lockTable`: where the
    /// kernel lists file locks (tests name another).
    public init(store: LibraryStore, idleSaveDelay: TimeInterval = 1, sync: (any MountSync)? = nil,
                downloadTimeout: Duration = .seconds(10), lockTable: String = KernelFileLocks.table) throws {
        fileSystem = try ShelfFileSystem(store: store, idleSaveDelay: idleSaveDelay, sync: sync,
                                         downloadTimeout: downloadTimeout, lockTable: lockTable)
        syncEngine = sync
        failedDownloads = RepeatedFailures(logger: fileSystem.parts.logger)
        sync?.serve(fileSystem.syncView)
        follower = ChangeFollower(fileSystem: fileSystem)
    }

    /// Connects to the mounted `session`: changes from outside the mount are pushed to the
    /// kernel through its notifier, and writers' closes come from its close watcher.
    /// `mountpoint`: where the session is mounted, through which changes made elsewhere are
    /// repeated for inotify watchers (``ChangeAnnouncer``).
    public func attach(to session: FuseSession, at mountpoint: String) {
        fileSystem.parts.kernel.attach(session.notifier)
        fileSystem.announcer.start(mountpoint: mountpoint)
        fileSystem.startSaving(closeWatcher: session.closeWatcher)
        follower.start()
        do {
            var sync: (@Sendable () throws -> String)?
            if let engine = syncEngine { sync = { try engine.syncRound() } }
            let server = try MountControl.Server(library: fileSystem.parts.store.folder, commit: { [fileSystem] in
                try fileSystem.saves.commitClosedSaves()
                try fileSystem.parts.downloads.fillPending()
            }, sync: sync)
            server.start()
            control.withLock { $0 = server }
        } catch {
            fileSystem.parts.logger.error("shelf commands cannot reach this mount (\(error)); they may not see saves made just before them")
        }
    }

    /// The mount options a library needs. Opens are stateless, so Shelf never sees who opens a
    /// file how: when other users may reach the mount (`allowOther`), the kernel checks each
    /// access against the files' modes. A mount of one user's own needs no such checks (the
    /// kernel lets nobody else in), and saves without them: each check of a folder changed by
    /// a save would first ask the mount for its attributes.
    public static func mountOptions(filesystemName: String, allowOther: Bool = false, debug: Bool = false) -> MountOptions {
        MountOptions(filesystemName: filesystemName, subtype: "shelf", allowOther: allowOther,
                     defaultPermissions: allowOther, debug: debug)
    }

    /// Stateless opens (FuseKit's "Stateless files"): no `atomicOpenTruncate`. Listings are
    /// `readdirplus` throughout (not "auto"), so every listing also refreshes the attributes
    /// of the names it lists, and a later `stat` of them costs nothing. Reads are not
    /// `asyncRead`: the kernel then waits for each read request itself, interruptibly, so
    /// Ctrl-C frees a reader waiting for a download even when the program handles Ctrl-C
    /// (with read-ahead sent in the background it waits on the page, which only a killing
    /// signal ends).
    public func initialize(_ connection: inout ConnectionInfo) {
        connection.wanted.remove(.atomicOpenTruncate)
        connection.wanted.remove(.writebackCache)
        connection.wanted.remove(.readdirPlusAuto)
        connection.wanted.remove(.asyncRead)
        if connection.capable.contains(.readdirPlus) { connection.wanted.insert(.readdirPlus) }
        connection.wanted.formIntersection(connection.capable)
    }

    /// Unmount: stop following and saving, then save every file's unsaved writes.
    public func destroy() {
        control.withLock { $0.take() }?.stop()
        fileSystem.announcer.stop()
        follower.stop()
        fileSystem.saves.stop()
        do {
            try fileSystem.parts.downloads.stop()
        } catch {
            fileSystem.parts.logger.warning("downloaded bytes could not be put in place at unmount (the items stay placeholders): \(error)")
        }
        PlainFileArea.finishRemovals()
    }

    /// A mount with `--allow-other`: its root opens to other users (read and search, as a
    /// disk filesystem's home of shared files would be; the library folder itself stays the
    /// owner's alone), and files other users create through it belong to them.
    public func letOtherUsersIn() throws {
        othersAllowed.withLock { $0 = true }
        let root = fileSystem.parts.plain
        let mode = try root.status(.root).st_mode & 0o7777
        if mode & 0o055 != 0o055 { try root.changeMode(.root, to: mode | 0o055) }
    }

    /// Who a file created by `request` belongs to when not the mount's owner: another user's,
    /// through a mount others may use, when this process may give files away (root).
    private func creator(_ request: Request) -> FileOwner? {
        guard FileAttributes.processUID == 0, othersAllowed.withLock({ $0 }),
              request.uid != FileAttributes.processUID || request.gid != FileAttributes.processGID else { return nil }
        return FileOwner(uid: request.uid, gid: request.gid)
    }

    /// The path an inode stands for, from the inode table and the index (short locks only).
    public func describe(_ inode: Inode) -> String? {
        fileSystem.parts.inodes.key(of: inode.rawValue).flatMap { fileSystem.parts.names.path(of: $0)?.rawValue }
    }

    /// Blocks until every write received so far is saved in the store, or `timeout` passes;
    /// returns whether it was. (Saves follow a writer's close within milliseconds.)
    public func waitUntilSaved(timeout: Duration = .seconds(5)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while fileSystem.saves.hasUnsavedWrites {
            guard ContinuousClock.now < deadline else { return false }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return true
    }

    public func lookup(_ request: Request, parent: Inode, name: String, reply: EntryReply) {
        answer(reply) {
            if fileSystem.announcer.isAnnouncing(request.pid),
               let answer = fileSystem.announcer.lookup(try fileSystem.parts.names.folderPath(parent.rawValue).appending(name)) {
                switch answer {
                case .absent: return .negative(timeout: .zero)
                case .node(let key): return try fileSystem.nodeAttributes.entry(for: key)
                }
            }
            return try fileSystem.lookup(parent: parent.rawValue, name: name)
        }
    }

    public func forget(inode: Inode, count: UInt64) {
        fileSystem.forget(inode.rawValue, count: count)
    }

    public func getattr(_ request: Request, inode: Inode, handle: UInt64?, reply: AttributesReply) {
        answer(reply) { try fileSystem.cachedAttributes(of: inode.rawValue) }
    }

    public func setattr(_ request: Request, inode: Inode, changes: AttributeChanges, reply: AttributesReply) {
        answer(reply) { try fileSystem.setAttributes(inode.rawValue, changes: changes, by: process(of: request)) }
    }

    /// Only the announcer's allocation that keeps the size, which raises `IN_MODIFY` and changes
    /// nothing. Anyone else is told `EOPNOTSUPP`, not `ENOSYS` (which would turn the
    /// announcer's off for good); glibc's `posix_fallocate` then writes the zeros itself.
    public func fallocate(_ request: Request, inode: Inode, handle: UInt64, mode: Int32, offset: Int64,
                          length: Int64, reply: EmptyReply) {
        answer(reply) {
            guard fileSystem.announcer.isAnnouncing(request.pid), mode == LinuxCalls.keepSize else { throw Errno.notSupported }
        }
    }

    public func readlink(_ request: Request, inode: Inode, reply: ReadlinkReply) {
        answer(reply) { try fileSystem.readLink(inode.rawValue) }
    }

    public func mknod(_ request: Request, parent: Inode, name: String, mode: UInt32, device: UInt64,
                      reply: EntryReply) {
        answer(reply) {
            try fileSystem.makeNode(parent: parent.rawValue, name: name, mode: mode, device: device, creator: creator(request))
        }
    }

    public func mkdir(_ request: Request, parent: Inode, name: String, mode: UInt32, reply: EntryReply) {
        answer(reply) {
            if fileSystem.announcer.isAnnouncing(request.pid),
               let key = fileSystem.announcer.createdNode(at: try fileSystem.parts.names.folderPath(parent.rawValue).appending(name)) {
                return try fileSystem.nodeAttributes.entry(for: key)
            }
            return try fileSystem.makeDirectory(parent: parent.rawValue, name: name, mode: mode, creator: creator(request))
        }
    }

    public func unlink(_ request: Request, parent: Inode, name: String, reply: EmptyReply) {
        answer(reply) {
            // The announcer repeats a delete the store already has.
            if fileSystem.announcer.isAnnouncing(request.pid) { return }
            try fileSystem.unlink(parent: parent.rawValue, name: name)
        }
    }

    public func rmdir(_ request: Request, parent: Inode, name: String, reply: EmptyReply) {
        answer(reply) { try fileSystem.removeDirectory(parent: parent.rawValue, name: name) }
    }

    public func symlink(_ request: Request, parent: Inode, name: String, target: String, reply: EntryReply) {
        answer(reply) {
            try fileSystem.makeSymlink(parent: parent.rawValue, name: name, target: target, creator: creator(request))
        }
    }

    public func rename(_ request: Request, parent: Inode, name: String, newParent: Inode, newName: String,
                       flags: RenameFlags, reply: EmptyReply) {
        answer(reply) {
            // The announcer repeats a rename the store already has.
            if fileSystem.announcer.isAnnouncing(request.pid) { return }
            try fileSystem.rename(parent: parent.rawValue, name: name, newParent: newParent.rawValue,
                                  newName: newName, flags: flags, by: process(of: request))
        }
    }

    public func link(_ request: Request, inode: Inode, newParent: Inode, newName: String, reply: EntryReply) {
        answer(reply) { try fileSystem.link(inode.rawValue, newParent: newParent.rawValue, newName: newName) }
    }

    /// Always `ENOSYS`: the first answer makes the kernel open every file itself from then on
    /// (FuseKit's "Stateless files"), so opening, and closing, a cached file costs no request.
    /// `flush` is left at FuseKit's default, `ENOSYS`, for the same reason.
    public func open(_ request: Request, inode: Inode, flags: OpenFlags, reply: OpenReply) {
        reply.fail(Errno.notImplemented)
    }

    public func create(_ request: Request, parent: Inode, name: String, mode: UInt32, flags: OpenFlags,
                       reply: CreateReply) {
        answer(reply) {
            if fileSystem.announcer.isAnnouncing(request.pid),
               let key = fileSystem.announcer.createdNode(at: try fileSystem.parts.names.folderPath(parent.rawValue).appending(name)) {
                return CreatedFile(entry: try fileSystem.nodeAttributes.entry(for: key), file: OpenedFile())
            }
            return try fileSystem.create(parent: parent.rawValue, name: name, mode: mode, flags: flags, creator: creator(request))
        }
    }

    /// A placeholder's read is answered when its download ends (or fails, with `EIO`): the
    /// request waits, not the worker thread, and a reader that gives up (Ctrl-C) is let go at
    /// once while the download goes on for the others.
    public func read(_ request: Request, inode: Inode, handle: UInt64, offset: Int64, size: Int, reply: DataReply) {
        let id: ItemID
        if let placeholder = fileSystem.nodeAttributes.placeholder(inode.rawValue) {
            id = placeholder
        } else {
            do {
                return reply.succeed(try fileSystem.read(inode.rawValue, offset: offset, size: size, for: process(of: request)))
            } catch let notHere as PlaceholderDownloads.NotHere {
                id = notHere.id
            } catch {
                return answer(reply) { throw error }
            }
        }
        reply.failOnInterrupt()
        fileSystem.parts.downloads.whenDownloaded(id) { [self] error in
            if let error {
                failedDownloads.warning("cannot download \(id): \(error)", about: id.rawValue)
                return reply.fail(Errno.ioError)
            }
            answer(reply) { try fileSystem.read(inode.rawValue, offset: offset, size: size, for: process(of: request)) }
        }
    }

    public func write(_ request: Request, inode: Inode, handle: UInt64, offset: Int64, data: [UInt8],
                      flags: OpenFlags, reply: WriteReply) {
        answer(reply) {
            try fileSystem.write(inode.rawValue, offset: offset, data: data, appending: flags.appends, by: process(of: request))
        }
    }

    public func fsync(_ request: Request, inode: Inode, handle: UInt64, dataOnly: Bool, reply: EmptyReply) {
        answer(reply) { try fileSystem.makeDurable(inode.rawValue) }
    }


    public func opendir(_ request: Request, inode: Inode, flags: OpenFlags, reply: OpenReply) {
        answer(reply) {
            let folder = try fileSystem.list(inode.rawValue)
            let listing = OpenListing(dotEntries: try fileSystem.dotEntries(of: inode.rawValue), names: folder.names)
            let handle = listings.withLock { listings in
                defer { listings.next += 1 }
                listings.open[listings.next] = listing
                return listings.next
            }
            // Without keep-cache, the kernel drops the folder's cached listing at this open.
            let cache = fileSystem.listingCache(folder, of: inode.rawValue)
            return OpenedFile(handle: handle, keepCache: cache == .serve, cacheDirectory: cache != .none)
        }
    }

    public func readdir(_ request: Request, inode: Inode, handle: UInt64, offset: Int64, capacity: Int,
                        reply: DirectoryReply) {
        answer(reply) {
            var batch = DirectoryListing(capacity: capacity)
            let listed = try listed(handle, from: offset, fitting: capacity / DirectoryListing.smallestEntrySize + 1)
            for (position, name) in zip(Int(offset)..., listed) {
                guard batch.add(name: name.name, inode: Inode(name.inode), kind: fileSystem.listings.kind(of: name),
                                nextOffset: Int64(position + 1)) else { break }
            }
            return batch
        }
    }

    /// Each full entry added gives the kernel a lookup count, counted (for the whole batch at
    /// once) before the reply leaves.
    public func readdirplus(_ request: Request, inode: Inode, handle: UInt64, offset: Int64, capacity: Int,
                            reply: DirectoryPlusReply) {
        answer(reply) {
            var batch = DirectoryPlusListing(capacity: capacity)
            let listed = try listed(handle, from: offset, fitting: capacity / DirectoryPlusListing.smallestEntrySize + 1)
            let entries = fileSystem.entries(for: listed)
            var counted: [InodeTable.Node] = []
            filling: for ((position, name), entry) in zip(zip(Int(offset)..., listed), entries) {
                let nextOffset = Int64(position + 1)
                switch entry {
                case .full(let entry, let node):
                    guard batch.add(name: name.name, entry: entry, nextOffset: nextOffset) else { break filling }
                    if !name.isDotEntry { counted.append(node) }
                case .nameOnly:
                    guard batch.addNameOnly(name: name.name, inode: Inode(name.inode), kind: fileSystem.listings.kind(of: name),
                                            nextOffset: nextOffset) else { break filling }
                case .gone:
                    continue  // vanished since opendir: skipped, as a real folder would
                }
            }
            fileSystem.sent(counted)
            return batch
        }
    }

    public func releasedir(_ request: Request, inode: Inode, handle: UInt64, reply: EmptyReply) {
        listings.withLock { _ = $0.open.removeValue(forKey: handle) }
        reply.succeed()
    }

    public func fsyncdir(_ request: Request, inode: Inode, handle: UInt64, dataOnly: Bool, reply: EmptyReply) {
        answer(reply) { try fileSystem.makeFolderDurable(inode.rawValue) }
    }

    public func statfs(_ request: Request, inode: Inode, reply: StatisticsReply) {
        answer(reply) { try fileSystem.statistics() }
    }

    public func setxattr(_ request: Request, inode: Inode, name: String, value: [UInt8],
                         mode: ExtendedAttributeMode, reply: EmptyReply) {
        answer(reply) { try fileSystem.setExtendedAttribute(inode.rawValue, name: name, value: value, mode: mode) }
    }

    public func getxattr(_ request: Request, inode: Inode, name: String, reply: ExtendedAttributeReply) {
        answer(reply) { try fileSystem.extendedAttribute(inode.rawValue, name: name) }
    }

    public func listxattr(_ request: Request, inode: Inode, reply: ExtendedAttributeListReply) {
        answer(reply) { try fileSystem.extendedAttributeNames(inode.rawValue) }
    }

    public func removexattr(_ request: Request, inode: Inode, name: String, reply: EmptyReply) {
        answer(reply) { try fileSystem.removeExtendedAttribute(inode.rawValue, name: name) }
    }

    /// The process that sent `request`, for what it reads and writes of items.
    private func process(of request: Request) -> ProcessID? {
        fileSystem.processes.process(of: request.pid)
    }

    /// Answers `reply` with `body`'s result, or with the errno its error stands for
    /// (``Errno/init(for:)``); errors without a precise errno are logged, since the program
    /// only sees `EIO`.
    private func answer<T>(_ reply: Reply<T>, _ body: () throws -> T) {
        reply.respond {
            do {
                return try body()
            } catch {
                let errno = Errno(for: error)
                if errno == .ioError && !(error is Errno) { fileSystem.parts.logger.error("\(error)") }
                throw errno
            }
        }
    }

    /// The snapshot's entries from `offset` (the position of the next entry): at most `count`,
    /// as many as the kernel's buffer can take, so a batch never walks (or describes) more of
    /// the folder than it can send.
    private func listed(_ handle: UInt64, from offset: Int64, fitting count: Int) throws -> ArraySlice<ShelfFileSystem.Listed> {
        guard let listing = listings.withLock({ $0.open[handle] }) else { throw Errno.badHandle }
        return listing.entries(from: Int(offset), count: count)
    }
}

/// The names of one open folder, by position: `.` and `..`, then the folder's listing, which
/// stays shared with the filesystem's copy (a folder of 100,000 names is not copied per open).
private struct OpenListing {
    let dotEntries: [ShelfFileSystem.Listed]
    let names: [ShelfFileSystem.Listed]

    /// Up to `count` entries from `position` on (past the dot entries, a slice of the names).
    func entries(from position: Int, count: Int) -> ArraySlice<ShelfFileSystem.Listed> {
        let first = max(0, position - dotEntries.count)
        let rest = names[min(first, names.count)...].prefix(count)
        guard position < dotEntries.count else { return rest }
        return (dotEntries[position...] + rest).prefix(count)
    }
}
