internal import CFuse
import Foundation
import Synchronization
import ShelfSystem

/// Connects libfuse's C callbacks to a ``FuseOperations``.
///
/// The operations table is built here, in library code, from `@convention(c)` closures that
/// find their `Dispatcher` through `fuse_req_userdata` (top-level code in `main.swift` is
/// main-actor isolated and must not run on libfuse's threads). Each callback decodes its C
/// arguments, wraps the request in a ``Reply`` whose delivery calls the matching
/// `fuse_reply_*`, and calls the filesystem synchronously.
final class Dispatcher: @unchecked Sendable {
    let filesystem: any FuseOperations
    let notifier: Notifier
    let closeWatcher: CloseWatcher
    /// Logs requests that wait too long for their answer.
    let requestWatch: RequestWatch
    /// Set right after `fuse_session_new`; used by the notifier's sink.
    var session: OpaquePointer?
    /// Set once mounted; the close watcher watches folders below it.
    var mountpoint: String?
    /// Set by `run` before the loop: called once the mount is fully set up.
    var whenReady: (@Sendable () -> Void)?

    init(filesystem: any FuseOperations, notifier: Notifier, closeWatcher: CloseWatcher) {
        self.filesystem = filesystem
        self.notifier = notifier
        self.closeWatcher = closeWatcher
        requestWatch = RequestWatch { [filesystem] in filesystem.describe(Inode($0)) }
    }

    static func from(_ request: fuse_req_t?) -> Dispatcher {
        Unmanaged<Dispatcher>.fromOpaque(fuse_req_userdata(request)!).takeUnretainedValue()
    }

    static func from(userdata: UnsafeMutableRawPointer?) -> Dispatcher {
        Unmanaged<Dispatcher>.fromOpaque(userdata!).takeUnretainedValue()
    }

    /// FuseKit's capabilities and their libfuse bits.
    private static let capabilityBits: [(Capabilities, UInt32)] = [
        (.atomicOpenTruncate, UInt32(FUSE_CAP_ATOMIC_O_TRUNC)),
        (.readdirPlus, UInt32(FUSE_CAP_READDIRPLUS)),
        (.readdirPlusAuto, UInt32(FUSE_CAP_READDIRPLUS_AUTO)),
        (.writebackCache, UInt32(FUSE_CAP_WRITEBACK_CACHE)),
        (.asyncRead, UInt32(FUSE_CAP_ASYNC_READ)),
        (.noOpenSupport, UInt32(FUSE_CAP_NO_OPEN_SUPPORT)),
        (.asyncDirectIO, UInt32(FUSE_CAP_ASYNC_DIO)),
        (.automaticDataInvalidation, UInt32(FUSE_CAP_AUTO_INVAL_DATA)),
    ]

    /// The default wish list before the filesystem adjusts it.
    static let defaultCapabilities: Capabilities = [
        .atomicOpenTruncate, .readdirPlus, .readdirPlusAuto, .asyncRead, .automaticDataInvalidation,
    ]

    fileprivate func initialize(_ connection: UnsafeMutablePointer<fuse_conn_info>) {
        var capable: Capabilities = []
        for (capability, bit) in Self.capabilityBits where connection.pointee.capable & bit != 0 {
            capable.insert(capability)
        }
        var info = ConnectionInfo(capable: capable, wanted: Self.defaultCapabilities.intersection(capable),
                                  maximumWrite: connection.pointee.max_write)
        filesystem.initialize(&info)
        for (capability, bit) in Self.capabilityBits {
            if info.wanted.contains(capability) && capable.contains(capability) {
                connection.pointee.want |= bit
            } else {
                connection.pointee.want &= ~bit
            }
        }
        connection.pointee.max_write = min(info.maximumWrite, connection.pointee.max_write)
        nonisolated(unsafe) let session = self.session
        notifier.start { invalidation in Self.send(invalidation, on: session) }
        if let mountpoint {
            closeWatcher.connect(mountpoint: mountpoint, whenWatching: whenReady ?? {})
        } else {
            whenReady?()
        }
    }

    private static func send(_ invalidation: Notifier.Invalidation, on session: OpaquePointer?) -> Int32 {
        switch invalidation {
        case .content(let inode):
            fuse_lowlevel_notify_inval_inode(session, inode.rawValue, 0, 0)
        case .attributes(let inode):
            fuse_lowlevel_notify_inval_inode(session, inode.rawValue, -1, 0)
        case .entry(let parent, let name):
            fuse_lowlevel_notify_inval_entry(session, parent.rawValue, name, name.utf8.count)
        case .deletion(let parent, let child, let name):
            fuse_lowlevel_notify_delete(session, parent.rawValue, child.rawValue, name, name.utf8.count)
        }
    }
}

// MARK: - Replies

/// A reply for `request` (about `inode`) whose success is sent by `send` and whose failure by
/// `fuse_reply_err`; the request is watched until then.
private func makeReply<Success>(_ request: fuse_req_t?, _ operation: StaticString, _ inode: fuse_ino_t,
                                send: @escaping (fuse_req_t?, Success) -> Void) -> Reply<Success> {
    let watch = Dispatcher.from(request).requestWatch
    let ticket = watch.arrived(operation, inode: inode)
    return Reply(operation: operation, request: request) { result in
        switch result {
        case .success(let value): send(request, value)
        case .failure(let errno): fuse_reply_err(request, errno.code)
        }
        watch.answered(ticket)
    }
}

private func entryReply(_ request: fuse_req_t?, _ operation: StaticString, _ inode: fuse_ino_t) -> EntryReply {
    makeReply(request, operation, inode) { request, entry in
        var parameters = fuse_entry_param(entry)
        fuse_reply_entry(request, &parameters)
    }
}

private func attributesReply(_ request: fuse_req_t?, _ operation: StaticString, _ inode: fuse_ino_t) -> AttributesReply {
    makeReply(request, operation, inode) { request, cached in
        var attributes = stat(cached.attributes)
        fuse_reply_attr(request, &attributes, cached.timeout.timeInterval)
    }
}

private func emptyReply(_ request: fuse_req_t?, _ operation: StaticString, _ inode: fuse_ino_t) -> EmptyReply {
    makeReply(request, operation, inode) { request, _ in fuse_reply_err(request, 0) }
}

/// Open replies copy the request's `fuse_file_info`: the pointer is only valid during the
/// callback, while the reply may be answered later.
private func openReply(_ request: fuse_req_t?, _ info: UnsafeMutablePointer<fuse_file_info>?,
                       _ operation: StaticString, _ inode: fuse_ino_t) -> OpenReply {
    var copy = info!.pointee
    return makeReply(request, operation, inode) { request, opened in
        copy.set(opened)
        fuse_reply_open(request, &copy)
    }
}

private func bufferReply(_ request: fuse_req_t?, _ bytes: some Collection<UInt8>) {
    let array = Array(bytes)
    _ = array.withUnsafeBufferPointer { buffer in
        buffer.withMemoryRebound(to: CChar.self) { fuse_reply_buf(request, $0.baseAddress, $0.count) }
    }
}

/// The extended-attribute size protocol: a size of 0 asks how big the value is, a value
/// larger than the caller's buffer is `ERANGE`.
private func extendedAttributeReply<Success>(_ request: fuse_req_t?, size: Int, _ operation: StaticString,
                                             _ inode: fuse_ino_t,
                                             encode: @escaping (Success) -> [UInt8]) -> Reply<Success> {
    makeReply(request, operation, inode) { request, value in
        let bytes = encode(value)
        if size == 0 {
            fuse_reply_xattr(request, bytes.count)
        } else if bytes.count > size {
            fuse_reply_err(request, ERANGE)
        } else {
            bufferReply(request, bytes)
        }
    }
}

// MARK: - Argument decoding

/// `XATTR_CREATE` and `XATTR_REPLACE` from <sys/xattr.h>, which Glibc's module does not export.
private let xattrCreate: Int32 = 1
private let xattrReplace: Int32 = 2

private func requestContext(_ request: fuse_req_t?) -> Request {
    let context = fuse_req_ctx(request)!.pointee
    return Request(uid: context.uid, gid: context.gid, pid: context.pid, umask: context.umask)
}

private func string(_ pointer: UnsafePointer<CChar>?) -> String {
    String(cString: pointer!)
}

private func operations(_ request: fuse_req_t?) -> any FuseOperations {
    Dispatcher.from(request).filesystem
}

extension AttributeChanges {
    init(_ attributes: stat, mask: Int32, handle: UInt64?) {
        func has(_ bit: Int32) -> Bool { mask & bit != 0 }
        func time(_ set: Int32, _ now: Int32, _ value: timespec) -> TimeChange? {
            if has(now) { return .now }
            return has(set) ? .time(FileTime(value)) : nil
        }
        self.init(permissions: has(FUSE_SET_ATTR_MODE) ? attributes.st_mode & 0o7777 : nil,
                  uid: has(FUSE_SET_ATTR_UID) ? attributes.st_uid : nil,
                  gid: has(FUSE_SET_ATTR_GID) ? attributes.st_gid : nil,
                  size: has(FUSE_SET_ATTR_SIZE) ? UInt64(attributes.st_size) : nil,
                  accessTime: time(FUSE_SET_ATTR_ATIME, FUSE_SET_ATTR_ATIME_NOW, attributes.st_atim),
                  modificationTime: time(FUSE_SET_ATTR_MTIME, FUSE_SET_ATTR_MTIME_NOW, attributes.st_mtim),
                  changeTime: has(FUSE_SET_ATTR_CTIME) ? FileTime(attributes.st_ctim) : nil,
                  handle: handle)
    }
}

private func openFlags(_ info: UnsafeMutablePointer<fuse_file_info>?) -> OpenFlags {
    OpenFlags(rawValue: info?.pointee.flags ?? 0)
}

private func handle(_ info: UnsafeMutablePointer<fuse_file_info>?) -> UInt64 {
    info?.pointee.fh ?? 0
}

// MARK: - The operations table

extension Dispatcher {
    /// Every supported request; lock requests (`getlk`, `setlk`, `flock`) stay NULL so the
    /// kernel handles `fcntl` and `flock` locks itself.
    static let operationTable: fuse_lowlevel_ops = {
        var ops = fuse_lowlevel_ops()
        ops.`init` = { userdata, connection in
            Dispatcher.from(userdata: userdata).initialize(connection!)
        }
        ops.destroy = { userdata in
            Dispatcher.from(userdata: userdata).filesystem.destroy()
        }
        ops.lookup = { request, parent, name in
            operations(request).lookup(requestContext(request), parent: Inode(parent), name: string(name),
                                       reply: entryReply(request, "lookup", parent))
        }
        ops.forget = { request, inode, count in
            operations(request).forget(inode: Inode(inode), count: count)
            fuse_reply_none(request)
        }
        ops.forget_multi = { request, count, forgets in
            let batch = UnsafeBufferPointer(start: forgets, count: count).map {
                (inode: Inode($0.ino), count: $0.nlookup)
            }
            operations(request).forget(batch)
            fuse_reply_none(request)
        }
        ops.getattr = { request, inode, info in
            operations(request).getattr(requestContext(request), inode: Inode(inode), handle: info?.pointee.fh,
                                        reply: attributesReply(request, "getattr", inode))
        }
        ops.setattr = { request, inode, attributes, mask, info in
            let changes = AttributeChanges(attributes!.pointee, mask: mask, handle: info?.pointee.fh)
            operations(request).setattr(requestContext(request), inode: Inode(inode), changes: changes,
                                        reply: attributesReply(request, "setattr", inode))
        }
        ops.readlink = { request, inode in
            operations(request).readlink(requestContext(request), inode: Inode(inode),
                                         reply: makeReply(request, "readlink", inode) { fuse_reply_readlink($0, $1) })
        }
        ops.mknod = { request, parent, name, mode, device in
            operations(request).mknod(requestContext(request), parent: Inode(parent), name: string(name),
                                      mode: mode, device: UInt64(device), reply: entryReply(request, "mknod", parent))
        }
        ops.mkdir = { request, parent, name, mode in
            operations(request).mkdir(requestContext(request), parent: Inode(parent), name: string(name),
                                      mode: mode, reply: entryReply(request, "mkdir", parent))
        }
        ops.unlink = { request, parent, name in
            operations(request).unlink(requestContext(request), parent: Inode(parent), name: string(name),
                                       reply: emptyReply(request, "unlink", parent))
        }
        ops.rmdir = { request, parent, name in
            operations(request).rmdir(requestContext(request), parent: Inode(parent), name: string(name),
                                      reply: emptyReply(request, "rmdir", parent))
        }
        ops.symlink = { request, target, parent, name in
            operations(request).symlink(requestContext(request), parent: Inode(parent), name: string(name),
                                        target: string(target), reply: entryReply(request, "symlink", parent))
        }
        ops.rename = { request, parent, name, newParent, newName, flags in
            operations(request).rename(requestContext(request), parent: Inode(parent), name: string(name),
                                       newParent: Inode(newParent), newName: string(newName),
                                       flags: RenameFlags(rawValue: flags), reply: emptyReply(request, "rename", parent))
        }
        ops.link = { request, inode, newParent, newName in
            operations(request).link(requestContext(request), inode: Inode(inode), newParent: Inode(newParent),
                                     newName: string(newName), reply: entryReply(request, "link", inode))
        }
        ops.open = { request, inode, info in
            operations(request).open(requestContext(request), inode: Inode(inode), flags: openFlags(info),
                                     reply: openReply(request, info, "open", inode))
        }
        ops.read = { request, inode, size, offset, info in
            operations(request).read(requestContext(request), inode: Inode(inode), handle: handle(info),
                                     offset: Int64(offset), size: size,
                                     reply: makeReply(request, "read", inode) { bufferReply($0, $1) })
        }
        ops.write = { request, inode, bytes, size, offset, info in
            let data = [UInt8](UnsafeRawBufferPointer(start: bytes, count: size))
            operations(request).write(requestContext(request), inode: Inode(inode), handle: handle(info),
                                      offset: Int64(offset), data: data, flags: openFlags(info),
                                      reply: makeReply(request, "write", inode) { fuse_reply_write($0, $1) })
        }
        ops.flush = { request, inode, info in
            operations(request).flush(requestContext(request), inode: Inode(inode), handle: handle(info),
                                      reply: emptyReply(request, "flush", inode))
        }
        ops.release = { request, inode, info in
            operations(request).release(requestContext(request), inode: Inode(inode), handle: handle(info),
                                        flags: openFlags(info), reply: emptyReply(request, "release", inode))
        }
        ops.fsync = { request, inode, dataOnly, info in
            operations(request).fsync(requestContext(request), inode: Inode(inode), handle: handle(info),
                                      dataOnly: dataOnly != 0, reply: emptyReply(request, "fsync", inode))
        }
        ops.opendir = { request, inode, info in
            operations(request).opendir(requestContext(request), inode: Inode(inode), flags: openFlags(info),
                                        reply: openReply(request, info, "opendir", inode))
        }
        ops.readdir = { request, inode, size, offset, info in
            operations(request).readdir(requestContext(request), inode: Inode(inode), handle: handle(info),
                                        offset: Int64(offset), capacity: size,
                                        reply: makeReply(request, "readdir", inode) { bufferReply($0, $1.buffer.filled) })
        }
        ops.readdirplus = { request, inode, size, offset, info in
            operations(request).readdirplus(requestContext(request), inode: Inode(inode), handle: handle(info),
                                            offset: Int64(offset), capacity: size,
                                            reply: makeReply(request, "readdirplus", inode) { bufferReply($0, $1.buffer.filled) })
        }
        ops.releasedir = { request, inode, info in
            operations(request).releasedir(requestContext(request), inode: Inode(inode), handle: handle(info),
                                           reply: emptyReply(request, "releasedir", inode))
        }
        ops.fsyncdir = { request, inode, dataOnly, info in
            operations(request).fsyncdir(requestContext(request), inode: Inode(inode), handle: handle(info),
                                         dataOnly: dataOnly != 0, reply: emptyReply(request, "fsyncdir", inode))
        }
        ops.statfs = { request, inode in
            operations(request).statfs(requestContext(request), inode: Inode(inode),
                                       reply: makeReply(request, "statfs", inode) { request, statistics in
                                           var raw = statvfs(statistics)
                                           fuse_reply_statfs(request, &raw)
                                       })
        }
        ops.setxattr = { request, inode, name, value, size, flags in
            let bytes = [UInt8](UnsafeRawBufferPointer(start: value, count: size))
            let mode: ExtendedAttributeMode = flags & xattrCreate != 0 ? .createOnly
                : flags & xattrReplace != 0 ? .replaceOnly : .any
            operations(request).setxattr(requestContext(request), inode: Inode(inode), name: string(name),
                                         value: bytes, mode: mode, reply: emptyReply(request, "setxattr", inode))
        }
        ops.getxattr = { request, inode, name, size in
            operations(request).getxattr(requestContext(request), inode: Inode(inode), name: string(name),
                                         reply: extendedAttributeReply(request, size: size, "getxattr", inode) { $0 })
        }
        ops.listxattr = { request, inode, size in
            operations(request).listxattr(requestContext(request), inode: Inode(inode),
                                          reply: extendedAttributeReply(request, size: size, "listxattr", inode) { names in
                                              names.flatMap { Array($0.utf8) + [0] }
                                          })
        }
        ops.removexattr = { request, inode, name in
            operations(request).removexattr(requestContext(request), inode: Inode(inode), name: string(name),
                                            reply: emptyReply(request, "removexattr", inode))
        }
        ops.access = { request, inode, mask in
            operations(request).access(requestContext(request), inode: Inode(inode), mask: mask,
                                       reply: emptyReply(request, "access", inode))
        }
        ops.create = { request, parent, name, mode, info in
            var copy = info!.pointee
            let reply: CreateReply = makeReply(request, "create", parent) { request, created in
                var parameters = fuse_entry_param(created.entry)
                copy.set(created.file)
                fuse_reply_create(request, &parameters, &copy)
            }
            operations(request).create(requestContext(request), parent: Inode(parent), name: string(name),
                                       mode: mode, flags: openFlags(info), reply: reply)
        }
        ops.fallocate = { request, inode, mode, offset, length, info in
            operations(request).fallocate(requestContext(request), inode: Inode(inode), handle: handle(info),
                                          mode: mode, offset: Int64(offset), length: Int64(length),
                                          reply: emptyReply(request, "fallocate", inode))
        }
        return ops
    }()
}

// MARK: - Conversions to C

extension FileTime {
    init(_ spec: timespec) {
        self.init(seconds: Int64(spec.tv_sec), nanoseconds: Int32(spec.tv_nsec))
    }
}

extension timespec {
    init(_ time: FileTime) {
        self.init(tv_sec: Int(time.seconds), tv_nsec: Int(time.nanoseconds))
    }
}

extension stat {
    init(_ attributes: FileAttributes) {
        self.init()
        st_ino = UInt(attributes.inode.rawValue)
        st_mode = attributes.mode
        st_nlink = UInt(attributes.linkCount)
        st_uid = attributes.uid
        st_gid = attributes.gid
        st_rdev = UInt(attributes.deviceNumber)
        st_size = Int(attributes.size)
        st_blksize = Int(attributes.blockSize)
        st_blocks = Int(attributes.blocks)
        st_atim = timespec(attributes.accessTime)
        st_mtim = timespec(attributes.modificationTime)
        st_ctim = timespec(attributes.changeTime)
    }
}

extension fuse_entry_param {
    init(_ entry: Entry) {
        self.init()
        ino = entry.attributes.inode.rawValue
        generation = entry.generation
        attr = stat(entry.attributes)
        attr_timeout = entry.attributeTimeout.timeInterval
        entry_timeout = entry.entryTimeout.timeInterval
    }
}

extension fuse_file_info {
    mutating func set(_ opened: OpenedFile) {
        cfuse_file_info_set_open_flags(&self, opened.handle, opened.keepCache ? 1 : 0, opened.directIO ? 1 : 0,
                                       opened.nonSeekable ? 1 : 0, opened.cacheDirectory ? 1 : 0,
                                       opened.noFlush ? 1 : 0)
    }
}

extension statvfs {
    init(_ statistics: FilesystemStatistics) {
        self.init()
        f_bsize = UInt(statistics.blockSize)
        f_frsize = UInt(statistics.fragmentSize)
        f_blocks = UInt(statistics.totalBlocks)
        f_bfree = UInt(statistics.freeBlocks)
        f_bavail = UInt(statistics.availableBlocks)
        f_files = UInt(statistics.totalFiles)
        f_ffree = UInt(statistics.freeFiles)
        f_favail = UInt(statistics.availableFiles)
        f_namemax = UInt(statistics.maximumNameLength)
    }
}
