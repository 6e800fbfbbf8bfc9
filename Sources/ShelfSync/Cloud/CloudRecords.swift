import Crypto
import Foundation

/// What makes a cloud itself: a linked library checks it on every sync, so a folder that was
/// replaced, emptied or switched stops sync instead of looking like a library with no items.
public struct CloudIdentity: Codable, Hashable, Sendable {
    /// The layout version; a Shelf refuses a cloud whose format is newer than it knows.
    /// 2: each device stores file bytes in its own content folder (1: one shared folder).
    /// 3: 2, encrypted: every record and file sealed (``CloudSealing``), the data key wrapped
    /// in the cloud's key envelopes.
    public var format: Int
    /// Unique per cloud: a library remembers the cloud it linked to by this.
    public var cloud: String
    public var created: Date

    /// The newest format this Shelf reads.
    public static let currentFormat = encryptedFormat
    /// The format of a new plain cloud.
    public static let plainFormat = 2
    /// The format of a new encrypted cloud: a Shelf older than encryption refuses it.
    public static let encryptedFormat = 3

    public var isEncrypted: Bool { format >= Self.encryptedFormat }

    public init(format: Int = CloudIdentity.plainFormat, cloud: String = UUID().uuidString.lowercased(),
                created: Date = Date()) {
        self.format = format
        self.cloud = cloud
        self.created = created
    }
}

/// A device's id: unique per library linked to a cloud, chosen when it links.
public typealias DeviceID = String

/// One library linked to the cloud.
public struct DeviceRecord: Codable, Hashable, Sendable {
    public var id: DeviceID
    /// What people call it (`laptop`); names conflict copies.
    public var name: String
    public var joined: Date

    public init(id: DeviceID, name: String, joined: Date = Date()) {
        self.id = id
        self.name = name
        self.joined = joined
    }
}

/// Every device that ever joined a cloud: those whose records read, and those whose records
/// are damaged (or sealed under another key). A device whose record is damaged is still one:
/// what it has read holds compaction back, and `shelf cloud forget-device` retires it by id;
/// one damaged record never hides the others' names.
public struct CloudDevices: Sendable {
    public var readable: [DeviceRecord] = []
    /// The devices whose records are damaged, by id.
    public var damaged: Set<DeviceID> = []

    public init(readable: [DeviceRecord] = []) {
        self.readable = readable
    }

    public var ids: [DeviceID] { readable.map(\.id) + damaged.sorted() }

    /// Adds device `id` with the record `read` returns, or as damaged when its record is.
    mutating func add(_ id: DeviceID, read: () throws -> DeviceRecord) throws {
        do {
            readable.append(try read())
        } catch CloudError.damaged, CloudError.tooLarge {
            damaged.insert(id)
        }
    }
}

/// The SHA-256 of a file's bytes, in lower-case hex: the name its content has in the cloud.
public struct ContentHash: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public init(of bytes: Data) {
        self.init(hex: SHA256.hash(data: bytes))
    }

    /// A 32-byte digest in lower-case hex.
    init(hex digest: some Sequence<UInt8>) {
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        for byte in digest {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0f)])
        }
        rawValue = String(decoding: hex, as: UTF8.self)
    }

    /// 64 lower-case hex digits, the only names a content file may have.
    public var isWellFormed: Bool {
        rawValue.utf8.count == 64 && rawValue.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    public var description: String { rawValue }
}

/// A change's cloud-wide id: `<device>-<batch>-<index>`, unique because each device numbers
/// its own batches.
public typealias ChangeID = String

/// The state of one item after a change on one device: everything another device needs to
/// show it, its bytes by hash. Changes carry whole states rather than edits, so applying one
/// twice is harmless and a merge compares states.
public struct CloudChange: Codable, Hashable, Sendable {
    public enum Operation: String, Codable, Sendable {
        /// The item exists with this state (created, edited, renamed, restored).
        case put
        /// The item went to the trash on the device that made the change (a tombstone).
        case delete
    }

    public var id: ChangeID
    public var item: String
    /// The change this one was made on top of: nil for an item new to the cloud.
    public var base: ChangeID?
    /// For the result of merging two concurrent changes: the other one (`base` is the first).
    public var mergedFrom: ChangeID?
    public var device: DeviceID
    /// When the change was made, by the device's clock: newest wins where edits cannot merge.
    public var time: Date
    public var operation: Operation
    /// `book` or `note`.
    public var kind: String
    /// Library-relative path: `Books/Dune - Frank Herbert.md`.
    public var path: String
    public var title: String
    public var hash: ContentHash
    public var size: Int
    /// The file's modification time and mode bits.
    public var modified: Date
    public var permissions: UInt32
    /// The file's `user.*` extended attributes.
    public var attributes: [String: Data]
}

/// The changes one device pushed at once, numbered 1, 2, 3… per device.
public struct ChangeBatch: Codable, Hashable, Sendable {
    public var device: DeviceID
    public var number: Int64
    public var changes: [CloudChange]
    /// Why the backend did not read this batch (too large to read, or not a batch at all): it
    /// holds no changes and stands in its device's log, so that device's later batches wait
    /// behind it while the engine says why (``CloudInputRules``). Never stored.
    public var unreadable: String?

    private enum CodingKeys: String, CodingKey { case device, number, changes }

    public init(device: DeviceID, number: Int64, changes: [CloudChange]) {
        self.device = device
        self.number = number
        self.changes = changes
    }

    /// Batch `number` of `device` as a backend that could not read it delivers it.
    public static func unreadable(device: DeviceID, number: Int64, reason: String) -> ChangeBatch {
        var batch = ChangeBatch(device: device, number: number, changes: [])
        batch.unreadable = reason
        return batch
    }
}

/// How far a device has read the cloud, as it tells the others (numbered: the newest counts),
/// so that logs every device has read can be removed.
public struct DeviceAck: Codable, Hashable, Sendable {
    public var device: DeviceID
    public var number: Int64
    public var cursor: CloudCursor
    public var time: Date

    public init(device: DeviceID, number: Int64, cursor: CloudCursor, time: Date = Date()) {
        self.device = device
        self.number = number
        self.cursor = cursor
        self.time = time
    }
}

/// The whole library as one device knew it at `cursor`: the newest change of every item and
/// plain file (deletions included), and the recent changes before them. A device joining late
/// starts here instead of replaying every log, and logs it covers can go.
public struct CloudSnapshot: Codable, Hashable, Sendable {
    public var device: DeviceID
    public var number: Int64
    public var cursor: CloudCursor
    public var changes: [CloudChange]
    /// The changes before `changes` that the snapshotting device knew, the nearest
    /// ``CloudMaintenance/snapshotHistory`` behind each: an edit pushed later on top of one of them
    /// merges on a device that started here as on every other. Nil in snapshots of a Shelf that
    /// did not keep them.
    public var history: [CloudChange]?

    public init(device: DeviceID, number: Int64, cursor: CloudCursor, changes: [CloudChange], history: [CloudChange]) {
        self.device = device
        self.number = number
        self.cursor = cursor
        self.changes = changes
        self.history = history
    }

    /// How many batches the snapshot covers: of two, the one with more behind it is newer.
    var batchesBehind: Int64 { cursor.positions.values.reduce(0, +) }
}

/// How far a device has read the cloud: per log, the last batch applied. A folder cloud has
/// one log per device; a backend with one ordered log uses a single key.
public struct CloudCursor: Codable, Hashable, Sendable {
    public var positions: [String: Int64]

    public init(positions: [String: Int64] = [:]) { self.positions = positions }

    public subscript(log: String) -> Int64 {
        get { positions[log] ?? 0 }
        set { positions[log] = newValue }
    }
}

/// Everything a cloud can refuse, each saying what is wrong and what to do.
public enum CloudError: Error, Equatable, CustomStringConvertible {
    /// Nothing is at the cloud's place (a network share gone, a folder moved).
    case missing(location: String)
    /// The place is empty where a cloud was linked: never read as "every item was deleted".
    case empty(location: String)
    case unreadable(location: String, reason: String)
    /// The cloud's server refused or cannot be reached; `reason` says what to do.
    case server(location: String, reason: String)
    /// The place holds files, but no Shelf cloud.
    case notACloud(location: String)
    /// The place holds parts of a Shelf cloud but not its identity yet: a file-sync tool is
    /// still bringing it.
    case arriving(location: String)
    /// The place holds another cloud than the one this library linked to.
    case differentCloud(location: String, expected: String, found: String)
    case newerFormat(location: String, format: Int)
    /// A file in the cloud that does not read as what its name says.
    case damaged(path: String, reason: String)
    /// A file or row larger than Shelf reads of its kind (``CloudInputRules``); it was not read.
    case tooLarge(path: String, bytes: Int, limit: Int)

    public var description: String {
        switch self {
        case .missing(let location):
            "the cloud at \(location) is not there (a network share not mounted, a folder moved?); sync waits and retries. Bring it back, or `shelf cloud unlink` and link the new place."
        case .empty(let location):
            "the cloud folder \(location) is empty although this library is linked to a cloud there; sync stopped and nothing was deleted. Restore the folder's contents (or wait for the file-sync tool to bring them), or `shelf cloud unlink` and link another place."
        case .unreadable(let location, let reason):
            "cannot read the cloud at \(location): \(reason). Check its permissions and that the disk or share is available."
        case .server(let location, let reason):
            "the cloud at \(location): \(reason)."
        case .notACloud(let location):
            "\(location) holds files but no Shelf cloud (no shelf-cloud.json); a cloud is created only in a new or empty folder: choose one, or the folder of an existing cloud."
        case .arriving(let location):
            "\(location) holds parts of a Shelf cloud but not its shelf-cloud.json yet (a file-sync tool may still be bringing it); sync waits for it."
        case .differentCloud(let location, let expected, let found):
            "\(location) holds another cloud (\(found)) than the one this library is linked to (\(expected)); sync stopped and nothing was deleted. Put the right folder back, or `shelf cloud unlink` and link this one."
        case .newerFormat(let location, let format):
            "the cloud at \(location) was written by a newer Shelf (format \(format), this Shelf reads up to \(CloudIdentity.currentFormat)); update Shelf to sync with it."
        case .damaged(let path, let reason):
            "the cloud file \(path) is damaged (\(reason)); it is skipped until a good copy arrives."
        case .tooLarge(let path, let bytes, let limit):
            "the cloud file \(path) is \(bytes) bytes, more than the \(limit) Shelf reads of such a file, so it was not read; `shelf cloud forget-device` the device that wrote it, or remove the file."
        }
    }
}

/// How cloud records are written as JSON, by every backend and in the library's sync ledger:
/// keys sorted (the same record is the same bytes), dates as seconds (exact doubles).
enum CloudCoding {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .secondsSince1970
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()
}
