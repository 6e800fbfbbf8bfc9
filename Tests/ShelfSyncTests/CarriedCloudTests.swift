import Foundation
import Glibc
import ShelfModel
import ShelfStore
import Synchronization
import Testing
import TestDevices
import TestSupport
import TestTraits
@testable import ShelfSync

/// A cloud folder carried between devices by a file-sync tool (Syncthing): files arrive in any
/// order, two devices may each make a cloud in the shared folder before either's arrives, and
/// the tool must never see two writers of one file.
@Suite(.scratchFolders) struct CarriedCloudTests {
    /// Whether the change batch reaches the other device before its bytes do.
    enum Order: String, CaseIterable, Sendable {
        case batchFirst, contentFirst
    }

    @Test(arguments: Order.allCases)
    func aChangeWaitsForItsBytesAndTheItemKeepsItsOwnMeanwhile(order: Order) throws {
        let devices = try Devices(delayed: true)
        let a = try devices.device("a")
        let b = try devices.device("b")
        let id = try a.write("Notes/Shared.md", "first\n")
        try devices.settle(a, b)
        #expect(try b.text(id: id) == "first\n")  // read on b: downloaded there

        _ = try a.write("Notes/Shared.md", "second\n")
        try a.sync()
        let arrivesFirst = order == .batchFirst ? "log/" : "content/"
        try devices.deliver { path, to in to == "b" && path.hasPrefix(arrivesFirst) }
        try b.sync()
        // Still downloaded, with the bytes it had: never a placeholder that readers fail on.
        #expect(try b.store.downloadState(of: id) == nil)
        #expect(try b.store.record(id: id)?.text == "first\n")
        if order == .batchFirst {
            let awaited = ContentHash(of: Data("second\n".utf8))
            #expect(b.engine.awaitedContent == [awaited])
            #expect(try b.store.cloudLink()?.waiting?.contains("waiting for content") == true)
            // The runner watches where those bytes will land.
            let writer = try #require(try a.store.cloudLink()?.device)
            let folders = b.engine.cloud.contentFolders(for: [awaited]).map { $0.path.dropFirst(devices.cloudFolder(for: "b").path.count) }
            #expect(folders.contains("/content") && folders.contains("/content/\(writer)/\(awaited.rawValue.prefix(2))"), "\(folders)")
        }

        try devices.deliver()
        try b.sync()
        #expect(try b.store.record(id: id)?.text == "second\n")
        #expect(try b.store.cloudLink()?.waiting == nil)
        #expect(b.engine.awaitedContent.isEmpty)
    }

    /// Every cloud file keeps the inode, size and time it was written with, through merges
    /// every device derives alike and edits back to bytes the cloud already holds.
    @Test func noCloudFileIsWrittenTwiceOrTouched() throws {
        let devices = try Devices(delayed: true)
        let path = "Notes/Shared.md"
        let (a, b, c, id) = try devices.threeHolding(path, "one\ntwo\nthree\n")
        var seen: [String: FileStamp] = [:]
        func expectUnchanged(sourceLocation: SourceLocation = #_sourceLocation) throws {
            for (file, stamp) in try FileStamp.all(under: devices.folder.url) {
                if let earlier = seen[file] {
                    #expect(earlier == stamp, "\(file) was written again", sourceLocation: sourceLocation)
                } else {
                    seen[file] = stamp
                }
            }
        }
        try expectUnchanged()

        // Both edit their own line: every device derives the same merge.
        _ = try a.write(path, "ONE\ntwo\nthree\n")
        _ = try b.write(path, "one\ntwo\nTHREE\n")
        try a.sync()
        try b.sync()
        try devices.settle(a, b, c)
        #expect(try c.text(id: id) == "ONE\ntwo\nTHREE\n")
        try expectUnchanged()

        // Bytes the cloud holds already, pushed again by every device in turn.
        for device in [c, a, b] {
            _ = try device.write(path, "one\ntwo\nthree\n")
            try devices.settle(a, b, c)
            _ = try device.write(path, "ONE\ntwo\nTHREE\n")
            try devices.settle(a, b, c)
            try expectUnchanged()
        }
        #expect(seen.keys.contains { $0.contains("/content/") })

        // The same bytes made on two devices apart: each stores its own, never one file twice.
        _ = try a.write("Notes/From a.md", "the same words\n")
        _ = try b.write("Notes/From b.md", "the same words\n")
        try a.sync()
        try b.sync()
        try devices.settle(a, b, c)
        try expectUnchanged()
        #expect(devices.writtenByTwo.isEmpty, "written by two devices: \(devices.writtenByTwo.sorted())")
    }

    /// Reused bytes are never touched, so another device's removal of unused bytes may take
    /// bytes a change just named again: the device that pushed the change stores them again.
    @Test func bytesRemovedFromUnderAChangeAreStoredAgainByItsDevice() throws {
        let devices = try Devices()
        let a = try devices.device("a")
        _ = try a.write("Notes/Kept.md", "first\n")
        try a.sync()
        try a.engine.maintainCloud(snapshotEvery: 1)
        _ = try a.write("Notes/Kept.md", "kept\n")
        try a.sync()
        let hash = ContentHash(of: Data("kept\n".utf8)).rawValue
        let device = try #require(try a.store.cloudLink()?.device)
        let file = devices.cloudFolder(for: "a").appendingPathComponent("content/\(device)/\(hash.prefix(2))/\(hash)")
        try FileManager.default.removeItem(at: file)

        try a.engine.maintainCloud()
        #expect(FileManager.default.contents(atPath: file.path) == Data("kept\n".utf8))
    }

    /// Two devices link to the shared folder before either's cloud reaches the other: each
    /// makes one, and the file-sync tool keeps one `shelf-cloud.json` and sets the other aside.
    /// The device whose identity was set aside joins the one kept, and nothing splits.
    @Test func twoCloudsMadeInOneSharedFolderBecomeOne() throws {
        let devices = try Devices(delayed: true)
        var linked: [Device] = []
        for name in ["a", "b"] {
            try FileManager.default.createDirectory(at: devices.cloudFolder(for: name).appendingPathComponent(".stfolder"),
                                                    withIntermediateDirectories: true)
            linked.append(try devices.device(name, delivering: false))
        }
        let (a, b) = (linked[0], linked[1])
        let fromA = try a.write("Notes/From a.md", "made on a\n")
        let fromB = try b.write("Notes/From b.md", "made on b\n")
        try a.sync()
        try b.sync()

        // Syncthing keeps a's identity and renames b's.
        let cloudB = devices.cloudFolder(for: "b")
        try FileManager.default.moveItem(at: cloudB.appendingPathComponent("shelf-cloud.json"),
                                         to: cloudB.appendingPathComponent("shelf-cloud.sync-conflict-20261126-140000-ABCDEFG.json"))
        try devices.settle(a, b)
        let kept = try FolderCloud(folder: devices.cloudFolder(for: "a")).identity().cloud
        #expect(try b.store.cloudLink()?.cloud == kept)
        #expect(try b.store.cloudLink()?.error == nil)
        for device in [a, b] {
            #expect(try device.text(id: fromA) == "made on a\n")
            #expect(try device.text(id: fromB) == "made on b\n")
        }

        // A cloud put in its place whose identity was never this one's still stops sync.
        let other = try Devices()
        _ = try other.device("x")
        try FileManager.default.removeItem(at: cloudB)
        try FileManager.default.copyItem(at: other.cloudFolder(for: "x"), to: cloudB)
        #expect(throws: CloudError.self) { try b.sync() }
    }

    @Test func joiningWaitsForTheCloudToArriveAndSaysSo() throws {
        let devices = try Devices(delayed: true)
        let a = try devices.device("a")
        let id = try a.write("Notes/Shared.md", "from a\n")
        try a.sync()
        let cloudB = devices.cloudFolder(for: "b")
        try FileManager.default.createDirectory(at: cloudB.appendingPathComponent(".stfolder"), withIntermediateDirectories: true)
        let store = try devices.library("b")

        let said = SaidLines()
        let linking = ProbedThread("link --join") {
            _ = try CloudLinking.link(store, to: FolderCloud(folder: cloudB), deviceName: "b", join: true, wait: 30) { line in
                said.lines.withLock { $0.append(line) }
            }
        }
        #expect(eventually(within: .seconds(10)) { said.lines.withLock { $0 }.contains { $0.contains("waiting for the cloud to arrive") } })
        #expect(try FileManager.default.contentsOfDirectory(atPath: cloudB.path) == [".stfolder"], "nothing made meanwhile")
        try devices.deliver()
        try linking.finish(within: .seconds(10))
        #expect(try store.cloudLink()?.cloud == (try FolderCloud(folder: devices.cloudFolder(for: "a")).identity().cloud))
        let b = try devices.device("b", linked: store)
        try b.sync()
        #expect(try b.text(id: id) == "from a\n")

        // Parts of a cloud without its identity are a cloud on its way, not someone's files.
        let partial = devices.folder.child("partial")
        try FileManager.default.createDirectory(at: partial.appendingPathComponent("log"), withIntermediateDirectories: true)
        let other = try devices.library("c")
        #expect(throws: SyncError.cloudDidNotArrive(location: partial.path, seconds: 0)) {
            try CloudLinking.link(other, to: FolderCloud(folder: partial), deviceName: "c", wait: 0.3)
        }
        #expect(try other.cloudLink() == nil)
    }
}

/// What a waiting link said, from its thread.
private final class SaidLines: Sendable {
    let lines = Mutex<[String]>([])
}

/// What tells a file written again from the one written first.
private struct FileStamp: Equatable {
    var inode: UInt64
    var size: Int64
    var modified: Int
    var modifiedNanoseconds: Int

    /// Every file under `root` but hidden ones (temporary names), by path.
    static func all(under root: URL) throws -> [String: FileStamp] {
        var stamps: [String: FileStamp] = [:]
        for path in FileManager.default.subpaths(atPath: root.path) ?? [] where path.contains("cloud-") {
            guard !path.split(separator: "/").contains(where: { $0.hasPrefix(".") }) else { continue }
            var info = stat()
            guard lstat(root.path + "/" + path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            stamps[path] = FileStamp(inode: UInt64(info.st_ino), size: Int64(info.st_size), modified: info.st_mtim.tv_sec,
                                     modifiedNanoseconds: info.st_mtim.tv_nsec)
        }
        return stamps
    }
}
