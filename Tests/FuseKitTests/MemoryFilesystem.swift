import Foundation
import FuseKit

/// A small thread-safe in-memory filesystem, enough to drive every FuseKit request through a
/// real kernel mount. Names and attributes are cached by the kernel for ``cacheTimeout`` so the
/// notifier tests can show that only an invalidation makes outside changes visible.
final class MemoryFilesystem: FuseOperations, @unchecked Sendable {
    struct Node {
        var attributes: FileAttributes
        var content: [UInt8] = []
        var children: [String: Inode] = [:]
        var target = ""
        var extendedAttributes: [String: [UInt8]] = [:]
    }

    let cacheTimeout: Duration = .seconds(60)
    /// Answers `open` and `flush` with `ENOSYS`, so the kernel stops sending them (FuseKit's
    /// "Stateless files").
    let stateless: Bool
    private let lock = NSLock()
    private var nodes: [Inode: Node] = [:]
    private var lastInode = Inode.root.rawValue
    private var lookupCounts: [Inode: UInt64] = [:]
    private(set) var destroyed = false
    /// How many `open` and `flush` requests arrived.
    private(set) var openAndFlushRequests = 0

    init(stateless: Bool = false) {
        self.stateless = stateless
        let now = FileTime.now
        nodes[.root] = Node(attributes: FileAttributes(inode: .root, kind: .directory, permissions: 0o755, linkCount: 2,
                                                       accessTime: now, modificationTime: now, changeTime: now))
    }

    // MARK: Outside changes (as another process or sync would make them)

    /// Creates or replaces a regular file at `path` (components separated by `/`) without
    /// telling the kernel; returns its inode.
    @discardableResult
    func putFile(_ path: String, _ text: String) -> Inode {
        withLock {
            let (parent, name) = resolveParent(path)
            if let existing = nodes[parent]?.children[name] {
                setContent(of: existing, Array(text.utf8))
                return existing
            }
            let inode = makeNode(kind: .regular, permissions: 0o644, in: parent, name: name)
            setContent(of: inode, Array(text.utf8))
            return inode
        }
    }

    func inode(at path: String) -> Inode? {
        withLock {
            let (parent, name) = resolveParent(path)
            return nodes[parent]?.children[name]
        }
    }

    // MARK: FuseOperations

    /// Without automatic data invalidation the kernel trusts its cache until told otherwise,
    /// which is what the notifier tests need to observe.
    func initialize(_ connection: inout ConnectionInfo) {
        connection.wanted.remove(.automaticDataInvalidation)
        if stateless { connection.wanted.remove(.atomicOpenTruncate) }
    }

    func destroy() { withLock { destroyed = true } }

    func lookup(_ request: Request, parent: Inode, name: String, reply: EntryReply) {
        reply.respond {
            try withLock {
                guard let inode = try directory(parent).children[name] else { return .negative(timeout: cacheTimeout) }
                return remember(inode)
            }
        }
    }

    func forget(inode: Inode, count: UInt64) {
        withLock { lookupCounts[inode, default: 0] -= min(count, lookupCounts[inode, default: 0]) }
    }

    func getattr(_ request: Request, inode: Inode, handle: UInt64?, reply: AttributesReply) {
        reply.respond { try withLock { CachedAttributes(try node(inode).attributes, timeout: cacheTimeout) } }
    }

    func setattr(_ request: Request, inode: Inode, changes: AttributeChanges, reply: AttributesReply) {
        reply.respond {
            try withLock {
                var node = try node(inode)
                if let permissions = changes.permissions { node.attributes.permissions = permissions }
                if let uid = changes.uid { node.attributes.uid = uid }
                if let gid = changes.gid { node.attributes.gid = gid }
                if let time = changes.accessTime { node.attributes.accessTime = time.resolved }
                if let time = changes.modificationTime { node.attributes.modificationTime = time.resolved }
                nodes[inode] = node
                if let size = changes.size { resize(inode, to: Int(size)) }
                return CachedAttributes(nodes[inode]!.attributes, timeout: cacheTimeout)
            }
        }
    }

    func readlink(_ request: Request, inode: Inode, reply: ReadlinkReply) {
        reply.respond { try withLock { try node(inode).target } }
    }

    func mkdir(_ request: Request, parent: Inode, name: String, mode: UInt32, reply: EntryReply) {
        reply.respond { try withLock { try makeEntry(kind: .directory, permissions: mode, in: parent, name: name) } }
    }

    func symlink(_ request: Request, parent: Inode, name: String, target: String, reply: EntryReply) {
        reply.respond {
            try withLock {
                let entry = try makeEntry(kind: .symbolicLink, permissions: 0o777, in: parent, name: name)
                nodes[entry.attributes.inode]!.target = target
                nodes[entry.attributes.inode]!.attributes.size = UInt64(target.utf8.count)
                return CachedAttributes(nodes[entry.attributes.inode]!.attributes, timeout: cacheTimeout).entry(cacheTimeout)
            }
        }
    }

    func create(_ request: Request, parent: Inode, name: String, mode: UInt32, flags: OpenFlags, reply: CreateReply) {
        reply.respond {
            try withLock {
                CreatedFile(entry: try makeEntry(kind: .regular, permissions: mode, in: parent, name: name),
                            file: OpenedFile(keepCache: true))
            }
        }
    }

    func unlink(_ request: Request, parent: Inode, name: String, reply: EmptyReply) {
        reply.respond {
            try withLock {
                let inode = try child(parent, name)
                guard try node(inode).attributes.kind != .directory else { throw Errno.isDirectory }
                removeName(parent, name)
            }
        }
    }

    func rmdir(_ request: Request, parent: Inode, name: String, reply: EmptyReply) {
        reply.respond {
            try withLock {
                let inode = try child(parent, name)
                guard try directory(inode).children.isEmpty else { throw Errno.notEmpty }
                removeName(parent, name)
            }
        }
    }

    func rename(_ request: Request, parent: Inode, name: String, newParent: Inode, newName: String,
                flags: RenameFlags, reply: EmptyReply) {
        reply.respond {
            try withLock {
                let moving = try child(parent, name)
                let existing = try directory(newParent).children[newName]
                if flags.contains(.exchange) {
                    guard let existing else { throw Errno.noEntry }
                    nodes[parent]!.children[name] = existing
                    nodes[newParent]!.children[newName] = moving
                    return
                }
                if let existing {
                    guard !flags.contains(.noReplace) else { throw Errno.exists }
                    if nodes[existing]!.attributes.kind == .directory, !nodes[existing]!.children.isEmpty {
                        throw Errno.notEmpty
                    }
                    removeName(newParent, newName)
                }
                nodes[parent]!.children[name] = nil
                nodes[newParent]!.children[newName] = moving
            }
        }
    }

    func open(_ request: Request, inode: Inode, flags: OpenFlags, reply: OpenReply) {
        reply.respond {
            try withLock {
                openAndFlushRequests += 1
                if stateless { throw Errno.notImplemented }
                guard try node(inode).attributes.kind == .regular else { throw Errno.isDirectory }
                if flags.truncates { resize(inode, to: 0) }
                return OpenedFile(keepCache: true)
            }
        }
    }

    func read(_ request: Request, inode: Inode, handle: UInt64, offset: Int64, size: Int, reply: DataReply) {
        reply.respond {
            try withLock {
                let content = try node(inode).content
                let start = min(Int(offset), content.count)
                return Array(content[start..<min(start + size, content.count)])
            }
        }
    }

    func write(_ request: Request, inode: Inode, handle: UInt64, offset: Int64, data: [UInt8], flags: OpenFlags,
               reply: WriteReply) {
        reply.respond {
            try withLock {
                var content = try node(inode).content
                let end = Int(offset) + data.count
                if content.count < end { content += [UInt8](repeating: 0, count: end - content.count) }
                content.replaceSubrange(Int(offset)..<end, with: data)
                setContent(of: inode, content)
                return data.count
            }
        }
    }

    func flush(_ request: Request, inode: Inode, handle: UInt64, reply: EmptyReply) {
        reply.respond {
            try withLock {
                openAndFlushRequests += 1
                if stateless { throw Errno.notImplemented }
            }
        }
    }

    func fsync(_ request: Request, inode: Inode, handle: UInt64, dataOnly: Bool, reply: EmptyReply) { reply.succeed() }

    func readdir(_ request: Request, inode: Inode, handle: UInt64, offset: Int64, capacity: Int, reply: DirectoryReply) {
        reply.respond {
            var batch = DirectoryListing(capacity: capacity)
            for (index, (name, child)) in try children(of: inode).enumerated().dropFirst(Int(offset)) {
                let kind = withLock { nodes[child]!.attributes.kind }
                guard batch.add(name: name, inode: child, kind: kind, nextOffset: Int64(index + 1)) else { break }
            }
            return batch
        }
    }

    func readdirplus(_ request: Request, inode: Inode, handle: UInt64, offset: Int64, capacity: Int,
                     reply: DirectoryPlusReply) {
        reply.respond {
            var batch = DirectoryPlusListing(capacity: capacity)
            for (index, (name, child)) in try children(of: inode).enumerated().dropFirst(Int(offset)) {
                let entry = withLock { CachedAttributes(nodes[child]!.attributes, timeout: cacheTimeout).entry(cacheTimeout) }
                guard batch.add(name: name, entry: entry, nextOffset: Int64(index + 1)) else { break }
                if name != ".", name != ".." { withLock { lookupCounts[child, default: 0] += 1 } }
            }
            return batch
        }
    }

    func statfs(_ request: Request, inode: Inode, reply: StatisticsReply) {
        reply.succeed(FilesystemStatistics(blockSize: 4096, fragmentSize: 4096, totalBlocks: 1000, freeBlocks: 600,
                                           availableBlocks: 500, totalFiles: 100, freeFiles: 90, availableFiles: 90))
    }

    func setxattr(_ request: Request, inode: Inode, name: String, value: [UInt8], mode: ExtendedAttributeMode,
                  reply: EmptyReply) {
        reply.respond {
            try withLock {
                let exists = try node(inode).extendedAttributes[name] != nil
                if mode == .createOnly && exists { throw Errno.exists }
                if mode == .replaceOnly && !exists { throw Errno.noAttribute }
                nodes[inode]!.extendedAttributes[name] = value
            }
        }
    }

    func getxattr(_ request: Request, inode: Inode, name: String, reply: ExtendedAttributeReply) {
        reply.respond {
            try withLock {
                guard let value = try node(inode).extendedAttributes[name] else { throw Errno.noAttribute }
                return value
            }
        }
    }

    func listxattr(_ request: Request, inode: Inode, reply: ExtendedAttributeListReply) {
        reply.respond { try withLock { try node(inode).extendedAttributes.keys.sorted() } }
    }

    func removexattr(_ request: Request, inode: Inode, name: String, reply: EmptyReply) {
        reply.respond {
            try withLock {
                guard try node(inode).extendedAttributes[name] != nil else { throw Errno.noAttribute }
                nodes[inode]!.extendedAttributes[name] = nil
            }
        }
    }

    /// `.`, `..` and the children in name order: the order offsets refer to.
    private func children(of inode: Inode) throws -> [(String, Inode)] {
        try withLock {
            [(".", inode), ("..", inode)] + (try directory(inode).children.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        }
    }

    // MARK: Internals (callers hold the lock)

    private func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    private func node(_ inode: Inode) throws -> Node {
        guard let node = nodes[inode] else { throw Errno.noEntry }
        return node
    }

    private func directory(_ inode: Inode) throws -> Node {
        let node = try node(inode)
        guard node.attributes.kind == .directory else { throw Errno.notDirectory }
        return node
    }

    private func child(_ parent: Inode, _ name: String) throws -> Inode {
        guard let inode = try directory(parent).children[name] else { throw Errno.noEntry }
        return inode
    }

    private func remember(_ inode: Inode) -> Entry {
        lookupCounts[inode, default: 0] += 1
        return CachedAttributes(nodes[inode]!.attributes, timeout: cacheTimeout).entry(cacheTimeout)
    }

    private func makeEntry(kind: FileKind, permissions: UInt32, in parent: Inode, name: String) throws -> Entry {
        guard try directory(parent).children[name] == nil else { throw Errno.exists }
        return remember(makeNode(kind: kind, permissions: permissions, in: parent, name: name))
    }

    private func makeNode(kind: FileKind, permissions: UInt32, in parent: Inode, name: String) -> Inode {
        lastInode += 1
        let inode = Inode(lastInode)
        let now = FileTime.now
        nodes[inode] = Node(attributes: FileAttributes(inode: inode, kind: kind, permissions: permissions,
                                                       linkCount: kind == .directory ? 2 : 1,
                                                       accessTime: now, modificationTime: now, changeTime: now))
        nodes[parent]!.children[name] = inode
        return inode
    }

    private func removeName(_ parent: Inode, _ name: String) {
        nodes[parent]!.children[name] = nil
    }

    private func setContent(of inode: Inode, _ content: [UInt8]) {
        nodes[inode]!.content = content
        nodes[inode]!.attributes.size = UInt64(content.count)
        nodes[inode]!.attributes.modificationTime = .now
    }

    private func resize(_ inode: Inode, to size: Int) {
        var content = nodes[inode]!.content
        if content.count > size { content.removeLast(content.count - size) }
        else { content += [UInt8](repeating: 0, count: size - content.count) }
        setContent(of: inode, content)
    }

    /// Splits `a/b/c` into the inode of `a/b` (which must exist) and `c`.
    private func resolveParent(_ path: String) -> (Inode, String) {
        var components = path.split(separator: "/").map(String.init)
        let name = components.removeLast()
        let parent = components.reduce(Inode.root) { nodes[$0]!.children[$1]! }
        return (parent, name)
    }
}

private extension CachedAttributes {
    func entry(_ timeout: Duration) -> Entry {
        Entry(attributes: attributes, attributeTimeout: timeout, entryTimeout: timeout)
    }
}
