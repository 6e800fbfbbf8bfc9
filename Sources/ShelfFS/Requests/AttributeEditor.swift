import Foundation
import FuseKit
import Glibc
import ShelfModel
import ShelfStore
import ShelfSystem

/// `setattr`: mode, owner, size and times of plain files (through their descriptor once
/// unlinked) and of item files, whose size changes are writes and whose mode, owner and
/// modification time are stored with the item.
struct AttributeEditor: Sendable {
    let parts: MountParts
    let attributes: NodeAttributes
    let content: FileContent
    let saves: SavePipeline

    /// `writer`: who asked (nil: not known); a size change is a write.
    func setAttributes(_ inode: UInt64, changes: AttributeChanges,
                       by writer: @autoclosure () -> ProcessID? = nil) throws -> CachedAttributes {
        guard let key = parts.inodes.key(of: inode) else { throw Errno.noEntry }
        switch key {
        case .plain(let path):
            if let unlinked = parts.descriptors.unlinked(inode) {
                try unlinked.apply(changes)
                break
            }
            if let permissions = changes.permissions { try parts.plain.changeMode(path, to: mode_t(permissions)) }
            if changes.uid != nil || changes.gid != nil {
                try parts.plain.changeOwner(path, uid: changes.uid ?? UInt32.max, gid: changes.gid ?? UInt32.max)
            }
            if let size = changes.size {
                // Through the descriptor: a file unlinked while open is still truncated.
                let descriptor = try parts.descriptors.descriptor(of: inode, path: path, in: parts.plain, writable: true)
                try descriptor.resize(to: size)
            }
            if changes.accessTime != nil || changes.modificationTime != nil {
                try parts.plain.setTimes(path, access: changes.accessTime.map { timespec($0.resolved) },
                                   modification: changes.modificationTime.map { timespec($0.resolved) })
            }
        case .item, .newItemFile:
            if changes.uid != nil || changes.gid != nil { try changeItemOwner(inode, uid: changes.uid, gid: changes.gid) }
            // A size change truncates or extends what the file shows, saved like a write.
            if let size = changes.size {
                if let id = attributes.placeholder(inode) { try content.downloadNow(id) }
                try saves.apply(.resize(Int(size)), to: inode, key: key, by: writer())
            }
            // Mode bits and the modification time are the item's (rsync -a, cp -p, tar keep
            // them); the access time is kept apart while the mount runs (``ItemAccessTimes``).
            if changes.permissions != nil || changes.modificationTime != nil {
                try setItemFileTimes(inode, modified: changes.modificationTime?.resolved.date,
                                     permissions: changes.permissions.map { UInt32($0 & 0o7777) })
            }
            if let accessed = changes.accessTime, case .item(let id)? = parts.inodes.key(of: inode) {
                parts.accessTimes.set(accessed.resolved, of: id)
            }
        case .status:
            throw Errno.accessDenied
        }
        return try attributes.cachedAttributes(of: inode)
    }

    /// `chown` of an item: stored (``FileOwner``) and shown. Only a mount run by root may give
    /// files away, as for plain files; otherwise a change of owner is `EPERM`, never ignored.
    private func changeItemOwner(_ inode: UInt64, uid: UInt32?, gid: UInt32?) throws {
        guard case .item(let id) = try saves.keyWithWritesSaved(inode) else { throw Errno.noEntry }
        let mountOwner = FileOwner(uid: FileAttributes.processUID, gid: FileAttributes.processGID)
        let current = parts.owners.owner(of: id) ?? mountOwner
        let changed = FileOwner(uid: uid ?? current.uid, gid: gid ?? current.gid)
        guard changed != current else { return }
        guard FileAttributes.processUID == 0 else { throw Errno.notPermitted }
        let stored = changed == mountOwner ? nil : changed
        try parts.store.write { try $0.setOwner(stored, of: id) }
        parts.owners.set(stored, of: id)
    }

    /// Sets an item's modification time and mode bits, after its pending writes (a time set
    /// after writing is not overtaken by the save of those writes).
    private func setItemFileTimes(_ inode: UInt64, modified: Date?, permissions: UInt32?) throws {
        guard case .item(let id) = try saves.keyWithWritesSaved(inode) else { throw Errno.noEntry }
        let record = try parts.store.write { try $0.setFileTimes(id: id, modified: modified, permissions: permissions) }
        parts.view.recorded(record)
        parts.buffers.buffer(of: inode)?.setModified(record.modified)
    }
}
