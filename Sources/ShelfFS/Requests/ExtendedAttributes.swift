import Foundation
import FuseKit
import Logging
import ShelfModel
import ShelfStore
import ShelfSystem

/// Extended attributes: a plain file's are its real file's; an item's are the user's own
/// (stored with the item) and Shelf's `user.shelf.*`, which describe the item and its download
/// and pin it (``ItemAttributes``).
struct ExtendedAttributes: Sendable {
    let parts: MountParts
    let saves: SavePipeline

    func value(of inode: UInt64, name: String) throws -> [UInt8] {
        guard !ItemAttributes.isUnsupported(name) else { throw Errno.notSupported }
        switch try saves.keyWithWritesSaved(inode) {
        case .plain(let path): return try parts.plain.getAttribute(path, name: name)
        case .item(let id):
            guard let value = try itemAttributes(id)[name] else { throw Errno.noAttribute }
            return value
        case .newItemFile, .status: throw Errno.noAttribute
        case nil: throw Errno.noEntry
        }
    }

    /// The names a listing shows: an item's `user.shelf.*` are read by name only (as Ceph's
    /// virtual attributes are), so rsync -X and cp -a neither copy them out nor try to remove them.
    func names(of inode: UInt64) throws -> [String] {
        switch try saves.keyWithWritesSaved(inode) {
        case .plain(let path): return try parts.plain.attributeNames(path).filter { !ItemAttributes.isUnsupported($0) }
        case .item(let id): return try parts.store.extendedAttributes(id: id).keys.sorted()
        case .newItemFile, .status: return []
        case nil: throw Errno.noEntry
        }
    }

    func set(_ inode: UInt64, name: String, value: [UInt8], mode: ExtendedAttributeMode) throws {
        guard !ItemAttributes.isUnsupported(name) else { throw Errno.notSupported }
        switch try saves.keyWithWritesSaved(inode) {
        case .plain(let path):
            let flags: Int32 = switch mode {
            case .any: 0
            case .createOnly: LinuxCalls.xattrCreate
            case .replaceOnly: LinuxCalls.xattrReplace
            }
            try parts.plain.setAttribute(path, name: name, value: value, flags: flags)
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

    func remove(_ inode: UInt64, name: String) throws {
        guard !ItemAttributes.isUnsupported(name) else { throw Errno.notSupported }
        switch try saves.keyWithWritesSaved(inode) {
        case .plain(let path): try parts.plain.removeAttribute(path, name: name)
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
        try parts.store.write { try $0.placeholders.setPinned(pinned, id) }
        if pinned, parts.index.summary(id: id)?.isPlaceholder == true {
            parts.downloads.whenDownloaded(id) { [logger = parts.logger] error in
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
        try parts.store.write { writer in
            let value = try change(try writer.extendedAttributes(id: id)[name])
            try writer.setExtendedAttribute(id: id, name: name, value: value)
        }
    }

    /// Shelf's description of the item and the user's own attributes, by name.
    private func itemAttributes(_ id: ItemID) throws -> [String: [UInt8]] {
        guard let summary = try parts.store.summary(id: id) else { throw Errno.noEntry }
        let diagnostics = summary.hasDraft ? try parts.store.record(id: id)?.draftDiagnostics : nil
        let download: ItemAttributes.Download
        if !summary.isPlaceholder {
            download = .downloaded
        } else if parts.downloads.isDownloading(id) {
            download = .downloading
        } else if let error = try parts.store.downloadState(of: id)?.error {
            download = .error(error)
        } else {
            download = .notDownloaded
        }
        return try parts.store.extendedAttributes(id: id).mapValues { Array($0) }
            .merging(ItemAttributes.described(summary, draftDiagnostics: diagnostics, download: download,
                                              isPinned: try parts.store.isPinned(id))) { _, shelf in shelf }
    }
}
