import Foundation
import Logging
import ShelfMarkdown
import ShelfModel
import ShelfStore

/// Applies one change from another device inside the store transaction that records it: the
/// one place that decides between taking the change, merging it, and keeping a conflict copy.
///
/// - A change made on top of what this device has is taken as it is (a fast-forward).
/// - Changes made without seeing each other (all already in the cloud) are resolved by a
///   deterministic function of the set of them, so every device reaches the same result: an
///   edit beats a delete; contents merge three-way (``ItemMerge``) against their nearest
///   common ancestor; what cannot merge leaves the newer content in place and the older one as
///   a conflict copy whose id and name derive from the losing change. The result is a derived
///   change named by all of them that no device pushes, because every device derives it.
/// - Local edits not pushed yet are rebased onto the incoming state the same way, with the
///   conflict copy (if any) a new local item that is pushed like any other.
struct ChangeApplier {
    let writer: StoreWriter
    /// This device.
    let device: DeviceID
    /// Bytes of items not on this device yet are fetched at once, not on first read.
    let downloadsEagerly: Bool
    /// The file bytes stored under a hash in the cloud; nil while they have not arrived.
    let cloudContent: (ContentHash) throws -> Data?
    /// Whether the cloud still holds the batch that pushed a change: while it does, the cloud
    /// keeps that change's bytes, so bytes missing for it are still on their way.
    let isPushedBatchInCloud: (ChangeID) throws -> Bool
    /// Stores bytes a merge produced in the cloud, so later merges can use them as their base.
    let storeCloudContent: (Data, ContentHash) throws -> Void
    /// A device's name, for conflict copies.
    let deviceName: (DeviceID) -> String
    /// Each resolution of concurrent changes is traced at debug level: which heads, from which
    /// base, to which bytes — what two devices that end apart must have done differently.
    let logger: Logger
    /// The item histories as this device knows them, read once per transaction.
    let history: ChangeHistory
    /// The bytes this applier read from the cloud or stored there: merges read the same
    /// bytes again and again. It lives as long as the applier, one store transaction.
    private let fetched = CloudBytesRead()

    init(writer: StoreWriter, device: DeviceID, downloadsEagerly: Bool, cloudContent: @escaping (ContentHash) throws -> Data?,
         isPushedBatchInCloud: @escaping (ChangeID) throws -> Bool, storeCloudContent: @escaping (Data, ContentHash) throws -> Void,
         deviceName: @escaping (DeviceID) -> String, logger: Logger) {
        self.writer = writer
        self.device = device
        self.downloadsEagerly = downloadsEagerly
        self.cloudContent = cloudContent
        self.isPushedBatchInCloud = isPushedBatchInCloud
        self.storeCloudContent = storeCloudContent
        self.deviceName = deviceName
        self.logger = logger
        history = ChangeHistory(writer: writer)
    }

    /// A change whose bytes are not in the cloud yet (a file-sync tool still delivering them).
    struct ContentNotArrived: Error, CustomStringConvertible {
        let hash: ContentHash
        var description: String { "waiting for content \(hash.rawValue.prefix(12))… to arrive in the cloud" }
    }

    func apply(_ change: CloudChange) throws {
        guard try writer.ledger.knownChange(change.id) == nil else { return }
        try history.remember(change)
        try retireCopy(continuedBy: change)
        let id = change.itemID
        let local = try ItemState.stored(id, in: writer)
        let synced = try writer.ledger.syncedCloudChange(of: id)
        var incoming = change
        // The usual case, a change made on top of this device's, is told at its first link;
        // only a change that is not walks this device's history for it.
        if let synced, try !history.isAncestor(synced.id, of: change) {
            if try history.isAncestor(change.id, of: synced) { return }
            incoming = try resolveConcurrent(synced, change)
        }
        var isOnTopOfIncoming = true
        if let local, local.state.needsPush(since: synced) {
            isOnTopOfIncoming = try rebase(local: local.state, localContent: try local.content ?? bytes(of: local.state),
                                           onto: incoming, base: synced)
        } else if try isMerge(incoming) {
            try writer.with(ChangeOrigin(.merge)) { try take(incoming.state, title: incoming.title, of: id, claim: incoming) }
        } else {
            try take(incoming.state, title: incoming.title, of: id, claim: incoming)
        }
        if isOnTopOfIncoming { try writer.ledger.setSyncedChange(incoming.id, of: id) }
    }

    /// Whether `change` is a derived merge whose bytes or metadata none of its heads had: a
    /// version of its own in the item's history.
    private func isMerge(_ change: CloudChange) throws -> Bool {
        guard change.mergedFrom != nil else { return false }
        return try !CloudChange.edits(in: change.id).compactMap(history.known).contains { $0.state.matches(change.state) }
    }

    // MARK: Concurrent cloud changes

    /// Resolves changes made without seeing each other into one state, as a function of the
    /// set of edits alone — never of the order they arrived in — so every device reaches the same
    /// bytes and the same change id whichever it met first.
    private func resolveConcurrent(_ first: CloudChange, _ second: CloudChange) throws -> CloudChange {
        let heads = try concurrentHeads(first, second)
        guard heads.count > 1 else { return heads.first ?? second }
        return try merge(heads)
    }

    /// The derived change that resolves `heads` (oldest first), named by them all (`A~B~C`) even
    /// where the result equals one of them, so a change later made on top of it names every
    /// edit it contains. An edit beats a delete (but not the same copy made again: see
    /// ``isRemade(_:madeFromNothing:deletedBy:)``); contents merge pairwise: the older heads first, as a device
    /// that met only them merged them, then the newest onto that. No device pushes it: every
    /// device derives it. `heads`: two or more.
    private func merge(_ heads: [CloudChange]) throws -> CloudChange {
        let id = heads.map(\.id).joined(separator: "~")
        if let derived = try history.known(id) { return derived }
        let newest = heads[heads.count - 1]
        let deletes = heads.filter { $0.operation == .delete }
        let puts = try heads.filter { put in
            guard put.operation == .put else { return false }
            guard !deletes.isEmpty else { return true }
            let madeFromNothing = try isMadeFromNothing(put)
            return !deletes.contains { Self.isRemade(put.state, madeFromNothing: madeFromNothing, deletedBy: $0.state) }
        }
        let lead = puts.last ?? deletes.last ?? newest
        var state = lead.state
        if puts.count > 1 {
            let older = puts.count == 2 ? puts[0] : try merge(Array(puts.dropLast()))
            state = try mergedState(older, lead)
        }
        let derived = CloudChange(id: id, item: newest.itemID, base: newest.id,
                                  mergedFrom: heads.dropLast().map(\.id).joined(separator: "~"), device: newest.device,
                                  time: newest.time, state: state, title: lead.title)
        try history.remember(derived)
        return derived
    }

    /// `older` and `newer` merged three-way against their nearest common ancestor (per field
    /// of metadata, by lines and passages for the bytes, which are stored in the cloud); what
    /// cannot merge keeps `newer`'s bytes, and `older`'s aside in a conflict copy.
    private func mergedState(_ older: CloudChange, _ newer: CloudChange) throws -> ItemState {
        var base = try commonAncestor(older, newer)
        let baseBytes = try bytes(ofBase: base)
        // A base whose bytes are gone merges no field either: devices that know different parts
        // of an old history (one started from a snapshot) still resolve alike.
        if baseBytes == nil { base = nil }
        var state = Self.mergedMetadata(base: base?.state, older: older.state, newer: newer.state)
        var content = try bytes(of: newer.state)
        if older.hash != newer.hash {
            let olderContent = try bytes(of: older.state)
            switch Self.mergedContent(baseBytes: baseBytes, older: olderContent, newer: content, kind: newer.kind) {
            case .merged(let bytes):
                content = bytes
            case .conflict:
                logger.debug("\(device) cannot merge \(older.id) and \(newer.id) over \(base?.id ?? "no base"): conflict copy")
                try keepConflictCopy(olderContent, of: older, beside: newer.path)
            }
        }
        state.hash = ContentHash(of: content)
        state.size = content.count
        try storeContent(content, state.hash)
        logger.debug("\(device) merged \(newer.itemID) (\(newer.path)): \(older.id) and \(newer.id) over \(base?.id ?? "no base") to \(state.hash.rawValue.prefix(12))")
        return state
    }

    /// The edits behind `first` and `second` that no other of them contains, oldest first.
    private func concurrentHeads(_ first: CloudChange, _ second: CloudChange) throws -> [CloudChange] {
        var candidates: [CloudChange] = []
        for side in [first, second] {
            let edits = try CloudChange.edits(in: side.id).map(history.known)
            // A merge whose edits are unknown here (it came in a snapshot) stands for them.
            candidates += edits.allSatisfy({ $0 != nil }) ? edits.compactMap({ $0 }) : [side]
        }
        return try history.heads(among: candidates)
    }

    /// The nearest change both `first` and `second` were made on top of, as far as this device
    /// knows, so a three-way merge sees each side's own edits only. A derived merge counts as a
    /// change: edits made on top of one merge against its bytes. Where merges crossed (several
    /// nearest common ancestors, none containing the others) the base is their merge, as in
    /// git's recursive merge: the edits all of them hold are in it.
    private func commonAncestor(_ first: CloudChange, _ second: CloudChange) throws -> CloudChange? {
        let nearest = try history.nearestCommonAncestors(first.id, second.id)
        if nearest.count == 1 { return try node(nearest[0]) }
        let crossed = try history.heads(among: nearest.flatMap(CloudChange.edits(in:)).compactMap(history.known))
        return crossed.count > 1 ? try merge(crossed) : crossed.first
    }

    /// The change `id`, derived here if it is a merge this device has not made yet.
    private func node(_ id: ChangeID) throws -> CloudChange? {
        if let change = try history.known(id) { return change }
        guard id.contains("~") else { return nil }
        let heads = try CloudChange.edits(in: id).map(history.known)
        guard heads.allSatisfy({ $0 != nil }) else { return nil }
        return try merge(heads.compactMap { $0 })
    }

    // MARK: Local edits

    /// Puts local edits not pushed yet on top of `remote`; the result stays a local change,
    /// pushed next with `remote` as its base. A local edit that beats `remote` outright (they
    /// cannot merge and it is newer) was not made from it: it stays on its own base, and is
    /// pushed as the concurrent edit it is, so every device resolves the two alike and an edit
    /// made on top of it later continues its line. Returns whether the result is on top of
    /// `remote`.
    private func rebase(local: ItemState, localContent: Data, onto remote: CloudChange, base: CloudChange?) throws -> Bool {
        let id = remote.itemID
        var isOnTopOfRemote = true
        switch (local.operation, remote.operation) {
        case (.delete, .put) where Self.isRemade(remote.state, madeFromNothing: try isMadeFromNothing(remote), deletedBy: local):
            return true  // the local retirement stays, and is pushed on top of the copy made again
        case (.put, .delete) where Self.isRemade(local, madeFromNothing: base == nil, deletedBy: remote.state):
            try take(remote.state, title: remote.title, of: id, claim: remote)
        case (.delete, .put): try take(remote.state, title: remote.title, of: id, claim: remote)  // an edit beats a delete
        case (.put, .delete), (.delete, .delete): return true  // the local edit stays, and is pushed
        case (.put, .put):
            var target = Self.mergedMetadata(base: base?.state, older: remote.state, newer: local)
            var targetBytes = localContent
            if local.hash != remote.hash && local.hash == base?.hash {
                targetBytes = try bytes(of: remote.state)
            } else if local.hash != remote.hash && remote.hash != base?.hash {
                let remoteBytes = try bytes(of: remote.state)
                let localIsNewer = local.modified > remote.time
                let (older, newer) = localIsNewer ? (remoteBytes, localContent) : (localContent, remoteBytes)
                switch Self.mergedContent(baseBytes: try bytes(ofBase: base), older: older, newer: newer, kind: remote.kind) {
                case .merged(let bytes):
                    targetBytes = bytes
                case .conflict:
                    logger.debug("\(device) cannot rebase \(id) onto \(remote.id) over \(base?.id ?? "no base"): conflict copy")
                    guard let kind = ItemKind(rawValue: remote.kind) else { return true }
                    targetBytes = newer
                    isOnTopOfRemote = !(localIsNewer && base != nil)
                    // The local edit continues this device's line from `base`, winning or not:
                    // a copy of that line's earlier edit (kept aside here, maybe in this very
                    // pull) is retired, as every device retires it when this edit arrives.
                    if let base { try retireCopy(of: base, continuedOn: device) }
                    if localIsNewer {
                        // Every device whose own edit beats `remote` keeps it aside alike.
                        try keepConflictCopy(older, of: remote, beside: local.path)
                    } else {
                        // The losing local edit's copy takes over from the retired one.
                        _ = try writer.saveConflictCopy(older, kind: kind, beside: local.path, time: local.modified,
                                                        device: deviceName(device))
                    }
                }
            }
            target.hash = ContentHash(of: targetBytes)
            target.size = targetBytes.count
            // Bytes that are the remote's carry its time: the local edit's time went with its
            // bytes, and keeping it would push the remote's words again as an edit of this device.
            if target.hash == remote.hash { target.modified = remote.modified }
            logger.debug("\(device) rebased \(id) (\(remote.path)) onto \(remote.id) from \(base?.id ?? "no base") to \(target.hash.rawValue.prefix(12))")
            let isMerge = target.hash != local.hash && target.hash != remote.hash
            try writer.with(isMerge ? ChangeOrigin(.merge) : ChangeOrigin(.sync, device: deviceName(remote.device))) {
                try take(target, title: remote.title, of: id, claim: remote, bytes: targetBytes)
            }
        }
        return isOnTopOfRemote
    }

    // MARK: Taking a state

    /// Makes the item `id` what `state` says: trashed, or live at its path (numbered if
    /// another item holds it) with its bytes, times, mode and attributes. Bytes the item does
    /// not have here yet stay in the cloud (a placeholder) unless this device downloads
    /// everything; an item that is downloaded here stays downloaded, so its change waits
    /// (``ContentNotArrived``) until a file-sync tool has delivered the new bytes.
    /// `claim`: the change that brings this state, which decides who keeps a path that two
    /// items want (``placeAtFreePath(_:claimedBy:)``).
    private func take(_ state: ItemState, title: String, of id: ItemID, claim: CloudChange, bytes given: Data? = nil) throws {
        let current = try ItemState.stored(id, in: writer)
        if state.operation == .delete {
            if current?.state.operation == .put { try writer.trash(id: id) }
            return
        }
        guard let kind = ItemKind(rawValue: state.kind) else { return }
        let isLive = current?.state.operation == .put
        var path = state.path
        if !isLive || current?.state.path != path {
            path = try placeAtFreePath(path, claimedBy: claim)
        }
        if isLive, current?.state.path != path { _ = try writer.move(id: id, to: path) }
        // The record just written here, so its times are set without reading it back.
        var written: ItemRecord?
        if !isLive || current?.state.hash != state.hash {
            let isDownloadedHere = isLive && current?.content != nil
            let bytes = try given ?? ((downloadsEagerly || isDownloadedHere) ? content(state.hash) : nil)
            // An item read here keeps serving its bytes until the new ones have arrived: the
            // change waits for them rather than turn the item into a placeholder readers fail on.
            if isDownloadedHere, bytes == nil { throw ContentNotArrived(hash: state.hash) }
            if let bytes, isDownloadedHere || !isLive {
                written = try writer.saveFile(bytes, of: id, kind: kind, at: path, basedOn: nil, modified: state.modified)
            } else {
                written = try writer.placeholders.savePlaceholder(Placeholder(id: id, kind: kind, path: path, title: title,
                                                                              size: state.size, hash: state.hash.rawValue,
                                                                              modified: state.modified,
                                                                              permissions: state.permissions))
                if let bytes { written = try writer.placeholders.fillPlaceholder(id, with: bytes) }
            }
        }
        try writer.replaceExtendedAttributes(id: id, with: state.attributes)
        if let written {
            _ = try writer.setFileTimes(of: written, modified: state.modified, permissions: state.permissions)
        } else {
            _ = try writer.setFileTimes(id: id, modified: state.modified, permissions: state.permissions)
        }
    }

    /// Where an item arriving at `path` goes when another item holds it. An item that never
    /// reached the cloud (a library joining a cloud, a file made while offline) steps aside; of
    /// two that did, the newer change keeps the path. The other takes a conflict name from its
    /// own change's time and device — the same on every device, so each reaches the same names.
    private func placeAtFreePath(_ path: String, claimedBy claim: CloudChange) throws -> String {
        guard let holder = try writer.record(atPath: path), holder.item.id != claim.itemID else { return path }
        let held = try writer.ledger.syncedCloudChange(of: holder.item.id)
        let (aside, time, device) = if let held, !claim.isNewer(than: held) {
            (claim.itemID, claim.time, claim.device)
        } else {
            (holder.item.id, held?.time ?? holder.modified, held?.device ?? self.device)
        }
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        let name = String(path[(path.lastIndex(of: "/").map(path.index(after:)) ?? path.startIndex)...])
        let conflictPath = try writer.freePath(near: folder + "/" + FileNaming.conflictCopyName(of: name, time: time,
                                                                                               device: deviceName(device)))
        guard aside == holder.item.id else { return conflictPath }
        _ = try writer.move(id: holder.item.id, to: conflictPath)
        return path
    }

    // MARK: Building blocks

    /// Per field, the side that changed it from the base wins; where both did, `newer`.
    private static func mergedMetadata(base: ItemState?, older: ItemState, newer: ItemState) -> ItemState {
        func pick<T: Equatable>(_ field: KeyPath<ItemState, T>) -> T {
            if let base, newer[keyPath: field] == base[keyPath: field] { return older[keyPath: field] }
            return newer[keyPath: field]
        }
        var state = newer
        state.path = pick(\.path)
        state.modified = pick(\.modified)
        state.permissions = pick(\.permissions)
        state.attributes = pick(\.attributes)
        return state
    }

    /// The bytes of the base a merge is made against; nil without a base, or when the cloud no
    /// longer keeps them (a device offline for long). Bytes on their way are waited for:
    /// merging without them would fork what merges.
    private func bytes(ofBase base: CloudChange?) throws -> Data? {
        guard let base else { return nil }
        if let bytes = try content(base.hash) { return bytes }
        if try isPushedBatchInCloud(base.id) { throw ContentNotArrived(hash: base.hash) }
        return nil
    }

    /// Without a base, nothing merges.
    private static func mergedContent(baseBytes: Data?, older: Data, newer: Data, kind: String) -> ItemMerge.Result {
        guard let baseBytes, let kind = ItemKind(rawValue: kind) else { return .conflict }
        return ItemMerge.merge(base: baseBytes, older: older, newer: newer, kind: kind)
    }

    private func bytes(of state: ItemState) throws -> Data {
        guard let bytes = try content(state.hash) else { throw ContentNotArrived(hash: state.hash) }
        return bytes
    }

    /// The bytes under `hash` in the cloud, fetched once per transaction: a merge reads its
    /// base and both sides, and the merges of one pull share most of them. Large bytes are
    /// not kept, so a batch of large items stays within bounded memory.
    private func content(_ hash: ContentHash) throws -> Data? {
        if let bytes = fetched.bytes[hash] { return bytes }
        let bytes = try cloudContent(hash)
        if let bytes, bytes.count <= Self.keptContentLimit { fetched.bytes[hash] = bytes }
        return bytes
    }

    private func storeContent(_ bytes: Data, _ hash: ContentHash) throws {
        guard fetched.bytes[hash] == nil else { return }  // read from the cloud, or stored already
        try storeCloudContent(bytes, hash)
        if bytes.count <= Self.keptContentLimit { fetched.bytes[hash] = bytes }
    }

    /// The largest bytes ``content(_:)`` keeps for the transaction: notes and books, not attachments.
    private static let keptContentLimit = 1 << 20

}

/// The cloud's bytes by hash that one store transaction read or stored (``ChangeApplier``).
private final class CloudBytesRead {
    var bytes: [ContentHash: Data] = [:]
}
