import Foundation
import Glibc
import Testing
import TestSupport
import TestTraits

/// Two mounted devices whose cloud folders are carried between them as a file-sync tool
/// (Syncthing) carries them: each file whole, under a temporary name then renamed, in the
/// order the test picks.
@Suite(.serialized, .scratchFolders) struct CarriedCloudMountTests {
    struct Carried {
        let a: ShelfCLI
        let b: ShelfCLI
        let cloudA: String
        let cloudB: String

        /// Copies the files of cloud folder `from` that `to` lacks and `pick` picks (by path).
        func carry(from: String, to: String, only pick: (String) -> Bool = { _ in true }) throws {
            let manager = FileManager.default
            for path in (manager.subpaths(atPath: from) ?? []).sorted() where pick(path) {
                guard !path.split(separator: "/").contains(where: { $0.hasPrefix(".") }) else { continue }
                var isFolder: ObjCBool = false
                guard manager.fileExists(atPath: from + "/" + path, isDirectory: &isFolder), !isFolder.boolValue,
                      !manager.fileExists(atPath: to + "/" + path) else { continue }
                let target = URL(fileURLWithPath: to + "/" + path)
                try manager.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                let temporary = target.deletingLastPathComponent().appendingPathComponent(".syncthing.\(target.lastPathComponent).tmp")
                try manager.copyItem(atPath: from + "/" + path, toPath: temporary.path)
                guard rename(temporary.path, target.path) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            }
        }

        /// The batch files in cloud folder `cloud`.
        static func batches(in cloud: String) -> Set<String> {
            Set((FileManager.default.subpaths(atPath: cloud + "/log") ?? []).filter { $0.hasSuffix(".json") && !$0.contains("/.") })
        }

        /// Waits until A has pushed a batch that was not in its cloud folder before `change`.
        func pushedOnA(_ change: () throws -> Void) throws {
            let before = Self.batches(in: cloudA)
            try change()
            try #require(eventually(within: .seconds(15)) { !Self.batches(in: cloudA).subtracting(before).isEmpty },
                         "A pushed nothing")
        }
    }

    /// A linked to cloud folder A, B to cloud folder B which the carrier filled from A first;
    /// both mounted while `body` runs.
    func withCarriedDevices(_ body: (Carried, _ mountA: String, _ mountB: String) throws -> Void) throws {
        let a = try ShelfCLI()
        let b = try ShelfCLI()
        let carried = Carried(a: a, b: b, cloudA: a.scratch.appendingPathComponent("cloud").path,
                              cloudB: b.scratch.appendingPathComponent("cloud").path)
        try #require(try a.run("init", a.library.path).status == 0)
        try #require(try b.run("init", b.library.path).status == 0)
        try #require(try a.run("cloud", "link", carried.cloudA, "--device", "laptop").status == 0)
        try carried.carry(from: carried.cloudA, to: carried.cloudB)
        let joined = try b.run("cloud", "link", carried.cloudB, "--device", "desk")
        try #require(joined.status == 0, "\(joined.stderr)")
        try carried.carry(from: carried.cloudB, to: carried.cloudA)
        try a.withMount { mountA in try b.withMount { mountB in try body(carried, mountA, mountB) } }
    }

    /// `--join` never makes a cloud: it waits, says so, and says what to check when none came.
    @Test func joiningACloudThatNeverArrivesLinksNothingAndSaysWhy() throws {
        let b = try ShelfCLI()
        let cloud = b.scratch.appendingPathComponent("cloud").path
        try FileManager.default.createDirectory(atPath: cloud + "/.stfolder", withIntermediateDirectories: true)
        try #require(try b.run("init", b.library.path).status == 0)
        let joined = try b.run("cloud", "link", cloud, "--device", "desk", "--join", "--wait", "0.5")
        #expect(joined.status != 0)
        #expect(joined.stderr.contains("waiting for the cloud to arrive"), "\(joined.stderr)")
        #expect(joined.stderr.contains("no Shelf cloud arrived at \(cloud)") && joined.stderr.contains("drop --join"), "\(joined.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: cloud) == [".stfolder"])
        #expect(try b.run("status").stdout.contains("not linked"))
    }

    enum Order: String, CaseIterable, Sendable {
        case batchFirst, contentFirst
    }

    /// A note B has read keeps reading its old bytes while the new ones travel, whichever
    /// arrives first, and watchers hear of the change once, when the new bytes can be read.
    @Test(arguments: Order.allCases)
    func aNoteKeepsItsBytesWhileTheNewOnesTravelAndIsAnnouncedOnce(order: Order) throws {
        try withCarriedDevices { carried, mountA, mountB in
            let path = "Notes/Shared.md"
            let first = Data("The first words.\n".utf8)
            let second = Data("The second words, longer than the first.\n".utf8)
            try carried.pushedOnA { try first.write(to: URL(fileURLWithPath: mountA + "/" + path)) }
            try carried.carry(from: carried.cloudA, to: carried.cloudB)
            try #require(eventually(within: .seconds(10)) { FileManager.default.contents(atPath: mountB + "/" + path) == first })

            let watcher = try InotifyWatcher(mountB + "/Notes", for: "modify,close_write", scratch: carried.b.scratch)
            defer { watcher.stop() }
            func heard(_ event: String) -> Int { watcher.count(event, endingWith: path) }

            try carried.pushedOnA { try second.write(to: URL(fileURLWithPath: mountA + "/" + path)) }
            try carried.carry(from: carried.cloudA, to: carried.cloudB, only: { $0.hasPrefix(order == .batchFirst ? "log/" : "content/") })
            if order == .batchFirst {
                #expect(try eventually(within: .seconds(10)) {
                    try carried.b.run("cloud", "status").stdout.contains("waiting for content")
                }, "B did not hold the change back for its bytes")
            }
            #expect(FileManager.default.contents(atPath: mountB + "/" + path) == first, "the old bytes, not EIO")
            #expect(heard("CLOSE_WRITE") == 0)

            try carried.carry(from: carried.cloudA, to: carried.cloudB)
            #expect(eventually(within: .seconds(10)) { heard("CLOSE_WRITE") == 1 })
            // Announced only once the new bytes can be read.
            #expect(FileManager.default.contents(atPath: mountB + "/" + path) == second)
            #expect(heard("CLOSE_WRITE") == 1)
            #expect(heard("MODIFY") == 1)
        }
    }

    /// Files and folders made on A — at the root, beside the notes, in a new folder, a new
    /// shelf, a note in a new folder — show in B's listings as soon as they arrive, though B
    /// listed those folders before.
    @Test func filesAndFoldersMadeOnTheOtherDeviceAreListedAtOnce() throws {
        try withCarriedDevices { carried, mountA, mountB in
            let manager = FileManager.default
            for folder in ["", "/Notes", "/Books"] { _ = try manager.contentsOfDirectory(atPath: mountB + folder) }

            try Data([0x89, 0x50, 0x4E, 0x47]).write(to: URL(fileURLWithPath: mountA + "/Notes/att.png"))
            try Data("at the root\n".utf8).write(to: URL(fileURLWithPath: mountA + "/root.txt"))
            try manager.createDirectory(atPath: mountA + "/Notes/Folder", withIntermediateDirectories: true)
            try Data("inside\n".utf8).write(to: URL(fileURLWithPath: mountA + "/Notes/Folder/inside.txt"))
            try manager.createDirectory(atPath: mountA + "/Books/Shelf", withIntermediateDirectories: true)
            try manager.createDirectory(atPath: mountA + "/Notes/Sub", withIntermediateDirectories: true)
            try Data("A note in a new folder.\n".utf8).write(to: URL(fileURLWithPath: mountA + "/Notes/Sub/New note.md"))

            let expected: [(folder: String, name: String)] = [
                ("", "root.txt"), ("/Notes", "att.png"), ("/Notes", "Folder"), ("/Notes/Folder", "inside.txt"),
                ("/Books", "Shelf"), ("/Notes", "Sub"), ("/Notes/Sub", "New note.md"),
            ]
            // The carrier runs as a file-sync tool does, until everything is there.
            let listed = try eventually(within: .seconds(20)) {
                try carried.carry(from: carried.cloudA, to: carried.cloudB)
                return expected.allSatisfy { ((try? manager.contentsOfDirectory(atPath: mountB + $0.folder)) ?? []).contains($0.name) }
            }
            let missing = expected.filter { !((try? manager.contentsOfDirectory(atPath: mountB + $0.folder)) ?? []).contains($0.name) }
            #expect(listed, "not listed on B: \(missing.map { $0.folder + "/" + $0.name })")
            #expect(manager.contents(atPath: mountB + "/Notes/Folder/inside.txt") == Data("inside\n".utf8))
        }
    }
}
