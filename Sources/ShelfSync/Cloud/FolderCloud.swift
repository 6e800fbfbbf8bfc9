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
/// ```
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
    /// The content folders last listed: a read tries them first, so reading bytes that are
    /// here lists nothing (a placeholder's first read, a download of thousands).
    private let knownContentRoots = ContentRootsSeen()

    public init(folder: URL) {
        self.folder = folder.standardizedFileURL
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
        let prefixFolders = roots.flatMap { root in hashes.map { contentFileURL($0, in: root).deletingLastPathComponent() } }
        return roots + Set(prefixFolders).sorted { $0.path < $1.path }
    }

    private var identityURL: URL { folder.appendingPathComponent("shelf-cloud.json") }
    private var devicesURL: URL { folder.appendingPathComponent("devices", isDirectory: true) }
    private var logURL: URL { folder.appendingPathComponent("log", isDirectory: true) }
    private var contentURL: URL { folder.appendingPathComponent("content", isDirectory: true) }
    private var acksURL: URL { folder.appendingPathComponent("acks", isDirectory: true) }
    private var snapshotsURL: URL { folder.appendingPathComponent("snapshots", isDirectory: true) }

    // MARK: Identity

    public func identity() throws -> CloudIdentity {
        let entries = try listing(of: folder, missing: CloudError.missing(location: location))
        guard entries.contains(identityURL.lastPathComponent) else {
            if entries.allSatisfy(Self.isIgnorable) { throw CloudError.empty(location: location) }
            // A file-sync tool brings a cloud's files in any order, its identity maybe last.
            let isShelfsOwn = entries.allSatisfy { Self.isIgnorable($0) || Self.folderNames.contains($0) }
            throw isShelfsOwn ? CloudError.arriving(location: location) : CloudError.notACloud(location: location)
        }
        let identity = try decode(CloudIdentity.self, at: identityURL)
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
        }.compactMap { try? decode(CloudIdentity.self, at: folder.appendingPathComponent($0)) }
    }

    public func create(_ identity: CloudIdentity) throws {
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw CloudError.unreadable(location: location, reason: "the folder cannot be created (\(error.localizedDescription))")
        }
        let entries = try listing(of: folder, missing: CloudError.missing(location: location))
        guard entries.allSatisfy(Self.isIgnorable) else { throw CloudError.notACloud(location: location) }
        guard try writeOnce(try CloudCoding.encoder.encode(identity), at: identityURL) else {
            throw CloudError.notACloud(location: location)
        }
    }

    // MARK: Devices

    public func register(_ device: DeviceRecord) throws {
        try writeOnce(try CloudCoding.encoder.encode(device), at: devicesURL.appendingPathComponent(device.id + ".json"))
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

    public func devices() throws -> [DeviceRecord] {
        try listing(of: devicesURL, missing: nil).compactMap { name in
            guard name.hasSuffix(".json"), CloudInputRules.isDeviceID(String(name.dropLast(5))) else { return nil }
            return try decode(DeviceRecord.self, at: devicesURL.appendingPathComponent(name))
        }
    }

    // MARK: Change logs

    public func append(_ batch: ChangeBatch) throws {
        try writeOnce(try CloudCoding.encoder.encode(batch), at: batchURL(of: batch.device, number: batch.number))
    }

    public func batch(of device: DeviceID, number: Int64) throws -> ChangeBatch? {
        // An id from a change names the folder: only an id Shelf makes stays inside the log.
        guard CloudInputRules.isDeviceID(device) else { return nil }
        let url = batchURL(of: device, number: number)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let batch: ChangeBatch
        do {
            batch = try decode(ChangeBatch.self, at: url, limit: CloudInputRules.maxBatchBytes)
        } catch let error as CloudError {
            // Never a file on its way (that only grows to its size): reported, not waited for.
            guard case .tooLarge = error else { throw error }
            return .unreadable(device: device, number: number, reason: "\(error)")
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
            let numbers = try listing(of: logURL.appendingPathComponent(device), missing: nil)
                .compactMap(Self.batchNumber).filter { $0 > cursor[device] }.sorted()
            // Numbers are consecutive; a gap is a batch still on its way, and what follows it waits.
            for number in numbers {
                guard number == cursor[device] + 1, changeCount < limit,
                      let batch = try? batch(of: device, number: number) else { break }
                batches.append(batch)
                changeCount += batch.changes.count
                cursor[device] = number
            }
        }
        return (batches, cursor)
    }

    private func batchURL(of device: DeviceID, number: Int64) -> URL {
        logURL.appendingPathComponent(device, isDirectory: true)
            .appendingPathComponent(String(format: "%012lld.json", number))
    }

    public func removeBatches(of device: DeviceID, through number: Int64) throws -> Int {
        let folder = logURL.appendingPathComponent(device, isDirectory: true)
        var removed = 0
        for name in try listing(of: folder, missing: nil) {
            guard let batch = Self.batchNumber(name), batch <= number else { continue }
            if (try? FileEntries.removeFile(folder.appendingPathComponent(name).path)) != nil { removed += 1 }
        }
        return removed
    }

    // MARK: Acknowledgements and snapshots

    public func acknowledge(_ ack: DeviceAck) throws {
        let folder = acksURL.appendingPathComponent(ack.device, isDirectory: true)
        try writeOnce(try CloudCoding.encoder.encode(ack), at: folder.appendingPathComponent("\(ack.number).json"))
        for name in try listing(of: folder, missing: nil) {
            if let number = Self.number(name), number < ack.number { try? FileEntries.removeFile(folder.appendingPathComponent(name).path) }
        }
    }

    public func acknowledgements() throws -> [DeviceID: DeviceAck] {
        var acks: [DeviceID: DeviceAck] = [:]
        for device in try listing(of: acksURL, missing: nil).filter(CloudInputRules.isDeviceID) {
            let folder = acksURL.appendingPathComponent(device, isDirectory: true)
            guard let newest = try listing(of: folder, missing: nil).compactMap(Self.number).max(),
                  let ack = try? decode(DeviceAck.self, at: folder.appendingPathComponent("\(newest).json")),
                  ack.device == device else { continue }
            acks[device] = ack
        }
        return acks
    }

    public func putSnapshot(_ snapshot: CloudSnapshot) throws {
        let total = snapshot.cursor.positions.values.reduce(0, +)
        let name = String(format: "%012lld-", total) + snapshot.device + String(format: "-%012lld.json", snapshot.number)
        try writeOnce(try CloudCoding.encoder.encode(snapshot), at: snapshotsURL.appendingPathComponent(name))
        // This device's older snapshots are covered by the new one.
        for old in try listing(of: snapshotsURL, missing: nil) where old != name && old.contains("-" + snapshot.device + "-") {
            try? FileEntries.removeFile(snapshotsURL.appendingPathComponent(old).path)
        }
    }

    public func latestSnapshot() throws -> CloudSnapshot? {
        for name in try listing(of: snapshotsURL, missing: nil).filter({ $0.hasSuffix(".json") && !$0.hasPrefix(".") }).sorted().reversed() {
            if let snapshot = try? decode(CloudSnapshot.self, at: snapshotsURL.appendingPathComponent(name),
                                          limit: CloudInputRules.maxSnapshotBytes) { return snapshot }
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
        let sharesOneFolder = try decode(CloudIdentity.self, at: identityURL).format < Self.contentByDeviceFormat
        let root = sharesOneFolder ? contentURL : contentURL.appendingPathComponent(device, isDirectory: true)
        try writeOnce(bytes, at: contentFileURL(hash, in: root))
    }

    public func removeContent(except keeping: Set<ContentHash>, unusedSince: Date) throws -> Int {
        var removed = 0
        for root in try contentRoots() {
            for prefix in try listing(of: root, missing: nil) where Self.isContentPrefix(prefix) {
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
        try firstInContentRoots(hash) { url in
            guard let bytes = FileManager.default.contents(atPath: url.path) else { return nil }
            guard ContentHash(of: bytes) == hash else {
                throw CloudError.damaged(path: url.path, reason: "its bytes do not have the hash they are named by")
            }
            return bytes
        }
    }

    public func hasContent(_ hash: ContentHash) throws -> Bool {
        try firstInContentRoots(hash) { FileManager.default.fileExists(atPath: $0.path) ? true : nil } ?? false
    }

    /// The first file's answer among the places the bytes under `hash` may be: the content
    /// folders known from the last listing, then those a new listing adds (a device's folder
    /// that appeared since).
    private func firstInContentRoots<T>(_ hash: ContentHash, _ answer: (URL) throws -> T?) throws -> T? {
        let known = knownContentRoots.roots.withLock { $0 }
        for root in known {
            if let found = try answer(contentFileURL(hash, in: root)) { return found }
        }
        let listed = try contentRoots()
        knownContentRoots.roots.withLock { $0 = listed }
        for root in listed where !known.contains(root) {
            if let found = try answer(contentFileURL(hash, in: root)) { return found }
        }
        return nil
    }

    /// The first format whose devices each write their own content folder.
    static let contentByDeviceFormat = 2

    /// Each device's folder in `content/`, then `content/` itself (format 1's shared folder).
    private func contentRoots() throws -> [URL] {
        (try listing(of: contentURL, missing: nil)).filter { CloudInputRules.isDeviceID($0) && !Self.isContentPrefix($0) }
            .sorted().map { contentURL.appendingPathComponent($0, isDirectory: true) } + [contentURL]
    }

    private func contentFileURL(_ hash: ContentHash, in root: URL) -> URL {
        root.appendingPathComponent(String(hash.rawValue.prefix(2)), isDirectory: true).appendingPathComponent(hash.rawValue)
    }

    /// A hash's two-character folder (`ab`), never a device's: device ids are longer.
    private static func isContentPrefix(_ name: String) -> Bool {
        name.utf8.count == 2 && name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
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

    /// The record in the file at `url`; a file over `limit` bytes is refused unread
    /// (`tooLarge`): anyone who can write to the cloud folder could put a huge one there.
    private func decode<T: Decodable>(_ type: T.Type, at url: URL, limit: Int = CloudInputRules.maxRecordBytes) throws -> T {
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
            return try CloudCoding.decoder.decode(type, from: bytes)
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

    /// The folders Shelf makes in a cloud.
    private static let folderNames: Set<String> = ["devices", "log", "content", "acks", "snapshots"]

    /// What systems and sync tools leave in any folder (`.stfolder`, `.DS_Store`,
    /// `desktop.ini`): such a folder still counts as empty.
    private static func isIgnorable(_ name: String) -> Bool {
        name.hasPrefix(".") || ["desktop.ini", "Thumbs.db"].contains(name)
    }

    /// The number in `000000000042.json` (a batch's name: twelve digits); nil for every other name.
    private static func batchNumber(_ name: String) -> Int64? {
        name.utf8.count == 17 ? number(name) : nil
    }

    /// The number in `42.json`; nil for every other name.
    private static func number(_ name: String) -> Int64? {
        guard name.hasSuffix(".json") else { return nil }
        let digits = name.dropLast(5)
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int64(digits)
    }
}

/// The content folders a ``FolderCloud`` last listed, shared by its copies.
private final class ContentRootsSeen: Sendable {
    let roots = Mutex<[URL]>([])
}
