import Foundation
import Glibc
import ShelfModel
import ShelfStore
import Testing
import TestDevices
import TestSupport
import TestTraits
@testable import ShelfSync

/// Batches written by hand into a cloud by a device nobody knows, each exactly like a real
/// batch (real content, well-formed JSON) but with one thing wrong: each is held back with its
/// reason, nothing of it reaches the library or anything outside it, and the devices that keep
/// the rules go on syncing.
@Suite(.scratchFolders) struct HostileCloudTests {
    /// A change a hostile device could write, and a fragment of the reason it must be refused with.
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let kind: String
        let path: String
        var permissions: UInt32 = 0o600
        var attributes: [String: Data] = [:]
        let reason: String
        var testDescription: String { name }
    }

    /// A folder outside every library and cloud, which the hostile paths aim at.
    static let outside = "/tmp/shelf-hostile-\(getpid())"

    static let pathCases = [
        Case(name: "parent folders", kind: "note", path: "../../../../../\(outside.dropFirst(5))/pwned-note.md",
             reason: "empty, . and .. path components"),
        Case(name: "out of Notes", kind: "note", path: "Notes/../../escape.md", reason: "empty, . and .. path components"),
        Case(name: "absolute", kind: "note", path: "\(outside)/absolute.md", reason: "drop the leading /"),
        Case(name: "deep", kind: "note", path: "Notes/ok/../../../../../../\(outside.dropFirst(5))/deep.md",
             reason: "empty, . and .. path components"),
    ]

    static let otherCases = [
        Case(name: "long name", kind: "note", path: "Notes/" + String(repeating: "é", count: 130) + ".md",
             reason: "more than the 255 bytes"),
        Case(name: "status folder", kind: "file", path: ".shelf/sync.json", reason: "inside .shelf/"),
        Case(name: "book under Notes", kind: "book", path: "Notes/Dune.md", reason: "a book lives under Books/"),
        Case(name: "setuid", kind: "note", path: "Notes/Setuid.md", permissions: 0o4777, reason: "setuid"),
        Case(name: "large attribute", kind: "note", path: "Notes/Tagged.md",
             attributes: ["user.xdg.tags": Data(count: 100_000)], reason: "100000 bytes, more than 65536"),
        Case(name: "plain file over an item", kind: "file", path: "Notes/Plain.md", reason: "an item's, not a plain file's"),
    ]

    @Test(arguments: pathCases + otherCases)
    func aHostileBatchIsHeldBackWithItsReasonOnAFolderCloud(_ hostile: Case) throws {
        try checkHeldBack(hostile, cloud: .folder)
    }

    @Test(arguments: pathCases)
    func aHostileBatchIsHeldBackWithItsReasonOnPostgres(_ hostile: Case) throws {
        try checkHeldBack(hostile, cloud: .postgres)
    }

    /// A batch file of 400 MB (sparse: the test writes a few bytes) is refused by its size,
    /// unread; the other devices' batches go on.
    @Test func aHugeBatchFileIsRefusedUnread() throws {
        let devices = try Devices()
        let (a, b, evil) = try Self.twoAndEvil(devices)
        let file = devices.cloudFolder(for: "evil").appendingPathComponent("log/\(evil.id)/000000000001.json")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("{\"changes\":[".utf8).write(to: file)
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: 400 << 20)
        try handle.close()

        let good = try a.write("Notes/Good.md", "kept the rules\n")
        try devices.settle(a, b)
        #expect(try b.text(id: good) == "kept the rules\n")
        let waiting = try #require(try b.engine.status()?.waiting)
        #expect(waiting.contains("batch 1 of device evil is refused") && waiting.contains("419430400 bytes, more than the 134217728"),
                "\(waiting)")
    }

    /// `shelf cloud forget-device` drops what a bad device wrote: its refused batch is passed
    /// over, and its later batches that keep the rules are applied.
    @Test func forgettingTheDeviceDropsItsRefusedBatch() throws {
        let devices = try Devices()
        let (a, b, evil) = try Self.twoAndEvil(devices)
        let cloud = try devices.cloud(for: "b")
        try Self.push(Self.pathCases[0], as: evil, number: 1, to: cloud)
        try Self.push(Case(name: "fine", kind: "note", path: "Notes/Fine.md", reason: ""), as: evil, number: 2, to: cloud)
        try devices.settle(a, b)
        #expect(try b.store.record(atPath: "Notes/Fine.md") == nil, "held back behind the refused batch")

        try b.engine.forgetDevice(named: "evil")
        try devices.settle(a, b)
        #expect(try b.engine.status()?.waiting == nil)
        #expect(try b.text("Notes/Fine.md") == "hostile bytes\n")
        #expect(try b.store.summaries().allSatisfy { (try? ItemPath.validate($0.path)) != nil })
    }

    /// One device record that does not read (damaged, or written by someone without the key)
    /// hides no other device: the others' names still name conflict copies, compaction counts
    /// that device as one that has read nothing (instead of stopping), and `forget-device`
    /// retires it by its id. Listing the devices once threw at the first damaged record.
    @Test func aDamagedDeviceRecordHidesNoOtherDeviceAndCanBeForgotten() throws {
        let devices = try Devices()
        let (a, b, evil) = try Self.twoAndEvil(devices)
        try Data("not a device record".utf8).write(to: devices.cloudFolder(for: "b").appendingPathComponent("devices/\(evil.id).json"))
        try a.write("Notes/Good.md", "kept the rules\n")
        try devices.settle(a, b)
        #expect(try b.text("Notes/Good.md") == "kept the rules\n")

        let listed = try b.engine.cloud.devices()
        #expect(Set(listed.readable.map(\.name)) == ["a", "b"])
        #expect(listed.damaged == [evil.id])
        let aID = try #require(try a.store.cloudLink()).device
        #expect(b.engine.deviceName(aID) == "a")
        #expect(try b.engine.maintainCloud().batchesRemoved == 0, "the damaged device has read nothing")

        try b.engine.forgetDevice(named: evil.id)
        #expect(try b.engine.cloud.retiredDevices().contains(evil.id))
    }

    /// A snapshot with a hostile change is not started from: a new device reads nothing past
    /// it and says why, until a good device writes a newer one.
    @Test(arguments: CloudKind.allCases)
    func aHostileSnapshotIsNotStartedFrom(cloud kind: CloudKind) throws {
        let devices = try Devices(cloud: kind)
        let (a, b, evil) = try Self.twoAndEvil(devices)
        try a.write("Notes/Good.md", "kept the rules\n")
        try devices.settle(a, b)
        let hash = ContentHash(of: Data())
        let change = CloudChange(id: "\(evil.id)-1-0", item: UUID().uuidString.lowercased(), base: nil, device: evil.id,
                                 time: Date(), operation: .put, kind: "note", path: Self.pathCases[0].path, title: "Pwned",
                                 hash: hash, size: 0, modified: Date(), permissions: 0o600, attributes: [:])
        try devices.cloud(for: "evil").putSnapshot(CloudSnapshot(device: evil.id, number: 1, cursor: CloudCursor(positions: [evil.id: 1_000_000]),
                                                                 changes: [change], history: []))

        let c = try devices.device("c")
        try c.sync()
        let waiting = try #require(try c.engine.status()?.waiting)
        #expect(waiting.contains("snapshot, of device evil, is refused") && waiting.contains("shelf cloud compact"), "\(waiting)")
        #expect(try c.store.summaries().isEmpty)
    }

    // MARK: Building blocks

    private func checkHeldBack(_ hostile: Case, cloud kind: CloudKind) throws {
        let devices = try Devices(cloud: kind)
        let (a, b, evil) = try Self.twoAndEvil(devices)
        try Self.push(hostile, as: evil, number: 1, to: try devices.cloud(for: "b"))
        let good = try a.write("Notes/Good.md", "kept the rules\n")
        try devices.settle(a, b)

        #expect(try b.text(id: good) == "kept the rules\n", "the other devices' batches go on")
        let waiting = try #require(try b.engine.status()?.waiting, "the status says what is held back")
        #expect(waiting.contains("batch 1 of device evil is refused") && waiting.contains(hostile.reason), "\(waiting)")
        #expect(waiting.contains("forget-device \(evil.id)"), "\(waiting)")
        #expect(try b.store.summaries().map(\.path) == ["Notes/Good.md"], "nothing of the batch is applied")
        #expect(b.plainFiles().keys.allSatisfy { ["Books", "Notes"].contains($0) }, "\(b.plainFiles().keys.sorted())")
        #expect(!FileManager.default.fileExists(atPath: Self.outside), "nothing outside the library")
        // Held back again, not applied, on the next round.
        try b.sync()
        #expect(try b.engine.status()?.waiting == waiting)
    }

    /// Devices a and b, and a device "evil" registered in the cloud that only this test writes for.
    private static func twoAndEvil(_ devices: Devices) throws -> (Device, Device, DeviceRecord) {
        let a = try devices.device("a")
        let b = try devices.device("b")
        let evil = DeviceRecord(id: UUID().uuidString.lowercased(), name: "evil")
        try devices.cloud(for: "evil").register(evil)
        return (a, b, evil)
    }

    /// Writes batch `number` of `evil` holding one change as `hostile` says, with real content;
    /// into a folder cloud as a file by hand, as anyone who can write there could.
    private static func push(_ hostile: Case, as evil: DeviceRecord, number: Int64, to cloud: any CloudBackend) throws {
        let bytes = Data("hostile bytes\n".utf8)
        let hash = ContentHash(of: bytes)
        try cloud.putContent(bytes, hash: hash, by: evil.id)
        let item = ["file", "folder"].contains(hostile.kind) ? "file:" + hostile.path : UUID().uuidString.lowercased()
        let change = CloudChange(id: "\(evil.id)-\(number)-0", item: item, base: nil, device: evil.id, time: Date(),
                                 operation: .put, kind: hostile.kind, path: hostile.path, title: "Pwned", hash: hash,
                                 size: bytes.count, modified: Date(), permissions: hostile.permissions,
                                 attributes: hostile.attributes)
        let batch = ChangeBatch(device: evil.id, number: number, changes: [change])
        if let folder = cloud as? FolderCloud {
            let file = folder.folder.appendingPathComponent("log/\(evil.id)/" + String(format: "%012lld.json", number))
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try CloudCoding.encoder.encode(batch).write(to: file)
        } else {
            try cloud.append(batch)
        }
    }
}
