import Foundation
import FuseKit
import Glibc
import ShelfMarkdown
import ShelfModel
import ShelfStore
import ShelfSystem

/// Attribute changes (`setattr`), extended attributes, symlinks and `statfs`.
extension ShelfFileSystem {
    // MARK: Attributes changes

    /// `writer`: who asked (nil: not known); a size change is a write.
    func setAttributes(_ inode: UInt64, changes: AttributeChanges,
                       by writer: @autoclosure () -> ProcessID? = nil) throws -> CachedAttributes {
        guard let key = inodes.key(of: inode) else { throw Errno.noEntry }
        switch key {
        case .plain(let path):
            if let unlinked = descriptors.unlinked(inode) {
                try changeUnlinkedFile(unlinked.fd, changes: changes)
                break
            }
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
            if changes.uid != nil || changes.gid != nil { try changeItemOwner(inode, uid: changes.uid, gid: changes.gid) }
            // A size change truncates or extends what the file shows, saved like a write.
            if let size = changes.size {
                if let id = placeholder(inode) { try downloadNow(id) }
                try saves.apply(.resize(Int(size)), to: inode, key: key, by: writer())
            }
            // Mode bits and the modification time are the item's (rsync -a, cp -p, tar keep
            // them); the access time is kept apart while the mount runs (``ItemAccessTimes``).
            if changes.permissions != nil || changes.modificationTime != nil {
                try setItemFileTimes(inode, modified: changes.modificationTime?.resolved.date,
                                     permissions: changes.permissions.map { UInt32($0 & 0o7777) })
            }
            if let accessed = changes.accessTime, case .item(let id)? = inodes.key(of: inode) {
                accessTimes.set(accessed.resolved, of: id)
            }
        case .status:
            throw Errno.accessDenied
        }
        return try cachedAttributes(of: inode)
    }

    /// `setattr` of a plain file unlinked while open: through its descriptor, as its path is
    /// gone (or names another file).
    private func changeUnlinkedFile(_ fd: Int32, changes: AttributeChanges) throws {
        if let permissions = changes.permissions, fchmod(fd, mode_t(permissions)) != 0 { throw Errno.current }
        if changes.uid != nil || changes.gid != nil,
           fchown(fd, changes.uid ?? UInt32.max, changes.gid ?? UInt32.max) != 0 { throw Errno.current }
        if let size = changes.size, ftruncate(fd, off_t(size)) != 0 { throw Errno.current }
        if changes.accessTime != nil || changes.modificationTime != nil {
            let omit = timespec(tv_sec: 0, tv_nsec: LinuxCalls.timeOmit)
            let times = [changes.accessTime.map { timespec($0.resolved) } ?? omit,
                         changes.modificationTime.map { timespec($0.resolved) } ?? omit]
            guard futimens(fd, times) == 0 else { throw Errno.current }
        }
    }

    /// `chown` of an item: stored (``FileOwner``) and shown. Only a mount run by root may give
    /// files away, as for plain files; otherwise a change of owner is `EPERM`, never ignored.
    private func changeItemOwner(_ inode: UInt64, uid: UInt32?, gid: UInt32?) throws {
        guard case .item(let id) = try keyWithWritesSaved(inode) else { throw Errno.noEntry }
        let mountOwner = FileOwner(uid: FileAttributes.processUID, gid: FileAttributes.processGID)
        let current = owners.owner(of: id) ?? mountOwner
        let changed = FileOwner(uid: uid ?? current.uid, gid: gid ?? current.gid)
        guard changed != current else { return }
        guard FileAttributes.processUID == 0 else { throw Errno.notPermitted }
        let stored = changed == mountOwner ? nil : changed
        try store.write { try $0.setOwner(stored, of: id) }
        owners.set(stored, of: id)
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
        if saves.buffers.holdsUnsavedWrites(inode) { try saves.save(inode) }
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

    // MARK: Attributes

    func attributes(of inode: UInt64) throws -> FileAttributes {
        guard let key = inodes.key(of: inode) else { throw Errno.noEntry }
        return try attributes(of: key, inode: inode)
    }

    func attributes(of key: NodeKey, inode: UInt64) throws -> FileAttributes {
        switch key {
        case .plain(let path):
            if let unlinked = descriptors.unlinked(inode) {
                var info = stat()
                guard fstat(unlinked.fd, &info) == 0 else { throw Errno.current }
                return FileAttributes(info, inode: Inode(inode))
            }
            return FileAttributes(try plain.status(path), inode: Inode(inode))
        case .item(let id):
            let shape = try itemShape(id, inode: inode)
            var attributes = Self.fileAttributes(inode, size: shape.size, modified: FileTime(shape.modified),
                                                 permissions: shape.permissions)
            attributes.isOnlineOnly = placeholder(inode) != nil
            showKept(id, in: &attributes)
            // Deleted, or replaced by a rename, while a program still has it open.
            if index.summary(id: id) == nil || inodes.existingInode(for: key) != inode { attributes.linkCount = 0 }
            return attributes
        case .newItemFile(let pending):
            if let shape = saves.buffers.buffer(of: inode)?.shape {
                let creation = newItemFiles.creation(of: pending)
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
            if let current = inodes.key(of: inode), case .item = current { return try attributes(of: current, inode: inode) }
            return Self.fileAttributes(inode, size: 0, modified: .now, permissions: ItemRecord.defaultPermissions)
        case .status(let name):
            if name.isEmpty {
                let time = statusFolder.folderTime
                return FileAttributes(inode: Inode(inode), kind: .directory, permissions: 0o555, linkCount: 2,
                                      accessTime: time, modificationTime: time, changeTime: time)
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
            return (summary.size, summary.modified, summary.permissions)
        }
        guard let file = try store.file(id: id) else { throw Errno.noEntry }
        return (file.content.count, Date(), ItemRecord.defaultPermissions)
    }

    /// What the mount keeps of item `id`'s file besides the record: its access time and owner.
    func showKept(_ id: ItemID, in attributes: inout FileAttributes) {
        if let accessed = accessTimes.time(of: id) { attributes.accessTime = accessed }
        if let owner = owners.owner(of: id) {
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
        kernel.staleAttributes.refreshed([inode])
        return CachedAttributes(attributes, timeout: timeout(for: inodes.key(of: inode)))
    }

    func timeout(for key: NodeKey?) -> Duration {
        if case .status = key { return Self.statusTimeout }
        return Self.cacheTimeout
    }

    /// The kernel entry for `key`, which gives the kernel one more lookup of its inode.
    func entry(for key: NodeKey) throws -> Entry {
        var node = inodes.nodes(for: [key])[0]
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
              let info = try? plain.status(path) else { return node }
        let shared = inodes.node(for: path, sharing: UInt64(info.st_ino))
        attributes.inode = Inode(shared.inode)
        return shared
    }
}
