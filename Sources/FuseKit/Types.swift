import Foundation

/// An inode number as the kernel knows it. The root directory is always ``root``.
public struct Inode: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    /// FUSE's fixed inode for the mount's root directory (`FUSE_ROOT_ID`).
    public static let root = Inode(1)

    public static func < (lhs: Inode, rhs: Inode) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "inode \(rawValue)" }
}

/// Who sent a request: the calling process and its credentials (`fuse_req_ctx`).
public struct Request: Sendable, Hashable {
    public var uid: UInt32
    public var gid: UInt32
    public var pid: Int32
    /// The caller's umask, for information: the kernel has already applied it to the `mode`
    /// of create, mkdir and mknod.
    public var umask: UInt32

    public init(uid: UInt32, gid: UInt32, pid: Int32, umask: UInt32 = 0o022) {
        self.uid = uid
        self.gid = gid
        self.pid = pid
        self.umask = umask
    }
}

/// The type of a file, the `S_IFMT` part of a mode.
public enum FileKind: Sendable, Hashable {
    case regular, directory, symbolicLink, blockDevice, characterDevice, fifo, socket

    /// The `S_IFMT` bits for this kind.
    public var modeBits: UInt32 {
        switch self {
        case .regular: UInt32(S_IFREG)
        case .directory: UInt32(S_IFDIR)
        case .symbolicLink: UInt32(S_IFLNK)
        case .blockDevice: UInt32(S_IFBLK)
        case .characterDevice: UInt32(S_IFCHR)
        case .fifo: UInt32(S_IFIFO)
        case .socket: UInt32(S_IFSOCK)
        }
    }

    /// The kind a full mode describes, or nil for a mode without a known type.
    public init?(mode: UInt32) {
        switch mode & UInt32(S_IFMT) {
        case UInt32(S_IFREG): self = .regular
        case UInt32(S_IFDIR): self = .directory
        case UInt32(S_IFLNK): self = .symbolicLink
        case UInt32(S_IFBLK): self = .blockDevice
        case UInt32(S_IFCHR): self = .characterDevice
        case UInt32(S_IFIFO): self = .fifo
        case UInt32(S_IFSOCK): self = .socket
        default: return nil
        }
    }
}

/// A file timestamp with nanosecond precision, as `stat` reports it.
public struct FileTime: Hashable, Comparable, Sendable {
    public var seconds: Int64
    public var nanoseconds: Int32

    public init(seconds: Int64, nanoseconds: Int32 = 0) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    public init(_ date: Date) {
        let whole = date.timeIntervalSince1970.rounded(.down)
        self.init(seconds: Int64(whole),
                  nanoseconds: Int32(((date.timeIntervalSince1970 - whole) * 1e9).rounded(.down)))
    }

    /// The current wall-clock time.
    public static var now: FileTime {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return FileTime(seconds: Int64(spec.tv_sec), nanoseconds: Int32(spec.tv_nsec))
    }

    public var date: Date {
        Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9)
    }

    public static func < (lhs: FileTime, rhs: FileTime) -> Bool {
        (lhs.seconds, lhs.nanoseconds) < (rhs.seconds, rhs.nanoseconds)
    }
}

/// What `stat` shows for a file.
public struct FileAttributes: Hashable, Sendable {
    public var inode: Inode
    public var kind: FileKind
    /// Permission bits only (`0o7777` at most); the type comes from ``kind``.
    public var permissions: UInt32
    /// Size in bytes. Must equal the number of bytes a read returns.
    public var size: UInt64
    public var linkCount: UInt32
    public var uid: UInt32
    public var gid: UInt32
    public var accessTime: FileTime
    public var modificationTime: FileTime
    public var changeTime: FileTime
    /// Device number for block and character devices.
    public var deviceNumber: UInt64
    /// Preferred I/O size; 0 lets the kernel choose.
    public var blockSize: UInt32
    /// The file's bytes live elsewhere (a cloud placeholder): it takes no blocks here, as
    /// `du` and file managers that show "online-only" files read from `st_blocks`.
    public var isOnlineOnly: Bool

    public init(inode: Inode, kind: FileKind, permissions: UInt32, size: UInt64 = 0,
                linkCount: UInt32 = 1, uid: UInt32 = FileAttributes.processUID, gid: UInt32 = FileAttributes.processGID,
                accessTime: FileTime, modificationTime: FileTime, changeTime: FileTime,
                deviceNumber: UInt64 = 0, blockSize: UInt32 = 0, isOnlineOnly: Bool = false) {
        self.inode = inode
        self.kind = kind
        self.permissions = permissions & 0o7777
        self.size = size
        self.linkCount = linkCount
        self.uid = uid
        self.gid = gid
        self.accessTime = accessTime
        self.modificationTime = modificationTime
        self.changeTime = changeTime
        self.deviceNumber = deviceNumber
        self.blockSize = blockSize
        self.isOnlineOnly = isOnlineOnly
    }

    /// The owner of files that have no other: this process's user and group, asked once (a
    /// system call per attribute reply adds up over a listing of thousands of files).
    public static let processUID = getuid()
    public static let processGID = getgid()

    /// The full `st_mode`: type bits and permissions.
    public var mode: UInt32 { kind.modeBits | permissions }
    /// 512-byte blocks, as `du` counts them.
    public var blocks: UInt64 { isOnlineOnly ? 0 : (size + 511) / 512 }
}

/// A name resolved to a file, with how long the kernel may cache the answer.
///
/// Every entry handed to the kernel (lookup, mkdir, mknod, symlink, link, create, readdirplus
/// except `.` and `..`) increases that inode's lookup count by one; the filesystem must keep
/// the inode valid until ``FuseOperations/forget(inode:count:)`` brings the count back to 0.
public struct Entry: Hashable, Sendable {
    public var attributes: FileAttributes
    /// Distinguishes reuses of the same inode number; keep 0 if numbers are never reused.
    public var generation: UInt64
    /// How long the kernel may trust ``attributes`` without asking `getattr` again.
    public var attributeTimeout: Duration
    /// How long the kernel may trust that the name maps to this inode.
    public var entryTimeout: Duration

    public init(attributes: FileAttributes, generation: UInt64 = 0,
                attributeTimeout: Duration, entryTimeout: Duration) {
        self.attributes = attributes
        self.generation = generation
        self.attributeTimeout = attributeTimeout
        self.entryTimeout = entryTimeout
    }

    /// A lookup answer meaning "no such name", which the kernel caches for `timeout`
    /// (a negative entry). Only valid as a reply to `lookup`; it adds no lookup count.
    public static func negative(timeout: Duration) -> Entry {
        let epoch = FileTime(seconds: 0)
        return Entry(attributes: FileAttributes(inode: Inode(0), kind: .regular, permissions: 0,
                                                accessTime: epoch, modificationTime: epoch,
                                                changeTime: epoch),
                     attributeTimeout: .zero, entryTimeout: timeout)
    }

    public var isNegative: Bool { attributes.inode.rawValue == 0 }
}

/// Attributes with how long the kernel may cache them (the answer to `getattr`/`setattr`).
public struct CachedAttributes: Hashable, Sendable {
    public var attributes: FileAttributes
    public var timeout: Duration

    public init(_ attributes: FileAttributes, timeout: Duration) {
        self.attributes = attributes
        self.timeout = timeout
    }
}

/// The answer to `open`/`opendir`: the filesystem's handle and how the kernel should cache.
public struct OpenedFile: Hashable, Sendable {
    /// Any number the filesystem wants back in later calls on this open file.
    public var handle: UInt64
    /// Keep the page cache from earlier opens (for `opendir`, the cached listing). Set it only
    /// while the content is unchanged since the kernel last read it; otherwise readers see
    /// stale bytes.
    public var keepCache: Bool
    /// Bypass the page cache for this open (reads and writes go straight to the filesystem;
    /// `mmap` then fails). Needed for files whose size is unknown in advance.
    public var directIO: Bool
    /// The file does not support seeking (like a pipe).
    public var nonSeekable: Bool
    /// For `opendir` only: the kernel may cache the listing until the directory is invalidated.
    public var cacheDirectory: Bool
    /// The kernel need not send `flush` when this open is closed (a read-only open with
    /// nothing to commit): one request less per `close()`.
    public var noFlush: Bool

    public init(handle: UInt64 = 0, keepCache: Bool = false, directIO: Bool = false,
                nonSeekable: Bool = false, cacheDirectory: Bool = false, noFlush: Bool = false) {
        self.handle = handle
        self.keepCache = keepCache
        self.directIO = directIO
        self.nonSeekable = nonSeekable
        self.cacheDirectory = cacheDirectory
        self.noFlush = noFlush
    }
}

/// The answer to `create`: the new file's entry and its open handle.
public struct CreatedFile: Hashable, Sendable {
    public var entry: Entry
    public var file: OpenedFile

    public init(entry: Entry, file: OpenedFile) {
        self.entry = entry
        self.file = file
    }
}

/// What to do with a timestamp in `setattr`.
public enum TimeChange: Hashable, Sendable {
    /// Set it to the filesystem's current time (`touch` without a date, `UTIME_NOW`).
    case now
    case time(FileTime)

    /// The time to store, resolving ``now`` against the clock.
    public var resolved: FileTime {
        switch self {
        case .now: .now
        case .time(let time): time
        }
    }
}

/// The changes a `setattr` asks for, decoded from libfuse's `to_set` mask: nil means "leave
/// unchanged". `chmod`, `chown`, `truncate`/`ftruncate` and `utimensat` all arrive here.
public struct AttributeChanges: Hashable, Sendable {
    /// New permission bits (the type bits are never changed).
    public var permissions: UInt32?
    public var uid: UInt32?
    public var gid: UInt32?
    /// New size: truncate or extend with zeros.
    public var size: UInt64?
    public var accessTime: TimeChange?
    public var modificationTime: TimeChange?
    public var changeTime: FileTime?
    /// The open file this came through (`ftruncate`, `futimens`), if any.
    public var handle: UInt64?

    public init(permissions: UInt32? = nil, uid: UInt32? = nil, gid: UInt32? = nil,
                size: UInt64? = nil, accessTime: TimeChange? = nil,
                modificationTime: TimeChange? = nil, changeTime: FileTime? = nil,
                handle: UInt64? = nil) {
        self.permissions = permissions
        self.uid = uid
        self.gid = gid
        self.size = size
        self.accessTime = accessTime
        self.modificationTime = modificationTime
        self.changeTime = changeTime
        self.handle = handle
    }
}

/// The `open(2)` flags a file was opened with.
public struct OpenFlags: RawRepresentable, Hashable, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public enum AccessMode: Hashable, Sendable { case readOnly, writeOnly, readWrite }

    public var accessMode: AccessMode {
        switch rawValue & O_ACCMODE {
        case O_WRONLY: .writeOnly
        case O_RDWR: .readWrite
        default: .readOnly
        }
    }

    public var isWritable: Bool { accessMode != .readOnly }
    public var isReadable: Bool { accessMode != .writeOnly }
    /// `O_TRUNC`; arrives at `open` because FuseKit negotiates `FUSE_CAP_ATOMIC_O_TRUNC`
    /// by default (otherwise the kernel sends a `setattr` size 0 first).
    public var truncates: Bool { rawValue & O_TRUNC != 0 }
    public var appends: Bool { rawValue & O_APPEND != 0 }
    public var exclusive: Bool { rawValue & O_EXCL != 0 }
}

/// The flags of `renameat2(2)`.
public struct RenameFlags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Fail with `EEXIST` instead of replacing an existing target (`RENAME_NOREPLACE`).
    public static let noReplace = RenameFlags(rawValue: 1 << 0)
    /// Swap the two names atomically; both must exist (`RENAME_EXCHANGE`).
    public static let exchange = RenameFlags(rawValue: 1 << 1)
}

/// The flags of `setxattr(2)`.
public enum ExtendedAttributeMode: Hashable, Sendable {
    /// Create or replace.
    case any
    /// Fail with `EEXIST` if it exists (`XATTR_CREATE`).
    case createOnly
    /// Fail with `ENODATA` if it does not exist (`XATTR_REPLACE`).
    case replaceOnly
}

/// The answer to `statfs` (what `df` shows). Counts are in units of ``fragmentSize``.
public struct FilesystemStatistics: Hashable, Sendable {
    public var blockSize: UInt64
    public var fragmentSize: UInt64
    public var totalBlocks: UInt64
    public var freeBlocks: UInt64
    public var availableBlocks: UInt64
    public var totalFiles: UInt64
    public var freeFiles: UInt64
    public var availableFiles: UInt64
    public var maximumNameLength: UInt64

    public init(blockSize: UInt64 = 4096, fragmentSize: UInt64 = 4096, totalBlocks: UInt64 = 0,
                freeBlocks: UInt64 = 0, availableBlocks: UInt64 = 0, totalFiles: UInt64 = 0,
                freeFiles: UInt64 = 0, availableFiles: UInt64 = 0, maximumNameLength: UInt64 = 255) {
        self.blockSize = blockSize
        self.fragmentSize = fragmentSize
        self.totalBlocks = totalBlocks
        self.freeBlocks = freeBlocks
        self.availableBlocks = availableBlocks
        self.totalFiles = totalFiles
        self.freeFiles = freeFiles
        self.availableFiles = availableFiles
        self.maximumNameLength = maximumNameLength
    }

    /// The statistics of the local filesystem holding `path` (for example the database's
    /// folder), so `df` on the mount reports real free space.
    public static func of(path: String) throws(Errno) -> FilesystemStatistics {
        var raw = statvfs()
        guard statvfs(path, &raw) == 0 else { throw Errno(errno) }
        return FilesystemStatistics(blockSize: UInt64(raw.f_bsize), fragmentSize: UInt64(raw.f_frsize),
                                    totalBlocks: UInt64(raw.f_blocks), freeBlocks: UInt64(raw.f_bfree),
                                    availableBlocks: UInt64(raw.f_bavail), totalFiles: UInt64(raw.f_files),
                                    freeFiles: UInt64(raw.f_ffree), availableFiles: UInt64(raw.f_favail),
                                    maximumNameLength: UInt64(raw.f_namemax))
    }
}

/// Optional kernel features negotiated at mount time (a subset of libfuse's `FUSE_CAP_*`).
public struct Capabilities: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `open` receives `O_TRUNC` instead of a separate `setattr(size: 0)`.
    public static let atomicOpenTruncate = Capabilities(rawValue: 1 << 0)
    /// Listings use `readdirplus`, handing out entries (and lookup counts) with the names.
    public static let readdirPlus = Capabilities(rawValue: 1 << 1)
    /// With ``readdirPlus``: let the kernel pick plain `readdir` when it sees no `stat`s.
    public static let readdirPlusAuto = Capabilities(rawValue: 1 << 2)
    /// The kernel buffers writes and sends them later. Off by default: writes then lose their
    /// caller and arrive after `flush`, which breaks commit-on-close.
    public static let writebackCache = Capabilities(rawValue: 1 << 3)
    /// Several reads of one handle may be in flight at once.
    public static let asyncRead = Capabilities(rawValue: 1 << 4)
    /// The kernel re-checks attributes on every read and drops cached pages when the
    /// modification time or size changed (`FUSE_CAP_AUTO_INVAL_DATA`): a safety net for
    /// content changed behind the kernel's back, at the cost of a `getattr` per read once the
    /// attribute timeout has passed.
    public static let automaticDataInvalidation = Capabilities(rawValue: 1 << 6)
    /// `open` may be skipped by the kernel when it returns `ENOSYS` (stateless files).
    public static let noOpenSupport = Capabilities(rawValue: 1 << 5)
    /// Direct I/O (`O_DIRECT`) is sent as several requests in flight at once. Off by default:
    /// the caller then waits in a way no signal can end, where a direct read sent on its own
    /// can be interrupted (Ctrl-C) while the filesystem answers it later.
    public static let asyncDirectIO = Capabilities(rawValue: 1 << 7)
}

/// What the kernel offers at mount, and what the filesystem wants from it.
public struct ConnectionInfo: Sendable {
    /// Features this kernel supports; ``wanted`` is limited to these.
    public let capable: Capabilities
    /// Features to enable. Starts as FuseKit's default (where capable):
    /// ``Capabilities/atomicOpenTruncate``, ``Capabilities/readdirPlus``,
    /// ``Capabilities/readdirPlusAuto``, ``Capabilities/asyncRead`` and
    /// ``Capabilities/automaticDataInvalidation``; never ``Capabilities/writebackCache`` or
    /// ``Capabilities/asyncDirectIO``.
    public var wanted: Capabilities
    /// Largest single write the kernel will send, in bytes.
    public var maximumWrite: UInt32
}
