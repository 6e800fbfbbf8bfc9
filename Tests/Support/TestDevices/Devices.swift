import Foundation
import Logging
import ShelfModel
import ShelfStore
import Testing
import TestSupport
import ShelfSync

/// The backends the cloud behaviour tests run against.
public enum CloudKind: String, CaseIterable, Sendable {
    case folder
    /// A schema of its own on the test run's throw-away PostgreSQL server.
    case postgres
    /// A folder cloud made with `--encrypt`: every record and file sealed.
    case encryptedFolder
    /// A PostgreSQL cloud made with `--encrypt`; not among the behaviour suite's kinds (the
    /// encrypted folder carries the sealing), but for the tests of what a server holds.
    case encryptedPostgres

    public static let allCases: [CloudKind] = [.folder, .postgres, .encryptedFolder]

    public var isPostgres: Bool { self == .postgres || self == .encryptedPostgres }
    public var isEncrypted: Bool { self == .encryptedFolder || self == .encryptedPostgres }
}

/// Libraries ("devices") sharing one cloud, all in one temporary folder: the one way tests
/// make devices that share a cloud.
///
/// `delayed` (folder clouds): each device has its own copy of the cloud folder, and files
/// reach the other copies only when the test calls ``deliver()`` — a file-sync tool such as
/// Syncthing, which lets two devices push before either sees the other's change.
public final class Devices {
    public let folder: TemporaryFolder
    public let kind: CloudKind
    private let delayed: Bool
    /// Files a delivery copied, as `cloud-<device>/<path>`: every other file a device wrote.
    private var delivered: Set<String> = []
    /// Paths that more than one device wrote in its own copy of the cloud: a file-sync tool
    /// sees two writers of one file there (Syncthing: a conflict).
    public private(set) var writtenByTwo: Set<String> = []
    /// A PostgreSQL cloud's address and password; nil for folder clouds.
    private let postgres: (address: PostgresAddress, password: String)?

    public init(delayed: Bool = false, cloud kind: CloudKind = .folder) throws {
        precondition(!delayed || !kind.isPostgres, "only folder clouds deliver late")
        folder = try TemporaryFolder()
        self.delayed = delayed
        self.kind = kind
        postgres = kind.isPostgres ? try TestClouds.makeCloud() : nil
    }

    /// Devices of the PostgreSQL cloud at `address`, whose role logs in with `password`.
    public init(address: PostgresAddress, password: String) throws {
        folder = try TemporaryFolder()
        delayed = false
        kind = .postgres
        postgres = (address, password)
    }

    /// The passphrase of the fixture's encrypted clouds.
    public static let passphrase = "correct horse battery staple"

    /// How the devices of an encrypted cloud read it, once one has linked.
    private var sealing = CloudSealing.plain

    /// The cloud `name` sees, as its devices read it: sealed with the cloud's key once a device
    /// linked to an encrypted one (so a test may write to it as a member would).
    public func cloud(for name: String) throws -> any CloudBackend {
        try located(for: name).sealed(by: sealing)
    }

    /// The cloud `name` sees, as a new device finds it.
    private func located(for name: String) throws -> any CloudBackend {
        guard let postgres else { return FolderCloud(folder: cloudFolder(for: name)) }
        return try postgres.address.cloud(environment: ["PGPASSWORD": postgres.password])
    }

    /// The PostgreSQL cloud's address (its schema is `address.cloud`); nil for folder clouds.
    public var postgresAddress: PostgresAddress? { postgres?.address }

    /// The folder of the folder cloud `name` sees.
    public func cloudFolder(for name: String) -> URL {
        precondition(!kind.isPostgres, "only folder clouds have a folder")
        return folder.child(delayed ? "cloud-" + name : "cloud")
    }

    /// A new library linked to the cloud under `name`. `downloadAll`, `cacheLimit`: as
    /// ``CloudLinking/link(_:to:deviceName:downloadAll:cacheLimit:join:wait:progress:)``;
    /// `delivering`: as ``link(_:as:downloadAll:cacheLimit:delivering:)``.
    public func device(_ name: String, downloadAll: Bool = false, cacheLimit: Int? = nil, delivering: Bool = true) throws -> Device {
        try join(try library(name), as: name, downloadAll: downloadAll, cacheLimit: cacheLimit, delivering: delivering)
    }

    /// A new library not linked to any cloud yet, in this folder under `name`: for a library that
    /// holds something before it joins, or whose link is what the test is about.
    public func library(_ name: String) throws -> LibraryStore {
        try LibraryStore.create(at: folder.child(name))
    }

    /// Links `store` (a library of this fixture or one made elsewhere, such as a mountable one)
    /// to the cloud under `name`, and returns it as a device.
    public func join(_ store: LibraryStore, as name: String, downloadAll: Bool = false, cacheLimit: Int? = nil,
                     delivering: Bool = true) throws -> Device {
        try link(store, as: name, downloadAll: downloadAll, cacheLimit: cacheLimit, delivering: delivering)
        return try device(name, linked: store)
    }

    /// Links `store` to the cloud under `name`. Delayed clouds deliver before and after, so a
    /// cloud another device made reaches this one first and it joins that one; `delivering:
    /// false` links before anything arrives, as a device that makes a cloud of its own.
    public func link(_ store: LibraryStore, as name: String, downloadAll: Bool = false, cacheLimit: Int? = nil,
                     delivering: Bool = true) throws {
        // A device's copy of the cloud folder exists before it links, so the cloud already made
        // reaches it first and it joins that one, as a file-sync tool shares one folder.
        if delayed { try FileManager.default.createDirectory(at: cloudFolder(for: name), withIntermediateDirectories: true) }
        if delivering { try deliver() }
        let linked = try CloudLinking.link(store, to: try located(for: name), deviceName: name, downloadAll: downloadAll,
                                           cacheLimit: cacheLimit, encrypt: kind.isEncrypted, passphrase: { _ in Devices.passphrase })
        if linked.cloud.sealing.isSealed { sealing = linked.cloud.sealing }
        if delivering { try deliver() }
    }

    /// `store`, already linked to the cloud under `name`, with its sync engine.
    public func device(_ name: String, linked store: LibraryStore) throws -> Device {
        // SHELF_SYNC_TRACE=1: every resolution and conflict on stderr (ChangeApplier's trace).
        var logger = Logger(label: "shelf.sync.\(name)")
        if ProcessInfo.processInfo.environment["SHELF_SYNC_TRACE"] != nil { logger.logLevel = .debug }
        let cloud = try DeviceCloudKey.open(try located(for: name), for: store)
        return Device(store: store, engine: SyncEngine(store: store, cloud: cloud, logger: logger))
    }

    /// Devices a, b and c, each holding the note at `path` with `text`; returns them and its id.
    public func threeHolding(_ path: String, _ text: String) throws -> (Device, Device, Device, ItemID) {
        let a = try device("a")
        let b = try device("b")
        let c = try device("c")
        let id = try a.write(path, text)
        try settle(a, b, c)
        return (a, b, c, id)
    }

    /// Copies every file of every cloud folder into every other that lacks it, as a file-sync
    /// tool would (each file whole, under its name). `only`: copies just the files it picks (by
    /// path in the cloud and the device that would receive it), as a tool that delivers in any
    /// order and is cut off midway.
    public func deliver(only picks: ((_ path: String, _ to: String) -> Bool)? = nil) throws {
        guard delayed else { return }
        let manager = FileManager.default
        let clouds = try manager.contentsOfDirectory(atPath: folder.url.path).filter { $0.hasPrefix("cloud-") }.sorted()
        var files: [String: URL] = [:]
        var writers: [String: Set<String>] = [:]
        for cloud in clouds {
            let root = folder.child(cloud)
            for path in manager.subpaths(atPath: root.path) ?? [] where !path.split(separator: "/").contains(where: { $0.hasPrefix(".") }) {
                var isFolder: ObjCBool = false
                if manager.fileExists(atPath: root.appendingPathComponent(path).path, isDirectory: &isFolder), !isFolder.boolValue {
                    files[path] = root.appendingPathComponent(path)
                    if !delivered.contains(cloud + "/" + path) { writers[path, default: []].insert(cloud) }
                }
            }
        }
        writtenByTwo.formUnion(writers.filter { $0.value.count > 1 }.keys)
        for cloud in clouds {
            for (path, source) in files.sorted(by: { $0.key < $1.key }) {
                let target = folder.child(cloud).appendingPathComponent(path)
                guard !manager.fileExists(atPath: target.path), picks?(path, String(cloud.dropFirst("cloud-".count))) ?? true
                else { continue }
                try manager.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                try manager.copyItem(at: source, to: target)
                delivered.insert(cloud + "/" + path)
            }
        }
    }

    /// Delivers and syncs every device until a whole round moves nothing; throws
    /// ``NotSettled`` if rounds keep moving changes (sync going round in circles).
    public func settle(_ devices: Device...) throws { try settle(devices) }

    public func settle(_ devices: [Device]) throws {
        for _ in 0..<Self.settleRounds {
            var moved = 0
            for device in devices {
                try deliver()
                let report = try device.sync()
                moved += report.pulled + report.pushed
            }
            if moved == 0 { return }
        }
        throw NotSettled()
    }

    /// Rounds enough for any test's devices to agree; more means changes echo for ever.
    public static let settleRounds = 20

    public struct NotSettled: Error, CustomStringConvertible {
        public var description: String { "devices still moved changes after \(Devices.settleRounds) rounds of sync" }
    }
}

/// One library and its sync engine, with the file operations a test needs.
public struct Device {
    public let store: LibraryStore
    public let engine: SyncEngine

    public init(store: LibraryStore, engine: SyncEngine) {
        self.store = store
        self.engine = engine
    }

    /// Saves `text` as the whole file at `path` (a new item if none is there), as a save
    /// through the mount would; returns the item's id.
    @discardableResult
    public func write(_ path: String, _ text: String, modified: Date = Date()) throws -> ItemID {
        let kind: ItemKind = path.hasPrefix("Books/") ? .book : .note
        return try store.write { writer in
            let id = try writer.record(atPath: path)?.item.id ?? .generate()
            return try writer.saveFile(Data(text.utf8), of: id, kind: kind, at: path, basedOn: nil, modified: modified).item.id
        }
    }

    /// Writes a plain file (an attachment, a setting) as the mount would, into the library's
    /// plain-file area.
    public func writePlain(_ path: String, _ bytes: Data, modified: Date? = nil) throws {
        let url = store.plainFilesFolder.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try bytes.write(to: url)
        if let modified { try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: url.path) }
    }

    /// Every plain file's bytes by path (folders as empty `Data`), what the mount shows besides items.
    public func plainFiles() -> [String: Data] {
        var files: [String: Data] = [:]
        let root = store.plainFilesFolder.path
        for path in FileManager.default.subpaths(atPath: root) ?? [] where !path.hasPrefix(".shelf-tmp") {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isFolder) else { continue }
            files[path] = isFolder.boolValue ? Data() : FileManager.default.contents(atPath: root + "/" + path)
        }
        return files
    }

    /// The file at `path` as reading it shows: downloaded first if it is a placeholder.
    public func text(_ path: String) throws -> String? {
        guard let id = try store.record(atPath: path)?.item.id else { return nil }
        return try text(id: id)
    }

    public func text(id: ItemID) throws -> String? {
        try engine.download(id)
        return try store.record(id: id)?.text
    }

    /// Every live file, by path, downloaded first: what reading them all would show.
    public func files() throws -> [String: Data] {
        try engine.downloadAll()
        var files: [String: Data] = [:]
        try store.forEachFile { files[$0] = $1 }
        return files
    }

    @discardableResult
    public func sync() throws -> SyncEngine.Report { try engine.sync() }
}

extension Devices {
    /// Every one of `devices` holds the same files: `path` reads `text`, beside exactly one
    /// conflict copy, which holds `copy`.
    public func expectAgreed(_ devices: [Device], on path: String, reading text: String, oneCopyHolding copy: String,
                      sourceLocation: SourceLocation = #_sourceLocation) throws {
        let first = try devices[0].files()
        for device in devices {
            let files = try device.files()
            #expect(files[path] == Data(text.utf8), sourceLocation: sourceLocation)
            let copies = files.filter { $0.key.contains("(conflict ") }
            #expect(copies.count == 1 && copies.values.first == Data(copy.utf8), "\(copies.keys.sorted())",
                    sourceLocation: sourceLocation)
            #expect(files == first, "every device holds the same files", sourceLocation: sourceLocation)
        }
    }
}
