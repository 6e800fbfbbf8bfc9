import Foundation
import ShelfStore
import ShelfSystem
import Synchronization

/// The embedded cloud: a folder, local or carried between machines by a file-sync tool or a
/// network share.
///
/// ```
/// shelf-cloud.json                      identity, written by the device that created the cloud
/// devices/<device>.json                 one per device, written by that device
/// devices/<device>.retired.json         written once by the device that retired it
/// log/<device>/<000000000001>.json      that device's change batches, numbered
/// acks/<device>/<000000000001>.json     how far that device has read, numbered
/// snapshots/<batches>-<device>-<n>.json the whole library as of a cursor (`batches` behind it)
/// content/<device>/<ab>/<abcdef…>       file bytes, named by their SHA-256, stored by that device
/// keys/<kind>-<n>.json                  an encrypted cloud's key envelopes
/// ```
/// In an encrypted cloud (format 3) the names are the same, device and batch numbers and
/// counts being all they show; every file but the identity, the retirements and the key
/// envelopes holds a sealed object (``CloudSealing``), and content is named by its keyed
/// address.
/// (A cloud of format 1 keeps all bytes in one `content/<ab>/<abcdef…>`, read by every format.)
/// Every file is written once, by one device, under a hidden temporary name first, and never
/// changed: a file-sync tool never sees two devices write one file, so no lock files exist.
/// Files go away only when no device needs them: a device removes its own older
/// acknowledgements and snapshots, and logs every device has read once a snapshot covers them.
/// Names that are not Shelf's (`desktop.ini`, `.DS_Store`, `.stfolder`, a sync tool's
/// `… (conflicted copy).json` or `.sync-conflict-…`) are ignored: a conflict copy of a file
/// written once can only repeat it. Anyone who can write to the folder can put files there, so
/// no file is read whole past its bound (``CloudInputRules``), and only device ids Shelf makes
/// name folders.
public struct FolderCloud: CloudBackend {
    public let folder: URL
    public var location: String { folder.path }
    public private(set) var sealing = CloudSealing.plain
    /// The content folders last listed: a read tries them first, so reading bytes that are
    /// here lists nothing (a placeholder's first read, a download of thousands).
    private let knownContentRoots = ContentRootsSeen()

    public init(folder: URL) {
        self.folder = folder.standardizedFileURL
    }

    public func sealed(by sealing: CloudSealing) -> any CloudBackend {
        var cloud = self
        cloud.sealing = sealing
        return cloud
    }

    /// The log folder and each device's folder in it.
    public var changeFolders: [URL] {
        [logURL] + ((try? listing(of: logURL, missing: nil)) ?? []).filter(CloudInputRules.isDeviceID).map {
            logURL.appendingPathComponent($0, isDirectory: true)
        }
    }

    /// Where the bytes under `hashes` may land: `content/` and each device's folder in it
    /// (where a folder may still appear), and the prefix folder of each hash in each of them.
    public func contentFolders(for hashes: Set<ContentHash>) -> [URL] {
        guard !hashes.isEmpty, let roots = try? contentRoots() else { return [] }
        let prefixFolders = roots.flatMap { root in hashes.map { contentFileURL(sealing.address(of: $0), in: root).deletingLastPathComponent() } }
        return roots + Set(prefixFolders).sorted { $0.path < $1.path }
    }

    private var identityURL: URL { folder.appendingPathComponent("shelf-cloud.json") }
    private var devicesURL: URL { folder.appendingPathComponent("devices", isDirectory: true) }
    private var logURL: URL { folder.appendingPathComponent("log", isDirectory: true) }
    private var contentURL: URL { folder.appendingPathComponent("content", isDirectory: true) }
    private var acksURL: URL { folder.appendingPathComponent("acks", isDirectory: true) }
    private var snapshotsURL: URL { folder.appendingPathComponent("snapshots", isDirectory: true) }
    private var keysURL: URL { folder.appendingPathComponent("keys", isDirectory: true) }

    // MARK: Identity

    public func identity() throws -> CloudIdentity {
        let entries = try listing(of: folder, missing: CloudError.missing(location: location))
        guard entries.contains(identityURL.lastPathComponent) else {
            if entries.allSatisfy(FolderCloudNames.isIgnorable) { throw CloudError.empty(location: location) }
            // A file-sync tool brings a cloud's files in any order, its identity maybe last.
            let isShelfsOwn = entries.allSatisfy { FolderCloudNames.isIgnorable($0) || FolderCloudNames.folderNames.contains($0) }
            throw isShelfsOwn ? CloudError.arriving(location: location) : CloudError.notACloud(location: location)
        }
        let identity = try decode(CloudIdentity.self, at: identityURL, place: nil)
        guard identity.format <= CloudIdentity.currentFormat else {
            throw CloudError.newerFormat(location: location, format: identity.format)
        }
        return identity
    }

    /// Identities a file-sync tool set aside beside the one it kept (`shelf-cloud.sync-conflict-…
    /// .json`, `shelf-cloud (conflicted copy).json`): two devices each made a cloud here before
    /// either's reached the other. Unreadable ones are passed over.
    public func identitiesSetAside() throws -> [CloudIdentity] {
        try listing(of: folder, missing: nil).filter {
            $0 != identityURL.lastPathComponent && $0.hasPrefix("shelf-cloud") && $0.hasSuffix(".json")
        }.compactMap { try? decode(CloudIdentity.self, at: folder.appendingPathComponent($0), place: nil) }
    }

    public func create(_ identity: CloudIdentity, keys: [KeyEnvelope]) throws {
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw CloudError.unreadable(location: location, reason: "the folder cannot be created (\(error.localizedDescription))")
        }
        let entries = try listing(of: folder, missing: CloudError.missing(location: location))
        guard entries.allSatisfy(FolderCloudNames.isIgnorable) else { throw CloudError.notACloud(location: location) }
        for envelope in keys { try writeOnce(try CloudCoding.encoder.encode(envelope), at: keyURL(envelope)) }
        guard try writeOnce(try CloudCoding.encoder.encode(identity), at: identityURL) else {
            throw CloudError.notACloud(location: location)
        }
    }

    // MARK: Keys

    public func keyEnvelopes() throws -> [KeyEnvelope] {
        try listing(of: keysURL, missing: nil).filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.compactMap { name in
            // One stored under another's name (renamed, or a sync tool's copy) is not it.
            let envelope = try? decode(KeyEnvelope.self, at: keysURL.appendingPathComponent(name), place: nil)
            return envelope.flatMap { name == $0.name + ".json" ? $0 : nil }
        }
    }

    public func putPassphraseEnvelope(_ envelope: KeyEnvelope) throws {
        try writeOnce(try CloudCoding.encoder.encode(envelope), at: keyURL(envelope))
        for older in try keyEnvelopes() where older.kind == .passphrase && older.number < envelope.number {
            try FileEntries.removeFile(keyURL(older).path)
        }
    }

    private func keyURL(_ envelope: KeyEnvelope) -> URL {
        keysURL.appendingPathComponent(envelope.name + ".json")
    }

    // MARK: Devices

    public func register(_ device: DeviceRecord) throws {
        try writeOnce(try sealing.encode(device, at: .device(device.id)), at: devicesURL.appendingPathComponent(device.id + ".json"))
    }

    public func retire(_ device: DeviceID) throws {
        try writeOnce(try CloudCoding.encoder.encode(["device": device]),
                      at: devicesURL.appendingPathComponent(device + ".retired.json"))
    }

    public func retiredDevices() throws -> Set<DeviceID> {
        Set(try listing(of: devicesURL, missing: nil).compactMap { name in
            guard name.hasSuffix(".retired.json") else { return nil }
            let device = String(name.dropLast(".retired.json".count))
            return CloudInputRules.isDeviceID(device) ? device : nil
        })
    }

    public func devices() throws -> CloudDevices {
        var devices = CloudDevices()
        for name in try listing(of: devicesURL, missing: nil) {
            let id = String(name.dropLast(5))
            guard name.hasSuffix(".json"), CloudInputRules.isDeviceID(id) else { continue }
            let url = devicesURL.appendingPathComponent(name)
            try devices.add(id) {
                let device = try decode(DeviceRecord.self, at: url, place: .device(id))
                guard device.id == id else { throw CloudError.damaged(path: url.path, reason: "it holds device \(device.id)") }
                return device
            }
        }
        return devices
    }

    // MARK: Change logs

    public func append(_ batch: ChangeBatch) throws {
        try writeOnce(try sealing.encode(batch, at: .batch(batch.device, batch.number)), at: batchURL(of: batch.device, number: batch.number))
    }

    public func batch(of device: DeviceID, number: Int64) throws -> ChangeBatch? {
        // An id from a change names the folder: only an id Shelf makes stays inside the log.
        guard CloudInputRules.isDeviceID(device) else { return nil }
        let url = batchURL(of: device, number: number)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let batch: ChangeBatch
        do {
            batch = try decode(ChangeBatch.self, at: url, place: .batch(device, number), limit: CloudInputRules.maxBatchBytes)
        } catch let error as CloudError {
            switch error {
            case .tooLarge:
                // Never a file on its way (that only grows to its size): reported, not waited for.
                return .unreadable(device: device, number: number, reason: "\(error)")
            case .damaged where sealing.isSealed:
                // Tampered with, or still arriving: reported each round until a good copy is here.
                return .unreadable(device: device, number: number, reason: "\(error)")
            default:
                throw error
            }
        }
        guard batch.device == device, batch.number == number else {
            throw CloudError.damaged(path: url.path, reason: "it holds batch \(batch.number) of \(batch.device)")
        }
        return batch
    }

    public func batches(after cursor: CloudCursor, limit: Int) throws -> (batches: [ChangeBatch], cursor: CloudCursor) {
        var cursor = cursor
        var batches: [ChangeBatch] = []
        var changeCount = 0
        for device in try listing(of: logURL, missing: nil).filter(CloudInputRules.isDeviceID).sorted() {
            let names = try listing(of: logURL.appendingPathComponent(device), missing: nil)
            let numbers = names.compactMap(FolderCloudNames.batchNumber).filter { $0 > cursor[device] }.sorted()
            let conflictCopies = sealing.isSealed ? Dictionary(grouping: names) { FolderCloudNames.conflictCopyOfBatch($0) } : [:]
            // Numbers are consecutive; a gap is a batch still on its way, and what follows it waits.
            for number in numbers {
                guard number == cursor[device] + 1, changeCount < limit,
                      var batch = try? batch(of: device, number: number) else { break }
                if let copies = conflictCopies[number], let refusal = conflictCopyRefusal(of: batch, copies: copies) {
                    batch = .unreadable(device: device, number: number, reason: refusal)
                }
                batches.append(batch)
                changeCount += batch.changes.count
                cursor[device] = number
            }
        }
        return (batches, cursor)
    }

    /// Why a file-sync tool's conflict copy beside `batch` holds it back: in an encrypted cloud,
    /// where nothing shows what a copy holds, one that is not the same batch means two writers
    /// of one number (a library copied to a second machine) or tampering. Nil when every copy
    /// repeats the batch. (A plain cloud passes its copies over: it never asks.)
    private func conflictCopyRefusal(of batch: ChangeBatch, copies: [String]) -> String? {
        guard batch.unreadable == nil else { return nil }
        let folder = logURL.appendingPathComponent(batch.device, isDirectory: true)
        for name in copies {
            let url = folder.appendingPathComponent(name)
            let copy = try? decode(ChangeBatch.self, at: url, place: .batch(batch.device, batch.number), limit: CloudInputRules.maxBatchBytes)
            guard copy != batch else { continue }
            return "\(CloudError.damaged(path: url.path, reason: "a file-sync tool's conflict copy of batch \(batch.number) that holds other changes: two devices wrote that number (a library copied to a second machine?) or the cloud was tampered with; nothing of either was applied. Remove the copy that is wrong"))"
        }
        return nil
    }

    private func batchURL(of device: DeviceID, number: Int64) -> URL {
        logURL.appendingPathComponent(device, isDirectory: true)
            .appendingPathComponent(String(format: "%012lld.json", number))
    }

    public func removeBatches(of device: DeviceID, through number: Int64) throws -> Int {
        let folder = logURL.appendingPathComponent(device, isDirectory: true)
        var removed = 0
        for name in try listing(of: folder, missing: nil) {
            guard let batch = FolderCloudNames.batchNumber(name), batch <= number else { continue }
            if (try? FileEntries.removeFile(folder.appendingPathComponent(name).path)) != nil { removed += 1 }
        }
        return removed
    }

    // MARK: Acknowledgements and snapshots

    public func acknowledge(_ ack: DeviceAck) throws {
        let folder = acksURL.appendingPathComponent(ack.device, isDirectory: true)
        try writeOnce(try sealing.encode(ack, at: .acknowledgement(ack.device, ack.number)),
                      at: folder.appendingPathComponent("\(ack.number).json"))
        for name in try listing(of: folder, missing: nil) {
            if let number = FolderCloudNames.number(name), number < ack.number { try? FileEntries.removeFile(folder.appendingPathComponent(name).path) }
        }
    }

    public func acknowledgements() throws -> [DeviceID: DeviceAck] {
        var acks: [DeviceID: DeviceAck] = [:]
        for device in try listing(of: acksURL, missing: nil).filter(CloudInputRules.isDeviceID) {
            let folder = acksURL.appendingPathComponent(device, isDirectory: true)
            guard let newest = try listing(of: folder, missing: nil).compactMap(FolderCloudNames.number).max(),
                  let ack = try? decode(DeviceAck.self, at: folder.appendingPathComponent("\(newest).json"),
                                        place: .acknowledgement(device, newest)),
                  ack.device == device, ack.number == newest else { continue }
            acks[device] = ack
        }
        return acks
    }

    public func putSnapshot(_ snapshot: CloudSnapshot) throws {
        let name = String(format: "%012lld-", snapshot.batchesBehind) + snapshot.device + String(format: "-%012lld.json", snapshot.number)
        try writeOnce(try sealing.encode(snapshot, at: .snapshot(snapshot.device, snapshot.number)),
                      at: snapshotsURL.appendingPathComponent(name))
        // This device's older snapshots are covered by the new one.
        for old in try listing(of: snapshotsURL, missing: nil) where old != name && old.contains("-" + snapshot.device + "-") {
            try? FileEntries.removeFile(snapshotsURL.appendingPathComponent(old).path)
        }
    }

    public func latestSnapshot() throws -> CloudSnapshot? {
        for name in try listing(of: snapshotsURL, missing: nil).filter({ $0.hasSuffix(".json") && !$0.hasPrefix(".") }).sorted().reversed() {
            guard let (behind, device, number) = FolderCloudNames.snapshotName(name),
                  let snapshot = try? decode(CloudSnapshot.self, at: snapshotsURL.appendingPathComponent(name),
                                             place: .snapshot(device, number), limit: CloudInputRules.maxSnapshotBytes),
                  // A name that claims more than the snapshot covers would pass over newer ones.
                  snapshot.device == device, snapshot.number == number, snapshot.batchesBehind == behind else { continue }
            return snapshot
        }
        return nil
    }

    // MARK: Content

    /// Stores bytes once in the cloud. In a cloud of format 2 or later each device writes into
    /// its own folder (`content/<device>/…`), so bytes two devices store alike — a merge every
    /// device derives, one book imported on two machines — never have two writers, which a
    /// file-sync tool would see as a conflict. Clouds of format 1 share `content/<ab>/…`.
    public func putContent(_ bytes: Data, hash: ContentHash, by device: DeviceID) throws {
        // Stored already: left as it is, neither rewritten nor touched (a file-sync tool would
        // carry a second writer's change). A removal racing this reuse is repaired by the
        // pushing device's maintenance (``SyncEngine/maintainCloud(snapshotEvery:unusedFor:)``).
        guard try !hasContent(hash) else { return }
        let sharesOneFolder = try decode(CloudIdentity.self, at: identityURL, place: nil).format < Self.contentByDeviceFormat
        let root = sharesOneFolder ? contentURL : contentURL.appendingPathComponent(device, isDirectory: true)
        let address = sealing.address(of: hash)
        try writeOnce(try sealing.seal(bytes, at: .content(address)), at: contentFileURL(address, in: root))
    }

    public func removeContent(except keeping: Set<ContentHash>, unusedSince: Date) throws -> Int {
        let keeping = Set(keeping.map(sealing.address))
        var removed = 0
        for root in try contentRoots() {
            for prefix in try listing(of: root, missing: nil) where FolderCloudNames.isContentPrefix(prefix) {
                let folder = root.appendingPathComponent(prefix, isDirectory: true)
                for name in try listing(of: folder, missing: nil) where ContentHash(rawValue: name).isWellFormed {
                    guard !keeping.contains(ContentHash(rawValue: name)) else { continue }
                    let path = folder.appendingPathComponent(name).path
                    guard let status = FileStatus(of: path, followingSymlink: true),
                          Double(status.modified.seconds) < unusedSince.timeIntervalSince1970 else { continue }
                    if (try? FileEntries.removeFile(path)) != nil { removed += 1 }
                }
            }
        }
        return removed
    }

    public func content(_ hash: ContentHash) throws -> Data? {
        let address = sealing.address(of: hash)
        return try firstInContentRoots(address) { url in
            guard let stored = FileManager.default.contents(atPath: url.path) else { return nil }
            let bytes: Data
            do {
                bytes = try sealing.open(stored, at: .content(address))
            } catch {
                throw CloudError.damaged(path: url.path, reason: "\(error)")
            }
            guard ContentHash(of: bytes) == hash else {
                throw CloudError.damaged(path: url.path, reason: "its bytes do not have the hash they are named by")
            }
            return bytes
        }
    }

    public func hasContent(_ hash: ContentHash) throws -> Bool {
        try firstInContentRoots(sealing.address(of: hash)) { FileManager.default.fileExists(atPath: $0.path) ? true : nil } ?? false
    }

    /// The first file's answer among the places the bytes under `address` may be: the content
    /// folders known from the last listing, then those a new listing adds (a device's folder
    /// that appeared since).
    private func firstInContentRoots<T>(_ address: ContentHash, _ answer: (URL) throws -> T?) throws -> T? {
        let known = knownContentRoots.roots.withLock { $0 }
        for root in known {
            if let found = try answer(contentFileURL(address, in: root)) { return found }
        }
        let listed = try contentRoots()
        knownContentRoots.roots.withLock { $0 = listed }
        for root in listed where !known.contains(root) {
            if let found = try answer(contentFileURL(address, in: root)) { return found }
        }
        return nil
    }

    /// The first format whose devices each write their own content folder.
    static let contentByDeviceFormat = 2

    /// Each device's folder in `content/`, then `content/` itself (format 1's shared folder).
    private func contentRoots() throws -> [URL] {
        (try listing(of: contentURL, missing: nil)).filter { CloudInputRules.isDeviceID($0) && !FolderCloudNames.isContentPrefix($0) }
            .sorted().map { contentURL.appendingPathComponent($0, isDirectory: true) } + [contentURL]
    }

    private func contentFileURL(_ hash: ContentHash, in root: URL) -> URL {
        root.appendingPathComponent(String(hash.rawValue.prefix(2)), isDirectory: true).appendingPathComponent(hash.rawValue)
    }

    // MARK: Files

    /// Writes a file that is never replaced, creating its folder if needed; false if it exists.
    @discardableResult
    private func writeOnce(_ bytes: Data, at url: URL) throws -> Bool {
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            return try AtomicFile.writeOnce(bytes, to: url.path)
        } catch {
            throw CloudError.unreadable(location: location, reason: "\(error)")
        }
    }

    /// The record in the file at `url`, opened as stored at `place` (nil: a record never
    /// sealed); a file over `limit` bytes is refused unread (`tooLarge`): anyone who can write
    /// to the cloud folder could put a huge one there.
    private func decode<T: Decodable>(_ type: T.Type, at url: URL, place: CloudPlace?,
                                      limit: Int = CloudInputRules.maxRecordBytes) throws -> T {
        let bytes: Data
        do {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            if let status = FileStatus(descriptor: handle.fileDescriptor), status.size > limit {
                throw CloudError.tooLarge(path: url.path, bytes: status.size, limit: limit)
            }
            // Read no more than the limit even if the file grew after the check.
            bytes = try handle.read(upToCount: limit + 1) ?? Data()
            if bytes.count > limit { throw CloudError.tooLarge(path: url.path, bytes: bytes.count, limit: limit) }
        } catch let error as CloudError {
            throw error
        } catch {
            throw CloudError.unreadable(location: location, reason: "cannot read \(url.lastPathComponent) (\(error.localizedDescription))")
        }
        do {
            guard let place else { return try CloudCoding.decoder.decode(type, from: bytes) }
            return try sealing.decode(type, from: bytes, at: place)
        } catch let error as CloudSealingError where sealing.isSealed {
            throw CloudError.damaged(path: url.path, reason: "\(error)")
        } catch {
            throw CloudError.damaged(path: url.path, reason: "it is not what Shelf wrote there")
        }
    }

    /// The names in `folder`; `missing` nil: a folder not created yet is empty.
    private func listing(of folder: URL, missing: CloudError?) throws -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: folder.path)
        } catch CocoaError.fileReadNoSuchFile {
            if let missing { throw missing }
            return []
        } catch {
            throw CloudError.unreadable(location: location, reason: error.localizedDescription)
        }
    }
}

/// The content folders a ``FolderCloud`` last listed, shared by its copies.
private final class ContentRootsSeen: Sendable {
    let roots = Mutex<[URL]>([])
}
