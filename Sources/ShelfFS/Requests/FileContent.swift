import Foundation
import FuseKit
import Logging
import ShelfModel
import ShelfMarkdown
import ShelfStore
import ShelfSystem

/// Reading and writing files' bytes: items from their buffers, fetched downloads, recent saves or
/// the store, and their writes into the ``SavePipeline``; plain files through their descriptors.
struct FileContent: Sendable {
    let parts: MountParts
    let attributes: NodeAttributes
    let saves: SavePipeline

    /// Items up to this size are read range by range from the store; larger ones whole, once
    /// per version (``SavePipeline/recentReads``): reaching an offset deep in a row walks the
    /// pages before it, so ranges of a large file would cost its size squared.
    static let rangeReadLimit = 1 << 20

    /// Up to `size` bytes at `offset` of item `id`'s current version, and that version. (A file
    /// the kernel holds never changes under its readers: a change from elsewhere gives the item
    /// another inode, and the one they hold keeps its bytes — see ``ChangeFollower``.)
    private func storedBytes(of id: ItemID, offset: Int, size: Int) throws -> (version: Int64, bytes: [UInt8]) {
        let version = parts.index.version(of: id)
        if let version, let content = saves.recentSaves.content(of: id, version: version)
            ?? saves.recentReads.content(of: id, version: version) {
            return (version, Self.slice(content, offset: offset, size: size))
        }
        let indexed = parts.index.summary(id: id)?.size
        if (indexed ?? 0) <= Self.rangeReadLimit {
            guard let file = try parts.store.fileRange(id: id, offset: offset, count: size) else { throw Errno.noEntry }
            if version == nil || version == file.version {
                try checkDownloaded(id, size: file.size, indexed: indexed)
                return (file.version, Array(file.bytes))
            }
        }
        let whole = try wholeStoredFile(of: id, version: version, indexed: indexed)
        if whole.content.count > Self.rangeReadLimit { saves.recentReads.keep(id, version: whole.version, content: whole.content) }
        return (whole.version, Self.slice(whole.content, offset: offset, size: size))
    }

    /// The bytes of `version` of item `id` (its current one when nil or no longer kept).
    private func wholeStoredFile(of id: ItemID, version: Int64?, indexed: Int?) throws -> (version: Int64, content: Data) {
        guard let file = try parts.store.file(id: id) else { throw Errno.noEntry }
        if let version, version != file.version, let content = try parts.store.file(id: id, version: version) {
            return (version, content)
        }
        try checkDownloaded(id, size: file.content.count, indexed: indexed)
        return (file.version, file.content)
    }

    /// An item evicted elsewhere (`shelf evict`) and not in the index yet: its bytes are the cloud's.
    private func checkDownloaded(_ id: ItemID, size: Int, indexed: Int?) throws {
        if size != indexed, try parts.store.downloadState(of: id) != nil { throw PlaceholderDownloads.NotHere(id: id) }
    }

    /// Up to `size` bytes of `inode` at `offset`, for `reader` (nil: not known; asked only when
    /// an item's stored bytes are served).
    func read(_ inode: UInt64, offset: Int64, size: Int, for reader: @autoclosure () -> ProcessID? = nil) throws -> [UInt8] {
        guard let key = parts.inodes.key(of: inode) else { throw Errno.noEntry }
        parts.kernel.staleAttributes.markStale(inode)
        switch key {
        case .item(let id):
            parts.downloads.noteRead(id)
            if let held = try parts.buffers.buffer(of: inode)?.read(offset: Int(offset), size: size) {
                // A file kept at what it showed is that version to whoever reads it.
                if let version = held.version { saves.served.served(id, version: version, to: reader()) }
                return held.bytes
            }
            if parts.downloads.isLinked, let content = parts.downloads.fetchedContent(of: id) {
                if let version = parts.index.version(of: id) { saves.served.served(id, version: version, to: reader()) }
                return Self.slice(content, offset: Int(offset), size: size)
            }
            let (version, bytes) = try storedBytes(of: id, offset: Int(offset), size: size)
            saves.served.served(id, version: version, to: reader())
            return bytes
        case .newItemFile:
            if let held = try parts.buffers.buffer(of: inode)?.read(offset: Int(offset), size: size) { return held.bytes }
            // Its first save made it an item meanwhile (and then let go of its buffer).
            if case .item? = parts.inodes.key(of: inode) { return try read(inode, offset: offset, size: size, for: reader()) }
            return []
        case .plain(let path):
            let descriptor = try parts.descriptors.descriptor(of: inode, path: path, in: parts.plain, writable: false)
            return try descriptor.read(count: size, at: offset)
        case .status(let name):
            return Self.slice(try parts.statusFolder.snapshot(of: name).bytes, offset: Int(offset), size: size)
        }
    }

    private static func slice<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, offset: Int, size: Int) -> [UInt8]
        where Bytes.Index == Int {
        guard offset < bytes.count else { return [] }
        let start = bytes.startIndex + offset
        return Array(bytes[start..<min(bytes.endIndex, start + size)])
    }

    /// Writes `data` at `offset` (at the end when `appending`); returns the count written.
    /// Item files' writes go to the ``SavePipeline``, to be saved later; `writer`: who wrote
    /// (nil: not known), whose last read the save is merged against.
    func write(_ inode: UInt64, offset: Int64, data: [UInt8], appending: Bool,
               by writer: @autoclosure () -> ProcessID? = nil) throws -> Int {
        guard let key = parts.inodes.key(of: inode) else { throw Errno.noEntry }
        parts.kernel.staleAttributes.markStale(inode)
        switch key {
        case .item, .newItemFile:
            // Writes land among the bytes the file has: a placeholder gets them first.
            if let id = attributes.placeholder(inode) { try downloadNow(id) }
            try saves.apply(.write(offset: Int(offset), data: data, appending: appending), to: inode, key: key, by: writer())
            return data.count
        case .plain(let path):
            let descriptor = try parts.descriptors.descriptor(of: inode, path: path, in: parts.plain, writable: true)
            return try descriptor.write(data, at: appending ? nil : offset)
        case .status:
            throw Errno.accessDenied
        }
    }

    /// Downloads placeholder `id` before a write changes it, and brings the index up to date
    /// so the write starts from the downloaded bytes. A failure is `EIO`, never "no such file".
    func downloadNow(_ id: ItemID) throws {
        do {
            try parts.downloads.waitUntilDownloaded(id)
        } catch {
            parts.logger.warning("cannot download \(id) before writing to it: \(error)")
            throw Errno.ioError
        }
        try parts.view.reload(id)
    }

    /// `fsync`: saves an item's unsaved writes and waits until the store has them on disk;
    /// plain files are synced to their disk.
    func makeDurable(_ inode: UInt64) throws {
        switch parts.inodes.key(of: inode) {
        case .item, .newItemFile:
            try saves.save(inode)
            try parts.store.synchronize()
        case .plain(let path):
            let descriptor = try parts.descriptors.descriptor(of: inode, path: path, in: parts.plain, writable: false)
            try descriptor.synchronize()
        case .status: return
        case nil: throw Errno.noEntry
        }
    }

    /// `fsync` of a folder, which makes the renames into it durable on a disk filesystem:
    /// commits the saves waiting in it (an atomic save's rename does not wait for the store),
    /// then waits until the store and the folder's plain files are on disk.
    func makeFolderDurable(_ inode: UInt64) throws {
        let folder = try parts.names.folderPath(inode)
        for unsaved in parts.names.inodes(parts.buffers.unsavedInodes(), in: folder) { try saves.save(unsaved) }
        try parts.store.synchronize()
        try parts.plain.makeFolderDurable(folder)
    }
}
