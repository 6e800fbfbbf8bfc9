import Foundation
import FuseKit
import ShelfModel
import ShelfStore

/// What the kernel is told of each inode: its attributes (from the plain file, the item's
/// held bytes or the index, a status snapshot) and its entries — a lookup's, or a
/// `readdirplus` batch's — with how long it may keep them.
struct NodeAttributes: Sendable {
    let parts: MountParts

    /// The item `inode` stands for while its bytes are still in the cloud (and nothing
    /// written to it waits): reading it downloads it first.
    func placeholder(_ inode: UInt64) -> ItemID? {
        guard parts.downloads.isLinked, case .item(let id)? = parts.inodes.key(of: inode), parts.index.summary(id: id)?.isPlaceholder == true,
              parts.buffers.buffer(of: inode) == nil, parts.downloads.fetchedContent(of: id) == nil else { return nil }
        return id
    }

    // MARK: Attributes

    func attributes(of inode: UInt64) throws -> FileAttributes {
        guard let key = parts.inodes.key(of: inode) else { throw Errno.noEntry }
        return try attributes(of: key, inode: inode)
    }

    func attributes(of key: NodeKey, inode: UInt64) throws -> FileAttributes {
        switch key {
        case .plain(let path):
            if let unlinked = parts.descriptors.unlinked(inode) {
                return FileAttributes(try unlinked.status(), inode: Inode(inode))
            }
            return FileAttributes(try parts.plain.status(path), inode: Inode(inode))
        case .item(let id):
            let shape = try itemShape(id, inode: inode)
            var attributes = Self.fileAttributes(inode, size: shape.size, modified: FileTime(shape.modified),
                                                 permissions: shape.permissions)
            attributes.isOnlineOnly = placeholder(inode) != nil
            showKept(id, in: &attributes)
            // Deleted, or replaced by a rename, while a program still has it open.
            if parts.index.summary(id: id) == nil || parts.inodes.existingInode(for: key) != inode { attributes.linkCount = 0 }
            return attributes
        case .newItemFile(let pending):
            if let shape = parts.buffers.buffer(of: inode)?.shape {
                let creation = parts.newItemFiles.creation(of: pending)
                var attributes = Self.fileAttributes(inode, size: shape.size, modified: FileTime(shape.modified),
                                                     permissions: shape.permissions ?? creation?.permissions
                                                         ?? ItemRecord.defaultPermissions)
                if let owner = creation?.owner {
                    attributes.uid = owner.uid
                    attributes.gid = owner.gid
                }
                return attributes
            }
            // Its first save made it an item meanwhile (and then let go of its buffer).
            if let current = parts.inodes.key(of: inode), case .item = current { return try attributes(of: current, inode: inode) }
            return Self.fileAttributes(inode, size: 0, modified: .now, permissions: ItemRecord.defaultPermissions)
        case .status(let name):
            if name.isEmpty {
                let time = parts.statusFolder.folderTime
                return FileAttributes(inode: Inode(inode), kind: .directory, permissions: 0o555, linkCount: 2,
                                      accessTime: time, modificationTime: time, changeTime: time)
            }
            let snapshot = try parts.statusFolder.refreshedSnapshot(of: name)
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
        if let shape = parts.buffers.buffer(of: inode)?.shape {
            return (shape.size, shape.modified,
                    shape.permissions ?? parts.index.summary(id: id)?.permissions ?? ItemRecord.defaultPermissions)
        }
        if let summary = parts.index.summary(id: id) {
            return (summary.size, summary.modified, summary.permissions)
        }
        guard let file = try parts.store.file(id: id) else { throw Errno.noEntry }
        return (file.content.count, Date(), ItemRecord.defaultPermissions)
    }

    /// What the mount keeps of item `id`'s file besides the record: its access time and owner.
    func showKept(_ id: ItemID, in attributes: inout FileAttributes) {
        if let accessed = parts.accessTimes.time(of: id) { attributes.accessTime = accessed }
        if let owner = parts.owners.owner(of: id) {
            attributes.uid = owner.uid
            attributes.gid = owner.gid
        }
    }

    static func fileAttributes(_ inode: UInt64, size: Int, modified: FileTime, permissions: UInt32) -> FileAttributes {
        FileAttributes(inode: Inode(inode), kind: .regular, permissions: permissions, size: UInt64(size),
                       accessTime: modified, modificationTime: modified, changeTime: modified)
    }

    /// Attributes as the kernel caches them (`getattr`, `setattr`): they are fresh there now.
    func cachedAttributes(of inode: UInt64) throws -> CachedAttributes {
        let attributes = try attributes(of: inode)
        parts.kernel.staleAttributes.refreshed([inode])
        return CachedAttributes(attributes, timeout: timeout(for: parts.inodes.key(of: inode)))
    }

    func timeout(for key: NodeKey?) -> Duration {
        if case .status = key { return ShelfFileSystem.statusTimeout }
        return ShelfFileSystem.cacheTimeout
    }

    /// The kernel entry for `key`, which gives the kernel one more lookup of its inode.
    func entry(for key: NodeKey) throws -> Entry {
        var node = parts.inodes.nodes(for: [key])[0]
        var attributes = try attributes(of: key, inode: node.inode)
        node = sharedNode(node, key: key, attributes: &attributes)
        sent([node])
        let timeout = timeout(for: key)
        return Entry(attributes: attributes, attributeTimeout: timeout, entryTimeout: timeout)
    }

    /// The node every name of a hard-linked plain file shares (see ``InodeTable``), for an
    /// entry of `key` about to be sent with `attributes` (which then carry its number).
    func sharedNode(_ node: InodeTable.Node, key: NodeKey, attributes: inout FileAttributes) -> InodeTable.Node {
        guard case .plain(let path) = key, attributes.linkCount > 1, attributes.kind != .directory,
              let info = try? parts.plain.status(path) else { return node }
        let shared = parts.inodes.node(for: path, sharing: UInt64(info.st_ino))
        attributes.inode = Inode(shared.inode)
        return shared
    }

    // MARK: Listings

    /// The kernel received entries of `nodes` (a lookup, or the names of a `readdirplus` batch
    /// that fit): one more lookup of each, and their attributes are fresh there.
    func sent(_ nodes: [InodeTable.Node]) {
        parts.inodes.countLookups(nodes)
        parts.kernel.staleAttributes.refreshed(nodes.lazy.map(\.inode))
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
        guard case .plain = parts.inodes.key(of: folder) else { return .none }
        if listing.namesChanged { return .refill }
        let worthRemaking = max(1, listing.names.count / Self.namesListedPerRequest)
        return parts.kernel.staleAttributes.contains(atLeast: worthRemaking, of: listing.names.lazy.map(\.inode)) ? .refill : .serve
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
    func entries(for listed: ArraySlice<FolderListings.Listed>) -> [ListingEntry] {
        let held = parts.buffers.heldInodes()
        let states = parts.inodes.entryStates(since: .now - ShelfFileSystem.cacheTimeout / 2, of: listed.map(\.node))
        let nameOnly = zip(itemsFreshInKernel(listed, sent: states.map(\.sent), except: held), states).map { $0 || !$1.isCurrent }
        var shapes = parts.index.shapes(zip(listed, nameOnly).compactMap { $1 ? nil : $0.slot }).makeIterator()
        return zip(listed, nameOnly).map { listed, nameOnly in
            if nameOnly { return .nameOnly }
            let shape = listed.slot.flatMap { _ in shapes.next() ?? nil }
            if let shape, !held.contains(listed.inode) {
                var attributes = Self.fileAttributes(listed.inode, size: shape.size, modified: FileTime(shape.modified),
                                                     permissions: shape.permissions)
                attributes.isOnlineOnly = shape.isPlaceholder
                if let id = listed.slot?.id { showKept(id, in: &attributes) }
                return .full(Entry(attributes: attributes, attributeTimeout: ShelfFileSystem.cacheTimeout,
                                   entryTimeout: ShelfFileSystem.cacheTimeout), listed.node)
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
    private func itemsFreshInKernel(_ listed: ArraySlice<FolderListings.Listed>, sent recent: [Bool], except held: Set<UInt64>) -> [Bool] {
        let candidates = listed.map { $0.slot != nil && !held.contains($0.inode) }
        let stale = parts.kernel.staleAttributes.areStale(listed.map(\.inode))
        return candidates.indices.map { candidates[$0] && recent[$0] && !stale[$0] }
    }
}
