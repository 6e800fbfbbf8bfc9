/// A filesystem served through FUSE: one method per kernel request.
///
/// Modelled on fuser's `Filesystem` trait. Every requirement has a default (in the extension
/// below) answering `ENOSYS`, except where the kernel needs a harmless answer to work at all
/// (`open`/`opendir`/`release`/`releasedir` succeed, `forget` does nothing, `init` keeps
/// FuseKit's capability defaults); implement only what the filesystem supports.
///
/// ## Threads
/// Handlers run synchronously on libfuse's worker threads, several at once, so the conforming
/// type must be thread-safe. Never block a handler on a Swift `Task`: answer inline, or keep
/// the reply and answer it later from any thread.
///
/// ## Replies
/// Each handler gets a ``Reply`` to answer exactly once; `reply.respond { try … }` turns a
/// thrown error into its errno (``Errno/init(for:)``). A reply dropped unanswered answers `EIO`.
///
/// ## Kernel caching
/// Entries and attributes carry timeouts: within them the kernel does not ask again. Changes
/// that do not come through the mount (another process, sync) must be pushed with the
/// ``Notifier``; never call it expecting the kernel to act before the handler returns.
/// Two kernel habits worth knowing: after a `read` the cached access time counts as stale, so
/// the next full `stat` calls `getattr` even within the timeout; and whenever fresh attributes
/// show a different size (or, with ``Capabilities/automaticDataInvalidation``, modification
/// time), the kernel drops the file's cached pages. `keepCache` in ``OpenedFile`` keeps pages
/// across opens only while neither happened.
///
/// ## Stateless files
/// Every request costs a round trip through the daemon (tens of microseconds, against well
/// under one for a native system call), and `open` and `flush` are synchronous: a `cat` of a
/// cached file costs two of them. A filesystem whose files need no per-open state can stop
/// both for good, for the whole mount:
/// - answer `open` with `ENOSYS`: the kernel then opens every regular file itself (handle 0 in
///   `read`, `write`, `fsync` and `setattr`), sends no `release` for it, and keeps its page cache
///   across opens, as with ``OpenedFile/keepCache``; changes from elsewhere must be invalidated
///   through the ``Notifier``. `create` still reaches the filesystem, and its file gets a
///   `release` at the last close;
/// - answer `flush` with `ENOSYS`: `close(2)` no longer reaches the filesystem at all;
/// - do not want ``Capabilities/atomicOpenTruncate``: without an `open` request the kernel
///   would assume the filesystem truncated. `O_TRUNC` then arrives as `setattr` size 0;
/// - mount with ``MountOptions/defaultPermissions`` whenever other users can reach the mount:
///   without `open` the filesystem never sees the access mode, so the kernel must check
///   permissions itself;
/// - the filesystem learns when a writer is done from ``CloseWatcher``, and from `fsync`.
///
/// ## Locks
/// There are no `getlk`/`setlk`/`flock` requirements on purpose: the kernel then implements
/// `flock(2)` and `fcntl(2)` locks itself, which excludes correctly between processes on this
/// machine.
///
/// ## Deadlocks
/// A handler must not touch the mount itself (stat, open, … on the mountpoint): the kernel may
/// hold locks that wait for this very request. Likewise never call the ``Notifier``'s kernel
/// side from a handler — FuseKit's notifier only queues, so calling it from handlers is safe.
public protocol FuseOperations: AnyObject, Sendable {
    /// Called once when the kernel connects, before any other request. Adjust
    /// `connection.wanted` to choose optional features.
    func initialize(_ connection: inout ConnectionInfo)

    /// Called once when the session ends (unmount or exit). Flush anything still pending.
    func destroy()

    /// What `inode` stands for (a path), for the log line about a request that waits too long.
    /// Called from FuseKit's watch thread; must not wait for anything a stuck request may hold.
    func describe(_ inode: Inode) -> String?

    /// Resolves `name` in directory `parent`. Answer with an ``Entry`` (adds one lookup count)
    /// or ``Entry/negative(timeout:)``, or fail with `ENOENT`.
    func lookup(_ request: Request, parent: Inode, name: String, reply: EntryReply)

    /// The kernel drops `count` lookups of `inode`. When its total reaches 0 the kernel no
    /// longer knows it and the filesystem may free it. There is no reply.
    func forget(inode: Inode, count: UInt64)

    /// Several ``forget(inode:count:)`` at once; the default forwards each one.
    func forget(_ inodes: [(inode: Inode, count: UInt64)])

    /// The attributes of `inode`; `handle` is set when asked through an open file (`fstat`).
    func getattr(_ request: Request, inode: Inode, handle: UInt64?, reply: AttributesReply)

    /// Changes attributes (chmod, chown, truncate, utimens) and answers the new ones.
    func setattr(_ request: Request, inode: Inode, changes: AttributeChanges, reply: AttributesReply)

    /// The target of symbolic link `inode`.
    func readlink(_ request: Request, inode: Inode, reply: ReadlinkReply)

    /// Creates a non-directory, non-symlink node (`mode` includes the type bits; the caller's
    /// umask is already applied).
    func mknod(_ request: Request, parent: Inode, name: String, mode: UInt32, device: UInt64,
               reply: EntryReply)

    /// Creates directory `name` with permission bits `mode`.
    func mkdir(_ request: Request, parent: Inode, name: String, mode: UInt32, reply: EntryReply)

    /// Removes the non-directory `name`. The inode itself lives on while the kernel still has
    /// lookup counts (open files keep working).
    func unlink(_ request: Request, parent: Inode, name: String, reply: EmptyReply)

    /// Removes the empty directory `name` (`ENOTEMPTY` otherwise).
    func rmdir(_ request: Request, parent: Inode, name: String, reply: EmptyReply)

    /// Creates symbolic link `name` pointing at `target`.
    func symlink(_ request: Request, parent: Inode, name: String, target: String, reply: EntryReply)

    /// Moves `name` in `parent` to `newName` in `newParent`, replacing an existing target unless
    /// `flags` say otherwise. Must be atomic: a reader sees the old or the new file, never none.
    func rename(_ request: Request, parent: Inode, name: String, newParent: Inode, newName: String,
                flags: RenameFlags, reply: EmptyReply)

    /// Makes `newName` in `newParent` another name for `inode`.
    func link(_ request: Request, inode: Inode, newParent: Inode, newName: String, reply: EntryReply)

    /// Opens `inode`. With ``Capabilities/atomicOpenTruncate`` (the default), `O_TRUNC` arrives
    /// here in `flags` and the file must be emptied. Default: succeeds with handle 0.
    func open(_ request: Request, inode: Inode, flags: OpenFlags, reply: OpenReply)

    /// Reads up to `size` bytes at `offset`; answer fewer only at the end of the file.
    func read(_ request: Request, inode: Inode, handle: UInt64, offset: Int64, size: Int,
              reply: DataReply)

    /// Writes `data` at `offset` and answers the count written. `flags` are the open flags of
    /// the file written through (for `O_APPEND` the kernel passes the end of file as it knows
    /// it; with stateless opens this is the only place the filesystem sees them).
    func write(_ request: Request, inode: Inode, handle: UInt64, offset: Int64, data: [UInt8],
               flags: OpenFlags, reply: WriteReply)

    /// Called on every `close(2)` of a descriptor for this open (there may be several per open
    /// after `dup`/`fork`). Its errno is what `close` returns: the place to commit and report.
    func flush(_ request: Request, inode: Inode, handle: UInt64, reply: EmptyReply)

    /// The last reference to the open is gone. Its errno reaches nobody. Default: succeeds.
    func release(_ request: Request, inode: Inode, handle: UInt64, flags: OpenFlags, reply: EmptyReply)

    /// Makes written data durable (`dataOnly`: `fdatasync`).
    func fsync(_ request: Request, inode: Inode, handle: UInt64, dataOnly: Bool, reply: EmptyReply)

    /// Opens directory `inode` for listing. Default: succeeds with handle 0.
    func opendir(_ request: Request, inode: Inode, flags: OpenFlags, reply: OpenReply)

    /// Lists directory `inode` starting after `offset` (0 = from the start), into a
    /// ``DirectoryListing`` of `capacity` bytes. An empty listing means the end.
    func readdir(_ request: Request, inode: Inode, handle: UInt64, offset: Int64, capacity: Int,
                 reply: DirectoryReply)

    /// Like ``readdir(_:inode:handle:offset:capacity:reply:)`` with full entries; used when
    /// ``Capabilities/readdirPlus`` is wanted. Each added entry adds a lookup count.
    func readdirplus(_ request: Request, inode: Inode, handle: UInt64, offset: Int64, capacity: Int,
                     reply: DirectoryPlusReply)

    /// The directory open ends. Default: succeeds.
    func releasedir(_ request: Request, inode: Inode, handle: UInt64, reply: EmptyReply)

    /// Makes directory changes durable.
    func fsyncdir(_ request: Request, inode: Inode, handle: UInt64, dataOnly: Bool, reply: EmptyReply)

    /// Space and file counts for `df`.
    func statfs(_ request: Request, inode: Inode, reply: StatisticsReply)

    /// Sets extended attribute `name` of `inode`.
    func setxattr(_ request: Request, inode: Inode, name: String, value: [UInt8],
                  mode: ExtendedAttributeMode, reply: EmptyReply)

    /// The value of extended attribute `name` (`ENODATA` if absent).
    func getxattr(_ request: Request, inode: Inode, name: String, reply: ExtendedAttributeReply)

    /// The names of all extended attributes of `inode`.
    func listxattr(_ request: Request, inode: Inode, reply: ExtendedAttributeListReply)

    /// Removes extended attribute `name` (`ENODATA` if absent).
    func removexattr(_ request: Request, inode: Inode, name: String, reply: EmptyReply)

    /// Checks `access(2)` permission; `mask` is `R_OK|W_OK|X_OK` or `F_OK`. `ENOSYS` (the
    /// default) makes the kernel treat every later check as allowed.
    func access(_ request: Request, inode: Inode, mask: Int32, reply: EmptyReply)

    /// Atomically creates and opens regular file `name` (`mode` includes the type bits).
    /// `ENOSYS` makes the kernel fall back to mknod + open.
    func create(_ request: Request, parent: Inode, name: String, mode: UInt32, flags: OpenFlags,
                reply: CreateReply)

    /// Allocates or punches space (`fallocate(2)`); `mode` holds the `FALLOC_FL_*` flags.
    func fallocate(_ request: Request, inode: Inode, handle: UInt64, mode: Int32, offset: Int64,
                   length: Int64, reply: EmptyReply)
}

extension FuseOperations {
    public func initialize(_ connection: inout ConnectionInfo) {}
    public func destroy() {}
    public func describe(_ inode: Inode) -> String? { nil }
    public func lookup(_ request: Request, parent: Inode, name: String, reply: EntryReply) {
        reply.fail(Errno.notImplemented)
    }
    public func forget(inode: Inode, count: UInt64) {}
    public func forget(_ inodes: [(inode: Inode, count: UInt64)]) {
        for (inode, count) in inodes { forget(inode: inode, count: count) }
    }
    public func getattr(_ request: Request, inode: Inode, handle: UInt64?, reply: AttributesReply) {
        reply.fail(Errno.notImplemented)
    }
    public func setattr(_ request: Request, inode: Inode, changes: AttributeChanges, reply: AttributesReply) {
        reply.fail(Errno.notImplemented)
    }
    public func readlink(_ request: Request, inode: Inode, reply: ReadlinkReply) {
        reply.fail(Errno.notImplemented)
    }
    public func mknod(_ request: Request, parent: Inode, name: String, mode: UInt32, device: UInt64,
                      reply: EntryReply) {
        reply.fail(Errno.notImplemented)
    }
    public func mkdir(_ request: Request, parent: Inode, name: String, mode: UInt32, reply: EntryReply) {
        reply.fail(Errno.notImplemented)
    }
    public func unlink(_ request: Request, parent: Inode, name: String, reply: EmptyReply) {
        reply.fail(Errno.notImplemented)
    }
    public func rmdir(_ request: Request, parent: Inode, name: String, reply: EmptyReply) {
        reply.fail(Errno.notImplemented)
    }
    public func symlink(_ request: Request, parent: Inode, name: String, target: String, reply: EntryReply) {
        reply.fail(Errno.notImplemented)
    }
    public func rename(_ request: Request, parent: Inode, name: String, newParent: Inode, newName: String,
                       flags: RenameFlags, reply: EmptyReply) {
        reply.fail(Errno.notImplemented)
    }
    public func link(_ request: Request, inode: Inode, newParent: Inode, newName: String, reply: EntryReply) {
        reply.fail(Errno.notImplemented)
    }
    public func open(_ request: Request, inode: Inode, flags: OpenFlags, reply: OpenReply) {
        reply.succeed(OpenedFile())
    }
    public func read(_ request: Request, inode: Inode, handle: UInt64, offset: Int64, size: Int,
                     reply: DataReply) {
        reply.fail(Errno.notImplemented)
    }
    public func write(_ request: Request, inode: Inode, handle: UInt64, offset: Int64, data: [UInt8],
                      flags: OpenFlags, reply: WriteReply) {
        reply.fail(Errno.notImplemented)
    }
    public func flush(_ request: Request, inode: Inode, handle: UInt64, reply: EmptyReply) {
        reply.fail(Errno.notImplemented)
    }
    public func release(_ request: Request, inode: Inode, handle: UInt64, flags: OpenFlags, reply: EmptyReply) {
        reply.succeed()
    }
    public func fsync(_ request: Request, inode: Inode, handle: UInt64, dataOnly: Bool, reply: EmptyReply) {
        reply.fail(Errno.notImplemented)
    }
    public func opendir(_ request: Request, inode: Inode, flags: OpenFlags, reply: OpenReply) {
        reply.succeed(OpenedFile())
    }
    public func readdir(_ request: Request, inode: Inode, handle: UInt64, offset: Int64, capacity: Int,
                        reply: DirectoryReply) {
        reply.fail(Errno.notImplemented)
    }
    public func readdirplus(_ request: Request, inode: Inode, handle: UInt64, offset: Int64, capacity: Int,
                            reply: DirectoryPlusReply) {
        reply.fail(Errno.notImplemented)
    }
    public func releasedir(_ request: Request, inode: Inode, handle: UInt64, reply: EmptyReply) {
        reply.succeed()
    }
    public func fsyncdir(_ request: Request, inode: Inode, handle: UInt64, dataOnly: Bool, reply: EmptyReply) {
        reply.fail(Errno.notImplemented)
    }
    public func statfs(_ request: Request, inode: Inode, reply: StatisticsReply) {
        reply.fail(Errno.notImplemented)
    }
    public func setxattr(_ request: Request, inode: Inode, name: String, value: [UInt8],
                         mode: ExtendedAttributeMode, reply: EmptyReply) {
        reply.fail(Errno.notImplemented)
    }
    public func getxattr(_ request: Request, inode: Inode, name: String, reply: ExtendedAttributeReply) {
        reply.fail(Errno.notImplemented)
    }
    public func listxattr(_ request: Request, inode: Inode, reply: ExtendedAttributeListReply) {
        reply.fail(Errno.notImplemented)
    }
    public func removexattr(_ request: Request, inode: Inode, name: String, reply: EmptyReply) {
        reply.fail(Errno.notImplemented)
    }
    public func access(_ request: Request, inode: Inode, mask: Int32, reply: EmptyReply) {
        reply.fail(Errno.notImplemented)
    }
    public func create(_ request: Request, parent: Inode, name: String, mode: UInt32, flags: OpenFlags,
                       reply: CreateReply) {
        reply.fail(Errno.notImplemented)
    }
    public func fallocate(_ request: Request, inode: Inode, handle: UInt64, mode: Int32, offset: Int64,
                          length: Int64, reply: EmptyReply) {
        reply.fail(Errno.notImplemented)
    }
}
