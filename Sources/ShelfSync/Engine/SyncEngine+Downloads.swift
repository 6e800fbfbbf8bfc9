import Foundation
import ShelfModel
import ShelfStore

extension SyncEngine {
    // MARK: Downloads

    /// Brings placeholder `id`'s bytes from the cloud (checked against their hash) and puts
    /// them in place; nothing to do for an item that is here. A failure is recorded with the
    /// item (`user.shelf.error`, `shelf status`) and thrown.
    public func download(_ id: ItemID) throws {
        guard let fetched = try fetch(id) else { return }
        try fill([fetched])
    }

    /// Placeholder `id`'s bytes from the cloud, checked against their hash, not yet in place
    /// (``fill(_:)`` puts them there); nil for an item that is here. A failure is recorded with
    /// the item and thrown.
    public func fetch(_ id: ItemID) throws -> FetchedContent? {
        guard let state = try store.downloadState(of: id) else { return nil }
        do {
            guard let bytes = try cloud.content(ContentHash(rawValue: state.hash)) else {
                // A cloud that is not there at all says so rather than "not arrived".
                _ = try cloud.identity()
                throw DownloadError.notArrived(location: cloud.location)
            }
            return FetchedContent(id: id, hash: state.hash, bytes: bytes)
        } catch {
            try? store.write { try $0.placeholders.setDownloadError("\(error)", of: id) }
            throw error
        }
    }

    /// Puts fetched bytes in place, all in one transaction (a download's cost is mostly its
    /// commit); returns the records they made. Bytes whose item changed meanwhile (a newer
    /// state arrived, it was deleted) are not its any more and are dropped.
    @discardableResult
    public func fill(_ fetched: [FetchedContent]) throws -> [ItemRecord] {
        let records = try store.write { writer in
            try fetched.compactMap { content -> ItemRecord? in
                guard try writer.placeholders.downloadState(of: content.id)?.hash == content.hash else { return nil }
                do {
                    return try writer.placeholders.fillPlaceholder(content.id, with: content.bytes)
                } catch let refused as StoreError {
                    // Refused before it changed anything: the others still go in.
                    logger.warning("downloaded bytes of \(content.id) were not put in place: \(refused)")
                    return nil
                }
            }
        }
        counts.downloads.add(records.count, ordering: .relaxed)
        return records
    }

    /// Turns downloaded item `id` back into a placeholder, freeing its bytes here: only when
    /// the cloud holds exactly these bytes, and never for a pinned, changed, locked or open item
    /// (`EvictError`).
    public func evict(_ id: ItemID) throws {
        _ = try requireLink()
        let candidate = try store.write { writer -> (ItemState, String)? in
            guard let local = try ItemState.stored(id, in: writer), local.state.operation == .put else {
                throw StoreError.itemNotFound(id)
            }
            guard local.content != nil else { return nil }  // not here already
            if try writer.placeholders.isPinned(id) { throw EvictError.pinned }
            if try local.state.needsPush(since: writer.ledger.syncedCloudChange(of: id)) { throw EvictError.notUploaded }
            return (local.state, local.title)
        }
        guard let (state, title) = candidate else { return }
        guard try cloud.hasContent(state.hash) else { throw EvictError.notUploaded }
        if itemsInUse().contains(id) { throw EvictError.busy }
        try store.write { writer in
            // Changed meanwhile: nothing is evicted.
            guard let now = try ItemState.stored(id, in: writer), now.state.matches(state), now.content != nil,
                  let kind = ItemKind(rawValue: state.kind) else { throw EvictError.busy }
            try writer.placeholders.savePlaceholder(Placeholder(id: id, kind: kind, path: state.path, title: title, size: state.size,
                                                   hash: state.hash.rawValue, modified: state.modified,
                                                   permissions: state.permissions), evicting: true)
        }
    }

    /// Keeps `pinned` items downloaded whatever the cache budget (and downloads them now).
    public func pin(_ id: ItemID, _ pinned: Bool = true) throws {
        try store.write { try $0.placeholders.setPinned(pinned, id) }
        if pinned { try download(id) }
    }

    /// Evicts the least recently read downloaded items until what is held here fits the cache
    /// budget; returns how many. `lastRead`: when the mount last served each item (items it
    /// has not served count by their modification time). Items that may not be evicted
    /// (changed, locked, pinned) are passed over.
    @discardableResult
    public func enforceCacheLimit(lastRead: [ItemID: Date]) throws -> Int {
        guard let limit = try store.cloudLink()?.cacheLimit else { return 0 }
        var held = try store.downloadedBytes()
        guard held > limit else { return 0 }
        let candidates = try store.evictableItems().sorted { (lastRead[$0.id] ?? $0.modified) < (lastRead[$1.id] ?? $1.modified) }
        var evicted = 0
        for candidate in candidates where held > limit {
            guard (try? evict(candidate.id)) != nil else { continue }
            held -= candidate.size
            evicted += 1
        }
        return evicted
    }

    /// Downloads every placeholder, a batch per transaction; returns how many. A download that
    /// fails stops there, with the ones fetched before it put in place.
    @discardableResult
    public func downloadAll() throws -> Int {
        let ids = try store.placeholderIDs()
        for start in stride(from: 0, to: ids.count, by: Self.fillBatch) {
            var fetched: [FetchedContent] = []
            do {
                for id in ids[start..<min(ids.count, start + Self.fillBatch)] {
                    if let content = try fetch(id) { fetched.append(content) }
                }
            } catch {
                _ = try? fill(fetched)  // the failure reported is the download's
                throw error
            }
            try fill(fetched)
        }
        return ids.count
    }

    /// How many downloads share a transaction: enough to spread a commit's cost, few enough
    /// that their bytes are a small amount of memory.
    public static let fillBatch = 256
}

/// Why an item's bytes stay here when asked to evict them.
public enum EvictError: Error, Equatable, CustomStringConvertible {
    case pinned
    /// It changed here since the cloud last heard of it, or the cloud lacks its bytes.
    case notUploaded
    /// A program holds it (a lock, unsaved writes) or it changed while being evicted.
    case busy

    public var description: String {
        switch self {
        case .pinned: "it is pinned to this device; `shelf unpin` it first."
        case .notUploaded: "it has changes the cloud has not received yet; sync first (`shelf sync`)."
        case .busy: "a program is using it (a lock, or writes not saved yet); close it and try again."
        }
    }
}

/// Why an item's bytes could not be brought here.
public enum DownloadError: Error, Equatable, CustomStringConvertible {
    /// The cloud does not hold them yet (a file-sync tool still delivering them), or no longer.
    case notArrived(location: String)

    public var description: String {
        switch self {
        case .notArrived(let location):
            "its content has not arrived in the cloud at \(location) yet (a file-sync tool may still be delivering it); it is fetched when it arrives."
        }
    }
}
