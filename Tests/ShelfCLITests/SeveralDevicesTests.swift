import Foundation
import Testing
import TestSupport
import TestTraits

/// Two libraries ("devices") on this machine linked to one cloud folder, through the CLI and
/// their mounts, as a person with a laptop and a desktop would use them.
@Suite(.serialized, .scratchFolders) struct SeveralDevicesTests {
    /// Two devices: `a` with the sample library, `b` empty, and a cloud folder beside them.
    func withTwoDevices(_ body: (_ a: ShelfCLI, _ b: ShelfCLI, _ cloud: String) throws -> Void) throws {
        let a = try ShelfCLI()
        let b = try ShelfCLI()
        let cloud = a.scratch.appendingPathComponent("cloud").path
        try a.run("init", a.library.path)
        try a.run("import", ShelfCLI.samples.appendingPathComponent("library").path)
        try b.run("init", b.library.path)
        try body(a, b, cloud)
    }

    /// Both mounted; the mounts are always taken down.
    func withBothMounted(_ a: ShelfCLI, _ b: ShelfCLI, _ body: (_ mountA: String, _ mountB: String) throws -> Void) throws {
        try a.withMount { mountA in try b.withMount { mountB in try body(mountA, mountB) } }
    }

    @Test func linkingBringsEveryItemAndBothExportsMatch() throws {
        try withTwoDevices { a, b, cloud in
            let linkedA = try a.run("cloud", "link", cloud, "--device", "laptop")
            #expect(linkedA.status == 0, "\(linkedA.stderr)")
            let linkedB = try b.run("cloud", "link", cloud, "--device", "desk")
            #expect(linkedB.status == 0, "\(linkedB.stderr)")
            #expect(linkedB.stdout.contains("as desk"))

            let exports = [a, b].map { $0.scratch.appendingPathComponent("export").path }
            for (cli, folder) in zip([a, b], exports) { try cli.run("export", folder) }
            let filesA = try Self.files(under: exports[0])
            #expect(!filesA.isEmpty)
            #expect(filesA == (try Self.files(under: exports[1])))

            let status = try b.run("cloud", "status", "--json")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
            #expect(json["cloud"] as? String == cloud)
            #expect(json["device"] as? String == "desk")
            #expect(json["online"] as? Bool == true)
            #expect(json["pendingUploads"] as? Int == 0)
            #expect(json["lastSync"] != nil)
        }
    }

    @Test func unlinkDownloadsEveryPlaceholderFirstOrRefusesAndSaysWhy() throws {
        try withTwoDevices { a, b, cloud in
            try a.run("cloud", "link", cloud, "--device", "laptop")
            try b.run("cloud", "link", cloud, "--device", "desk")
            try FileManager.default.moveItem(atPath: cloud, toPath: cloud + "-away")
            let refused = try b.run("cloud", "unlink")
            #expect(refused.status != 0 && refused.stderr.contains("not unlinked"), "\(refused.stderr)")
            #expect(try b.run("cloud", "status").status == 0, "still linked")

            try FileManager.default.moveItem(atPath: cloud + "-away", toPath: cloud)
            let unlinked = try b.run("cloud", "unlink")
            #expect(unlinked.status == 0, "\(unlinked.stderr)")
            #expect(try b.run("status").stdout.contains("not linked"))
            // Every item is here with its bytes, the cloud no longer needed.
            try FileManager.default.removeItem(atPath: cloud)
            let exports = [a, b].map { $0.scratch.appendingPathComponent("export").path }
            for (cli, folder) in zip([a, b], exports) { try #require(try cli.run("export", folder).status == 0) }
            #expect(try Self.files(under: exports[0]) == (try Self.files(under: exports[1])))
        }
    }

    @Test func aFolderThatHoldsSomethingElseIsNotTurnedIntoACloud() throws {
        try withTwoDevices { a, _, cloud in
            try FileManager.default.createDirectory(atPath: cloud, withIntermediateDirectories: true)
            try Data("mine".utf8).write(to: URL(fileURLWithPath: cloud + "/taxes.pdf"))
            let result = try a.run("cloud", "link", cloud)
            #expect(result.status != 0)
            #expect(result.stderr.contains("holds files but no Shelf cloud"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: cloud) == ["taxes.pdf"])
            #expect(try a.run("status").stdout.contains("not linked"))

            // A mounted library is linked once unmounted: its mount decides to sync when it starts.
            try FileManager.default.removeItem(atPath: cloud)
            try a.withMount { mountpoint in
                let mounted = try a.run("cloud", "link", cloud)
                #expect(mounted.status != 0 && mounted.stderr.contains("mounted at \(mountpoint)"), "\(mounted.stderr)")
            }
            #expect(try a.run("cloud", "link", cloud).status == 0)
        }
    }

    @Test func changesOnOneMountAppearOnTheOther() throws {
        try withTwoDevices { a, b, cloud in
            try a.run("cloud", "link", cloud, "--device", "laptop")
            try b.run("cloud", "link", cloud, "--device", "desk")
            try withBothMounted(a, b) { mountA, mountB in
                let bytes = Data("A note written on the laptop.\nNo frontmatter.\n".utf8)
                try ShelfCLI.expectArrives(bytes, at: "Notes/From the laptop.md", from: mountA, on: mountB,
                                           within: .seconds(10))

                let edited = Data("Edited on the desk.\n".utf8)
                try ShelfCLI.expectArrives(edited, at: "Notes/From the laptop.md", from: mountB, on: mountA,
                                           within: .seconds(10))

                try FileManager.default.moveItem(atPath: mountA + "/Notes/From the laptop.md",
                                                 toPath: mountA + "/Notes/Renamed.md")
                #expect(eventually(within: .seconds(10)) {
                    FileManager.default.contents(atPath: mountB + "/Notes/Renamed.md") == edited
                        && !FileManager.default.fileExists(atPath: mountB + "/Notes/From the laptop.md")
                })

                // Plain files too: an attachment in a folder of its own.
                let picture = Data((0..<4096).map { UInt8($0 % 253) })
                try FileManager.default.createDirectory(atPath: mountA + "/Notes/attachments", withIntermediateDirectories: true)
                try ShelfCLI.expectArrives(picture, at: "Notes/attachments/map.png", from: mountA, on: mountB,
                                           within: .seconds(10))

                // `shelf sync` on a mounted library asks the mount's own engine for the round.
                let synced = try b.run("sync")
                #expect(synced.status == 0 && synced.stdout.contains("through the mount"), "\(synced)")

                try FileManager.default.removeItem(atPath: mountB + "/Notes/Renamed.md")
                #expect(eventually(within: .seconds(10)) {
                    !FileManager.default.fileExists(atPath: mountA + "/Notes/Renamed.md")
                })
                #expect(try a.run("trash", "list").stdout.contains("Notes/Renamed.md"))
            }
        }
    }

    @Test func aNewDeviceListsPlaceholdersAtOnceAndReadingDownloadsExactBytes() throws {
        try withTwoDevices { a, b, cloud in
            // A cloud of a thousand items and more.
            let vault = a.scratch.appendingPathComponent("vault")
            try FileManager.default.createDirectory(at: vault.appendingPathComponent("Notes/Many"), withIntermediateDirectories: true)
            for number in 1...1000 {
                try Data("Note \(number)\n\(String(repeating: "x", count: number))\n".utf8)
                    .write(to: vault.appendingPathComponent("Notes/Many/Note \(number).md"))
            }
            try #require(try a.run("import", vault.path).status == 0)
            try a.run("cloud", "link", cloud, "--device", "laptop")
            try b.run("cloud", "link", cloud, "--device", "desk")
            let note = "Notes/Stoic themes.md"
            let original = Data(try a.run("show", note).stdout.utf8)
            let status = try b.run("cloud", "status", "--json")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
            #expect((json["notDownloaded"] as? Int ?? 0) > 1000)

            try withBothMounted(a, b) { mountA, mountB in
                // Every item listed at once with its true size, nothing downloaded by listing.
                let many = try FileManager.default.contentsOfDirectory(atPath: mountB + "/Notes/Many")
                #expect(many.count == 1000)
                for name in many {
                    let sizeB = try FileManager.default.attributesOfItem(atPath: mountB + "/Notes/Many/" + name)[.size] as? Int
                    let sizeA = try FileManager.default.attributesOfItem(atPath: mountA + "/Notes/Many/" + name)[.size] as? Int
                    #expect(sizeB == sizeA, "\(name)")
                }
                let listed = try b.run("cloud", "status", "--json")
                #expect(listed.stdout.contains("\"downloads\" : 0"), "listing downloads nothing: \(listed.stdout)")
                #expect(FileManager.default.contents(atPath: mountB + "/Notes/Many/Note 777.md")
                        == FileManager.default.contents(atPath: mountA + "/Notes/Many/Note 777.md"))

                let path = mountB + "/" + note
                var info = stat()
                #expect(stat(path, &info) == 0)
                #expect(Int(info.st_size) == original.count, "the true size before any download")
                #expect(info.st_blocks == 0)
                #expect(try Self.attribute("user.shelf.download", of: path, cli: b) == "not-downloaded")

                // Fifty readers at once: one download, every reader gets the bytes.
                let readers = try b.tool("python3", "-c", """
                    import sys, threading
                    path, count = sys.argv[1], 50
                    results = [None] * count
                    def read(i):
                        with open(path, "rb") as f: results[i] = f.read()
                    threads = [threading.Thread(target=read, args=(i,)) for i in range(count)]
                    for t in threads: t.start()
                    for t in threads: t.join()
                    sys.stdout.buffer.write(results[0])
                    if len(set(results)) != 1: raise SystemExit("readers saw different bytes")
                    """, path, timeout: .seconds(30))
                #expect(readers.status == 0, "\(readers.stderr)")
                #expect(Data(readers.stdout.utf8) == original)
                let counted = try b.run("cloud", "status", "--json")
                let mountStatus = try #require(try JSONSerialization.jsonObject(with: Data(counted.stdout.utf8)) as? [String: Any])
                #expect(mountStatus["downloads"] as? Int == 2, "one download for Note 777, one for fifty readers: \(counted.stdout)")
                #expect(mountStatus["uploads"] as? Int == 0)
                #expect(FileManager.default.contents(atPath: mountB + "/.shelf/sync.json").map { String(decoding: $0, as: UTF8.self) }?
                            .contains("\"device\" : \"desk\"") == true)
                #expect(try Self.attribute("user.shelf.download", of: path, cli: b) == "downloaded")
                #expect(eventually(within: .seconds(10)) { stat(path, &info) == 0 && info.st_blocks > 0 })
            }
        }
    }

    @Test func aPlaceholderReadWithTheCloudGoneFailsWithEIOAndSaysWhy() throws {
        try withTwoDevices { a, b, cloud in
            try a.run("cloud", "link", cloud, "--device", "laptop")
            try b.run("cloud", "link", cloud, "--device", "desk")
            try FileManager.default.moveItem(atPath: cloud, toPath: cloud + "-away")
            try b.withMount("--download-timeout", "2s") { mount in
                let path = mount + "/Notes/Stoic themes.md"
                let started = ContinuousClock.now
                // Three readers in turn, each failing; the kernel tries each failed read once more.
                let read = try b.tool("python3", "-c", """
                    import errno, sys
                    for _ in range(3):
                        try:
                            open(sys.argv[1], "rb").read()
                        except OSError as error:
                            print(errno.errorcode[error.errno])
                    """, path, timeout: .seconds(60))
                #expect(read.stdout.split(separator: "\n") == ["EIO", "EIO", "EIO"])
                #expect(ContinuousClock.now - started < .seconds(36))
                // One line in the mount's log for all of them, not one or two per read.
                let log = try String(contentsOf: b.library.appendingPathComponent("logs/mount.log"), encoding: .utf8)
                #expect(log.split(separator: "\n").filter { $0.contains("cannot download") }.count == 1, "\(log)")
                let error = try Self.attribute("user.shelf.error", of: path, cli: b)
                #expect(error.contains("not there"), "the cause: \(error)")
                #expect(try Self.attribute("user.shelf.download", of: path, cli: b) == "error")

                // Edits wait; nothing is deleted; once the folder is back, the bytes come.
                try FileManager.default.moveItem(atPath: cloud + "-away", toPath: cloud)
                #expect(eventually(within: .seconds(10)) {
                    FileManager.default.contents(atPath: path).map { !$0.isEmpty } ?? false
                })
            }
        }
    }

    @Test func watchersOfTheOtherMountHearOfEveryChange() throws {
        try withTwoDevices { a, b, cloud in
            try a.run("cloud", "link", cloud, "--device", "laptop")
            try b.run("cloud", "link", cloud, "--device", "desk")
            try withBothMounted(a, b) { mountA, mountB in
                let watcher = try InotifyWatcher(mountB, for: "create,modify,close_write,moved_from,moved_to,delete",
                                                 recursive: true, scratch: b.scratch)
                defer { watcher.stop() }
                func heard(_ event: String, _ path: String) -> Bool {
                    eventually(within: .seconds(10)) { watcher.count(event, endingWith: path) > 0 }
                }

                try Data("new\n".utf8).write(to: URL(fileURLWithPath: mountA + "/Notes/Fresh.md"))
                #expect(heard("CREATE", "Notes/Fresh.md"))

                try Data("changed\n".utf8).write(to: URL(fileURLWithPath: mountA + "/Notes/Fresh.md"))
                #expect(heard("MODIFY", "Notes/Fresh.md"))
                #expect(heard("CLOSE_WRITE", "Notes/Fresh.md"))
                #expect(FileManager.default.contents(atPath: mountB + "/Notes/Fresh.md") == Data("changed\n".utf8))

                try FileManager.default.moveItem(atPath: mountA + "/Notes/Fresh.md", toPath: mountA + "/Notes/Moved.md")
                #expect(heard("MOVED_FROM", "Notes/Fresh.md"))
                #expect(heard("MOVED_TO", "Notes/Moved.md"))

                try FileManager.default.removeItem(atPath: mountA + "/Notes/Moved.md")
                #expect(heard("DELETE", "Notes/Moved.md"))

                // Folders and plain files too (a shelf, an attachment beside the notes).
                try FileManager.default.createDirectory(atPath: mountA + "/Books/To read", withIntermediateDirectories: true)
                #expect(heard("CREATE,ISDIR", "Books/To read"))
                try Data([0x89, 0x50, 0x4E, 0x47]).write(to: URL(fileURLWithPath: mountA + "/Notes/map.png"))
                #expect(heard("CREATE", "Notes/map.png"))
                try Data([0x89, 0x50, 0x4E, 0x47, 0x0D]).write(to: URL(fileURLWithPath: mountA + "/Notes/map.png"))
                #expect(heard("MODIFY", "Notes/map.png"))
                #expect(eventually(within: .seconds(10)) {
                    FileManager.default.contents(atPath: mountB + "/Notes/map.png") == Data([0x89, 0x50, 0x4E, 0x47, 0x0D])
                })

                // The announcements changed nothing: no echo, no conflict, nothing pending.
                #expect(FileManager.default.contents(atPath: mountB + "/Notes/Moved.md") == nil)
                let listing = try FileManager.default.contentsOfDirectory(atPath: mountB + "/Notes")
                #expect(!listing.contains { $0.contains("conflict") }, "\(listing)")
                #expect(try eventually(within: .seconds(10)) { try b.run("cloud", "status").stdout.contains("Waiting to upload: 0") })
            }
        }
    }

    /// Both kinds of lock a program can take, `flock` and an `fcntl` record lock (what
    /// `lockf` and most editors' lock files use), held on B's copy: A's change is held back,
    /// and B's status says so, until the lock goes.
    @Test(arguments: ["flock", "lockf"])
    func aLockHeldOnTheOtherMountDefersTheRemoteUpdateUntilReleased(lock: String) throws {
        try withTwoDevices { a, b, cloud in
            try a.run("cloud", "link", cloud, "--device", "laptop")
            try b.run("cloud", "link", cloud, "--device", "desk")
            try withBothMounted(a, b) { mountA, mountB in
                let note = "/Notes/Locked.md"
                try Data("first\n".utf8).write(to: URL(fileURLWithPath: mountA + note))
                #expect(eventually(within: .seconds(10)) {
                    FileManager.default.contents(atPath: mountB + note) == Data("first\n".utf8)
                })

                // A program on B takes an flock on its copy and holds it until `release` appears.
                let release = b.scratch.appendingPathComponent("release").path
                let held = b.scratch.appendingPathComponent("held").path
                let holder = Process()
                holder.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
                holder.arguments = ["-c", """
                    import fcntl, os, sys, time
                    f = open(sys.argv[1], "r+b")
                    fcntl.\(lock)(f, fcntl.LOCK_EX)
                    open(sys.argv[2], "w").close()
                    for _ in range(600):
                        if os.path.exists(sys.argv[3]): break
                        time.sleep(0.05)
                    """, mountB + note, held, release]
                try holder.run()
                defer { kill(holder.processIdentifier, SIGKILL) }
                #expect(eventually(within: .seconds(10)) { FileManager.default.fileExists(atPath: held) })

                try Data("second\n".utf8).write(to: URL(fileURLWithPath: mountA + note))
                // B has the change and holds it back, and says so (not merely slow to sync).
                #expect(try eventually(within: .seconds(10)) {
                    try b.run("cloud", "status").stdout.contains("changes of Notes/Locked.md wait: a program holds them")
                })
                #expect(FileManager.default.contents(atPath: mountB + note) == Data("first\n".utf8),
                        "held back while locked")

                try Data().write(to: URL(fileURLWithPath: release))
                #expect(eventually(within: .seconds(10)) {
                    FileManager.default.contents(atPath: mountB + note) == Data("second\n".utf8)
                })
            }
        }
    }

    @Test func pinningThroughTheMountDownloadsAndEvictingALockedFileIsRefused() throws {
        try withTwoDevices { a, b, cloud in
            try a.run("cloud", "link", cloud, "--device", "laptop")
            try b.run("cloud", "link", cloud, "--device", "desk")
            try withBothMounted(a, b) { _, mountB in
                let path = mountB + "/Notes/Stoic themes.md"
                #expect(try Self.attribute("user.shelf.download", of: path, cli: b) == "not-downloaded")
                #expect(try b.tool("setfattr", "-n", "user.shelf.pin", "-v", "1", path).status == 0)
                #expect(try eventually(within: .seconds(10)) {
                    try Self.attribute("user.shelf.download", of: path, cli: b) == "downloaded"
                })
                #expect(try Self.attribute("user.shelf.pin", of: path, cli: b) == "1")
                let pinned = try b.run("evict", path)
                #expect(pinned.status != 0 && pinned.stderr.contains("pinned"), "\(pinned.stderr)")

                #expect(try b.run("unpin", path).status == 0)
                let locked = try b.tool("flock", path, ShelfCLI.executable.path, "evict", path, "--library", b.library.path)
                #expect(locked.status != 0 && locked.stderr.contains("EBUSY"), "\(locked.stderr)")
                #expect(try Self.attribute("user.shelf.download", of: path, cli: b) == "downloaded")

                let evicted = try b.run("evict", path)
                #expect(evicted.status == 0, "\(evicted.stderr)")
                #expect(try eventually(within: .seconds(10)) {
                    try Self.attribute("user.shelf.download", of: path, cli: b) == "not-downloaded"
                })
                #expect(FileManager.default.contents(atPath: path) == Data(try a.run("show", "Notes/Stoic themes.md").stdout.utf8))
            }
        }
    }

    static func attribute(_ name: String, of path: String, cli: ShelfCLI) throws -> String {
        try cli.tool("getfattr", "--only-values", "-n", name, path).stdout
    }

    /// Relative path → bytes of every file under `folder`.
    static func files(under folder: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for path in FileManager.default.subpaths(atPath: folder) ?? [] {
            var isFolder: ObjCBool = false
            let full = folder + "/" + path
            if FileManager.default.fileExists(atPath: full, isDirectory: &isFolder), !isFolder.boolValue {
                files[path] = FileManager.default.contents(atPath: full)
            }
        }
        return files
    }
}

/// `kill -9` of `shelf` in the middle of pushing and of downloading: the next run resumes,
/// and both devices end with the same files, none lost, none twice.
@Suite(.serialized, .scratchFolders) struct SyncCrashTests {
    @Test func killedMidPushAndMidDownloadBothConverge() throws {
        let count = 2000
        let a = try ShelfCLI()
        let b = try ShelfCLI()
        let cloud = a.scratch.appendingPathComponent("cloud").path
        let source = a.scratch.appendingPathComponent("vault")
        try FileManager.default.createDirectory(at: source.appendingPathComponent("Notes"), withIntermediateDirectories: true)
        for number in 1...count {
            let text = "Note \(number)\n" + String(repeating: "A line of the note number \(number).\n", count: 40)
            try Data(text.utf8).write(to: source.appendingPathComponent("Notes/Note \(number).md"))
        }
        try a.run("init", a.library.path)
        try #require(try a.run("import", source.path).status == 0)

        // Killed while linking (its first sync pushes every item), once the first notes' bytes
        // are in the cloud: the push is under way, with uploads still waiting.
        let linking = try Self.killed(a, ["cloud", "link", cloud, "--device", "a", "--library", a.library.path]) {
            !Self.contentFiles(in: cloud).isEmpty
        }
        let status = try a.run("cloud", "status", "--json")
        let pending = (try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["pendingUploads"] as? Int
        let interrupted = linking && (pending ?? 0) > 0
        #expect(interrupted, "no kill landed in the middle of the push")
        let finished = try a.run("sync")
        try #require(finished.status == 0, "\(finished.stderr)")
        #expect(try a.run("cloud", "status").stdout.contains("Waiting to upload: 0"))

        try b.run("init", b.library.path)
        try #require(try b.run("cloud", "link", cloud, "--device", "b").status == 0)
        // Killed while downloading, once some notes are stored (256 to a transaction) and
        // others not yet.
        func notDownloaded() throws -> Int {
            let status = try b.run("cloud", "status", "--json")
            return try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])["notDownloaded"] as? Int ?? -1
        }
        let before = try notDownloaded()
        let downloading = try Self.killed(b, ["download", "--all", "--library", b.library.path]) {
            ((try? notDownloaded()) ?? before) < before
        }
        let after = try notDownloaded()
        let midDownload = downloading && after < before && after > 0
        #expect(midDownload, "no kill landed in the middle of the downloads")
        let downloaded = try b.run("download", "--all")
        #expect(downloaded.status == 0, "\(downloaded.stderr)")

        let exports = [a, b].map { $0.scratch.appendingPathComponent("export").path }
        for (cli, folder) in zip([a, b], exports) { try #require(try cli.run("export", folder).status == 0) }
        let filesA = try SeveralDevicesTests.files(under: exports[0])
        #expect(filesA.keys.filter { $0.hasSuffix(".md") }.count == count)
        #expect(filesA == (try SeveralDevicesTests.files(under: exports[1])))
        #expect(!filesA.keys.contains { $0.contains("conflict") })
    }

    /// `kill -9` inside a pull: a device linking reads the other's log, and its batch file is
    /// held in the cloud (a named pipe) so the kill lands while the pull reads it. The next
    /// sync brings everything, once.
    @Test func killedMidPullResumesAndConverges() throws {
        let a = try ShelfCLI()
        let b = try ShelfCLI()
        let cloud = a.scratch.appendingPathComponent("cloud").path
        try a.run("init", a.library.path)
        try #require(try a.run("import", ShelfCLI.samples.appendingPathComponent("library").path).status == 0)
        try #require(try a.run("cloud", "link", cloud, "--device", "a").status == 0)
        try b.run("init", b.library.path)

        let batch = try #require(FileManager.default.subpaths(atPath: cloud + "/log")?.first { $0.hasSuffix(".json") })
        let gate = try FileGate(replacing: cloud + "/log/" + batch)
        let killed = try b.killWhileHeld(at: gate, "cloud", "link", cloud, "--device", "b", "--download", "all",
                                         "--library", b.library.path)
        #expect(Self.wasKilled(killed), "\(killed)")
        let synced = try b.run("sync")
        #expect(synced.status == 0, "\(synced)")
        let status = try b.run("cloud", "status", "--json")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        #expect(json["notDownloaded"] as? Int == 0, "\(status.stdout)")

        let exports = [a, b].map { $0.scratch.appendingPathComponent("export").path }
        for (cli, folder) in zip([a, b], exports) { try #require(try cli.run("export", folder).status == 0) }
        let filesA = try SeveralDevicesTests.files(under: exports[0])
        #expect(!filesA.isEmpty)
        #expect(filesA == (try SeveralDevicesTests.files(under: exports[1])))
    }

    /// The content files of the folder cloud at `cloud` (`content/XX/HASH`), sorted.
    static func contentFiles(in cloud: String) -> [String] {
        let root = cloud + "/content"
        return (FileManager.default.subpaths(atPath: root) ?? []).filter { $0.split(separator: "/").count == 2 }
            .sorted().map { root + "/" + $0 }
    }

    /// `timeout -s KILL` kills its group, itself included: 9 (killed by the signal) or 137.
    static func wasKilled(_ result: CommandResult) -> Bool {
        result.status == SIGKILL || result.status == 128 + SIGKILL
    }

    /// Runs `shelf arguments` with `cli`'s environment and kills it with SIGKILL as soon as
    /// `isUnderWay` holds; whether it was killed (it had not ended by itself first).
    static func killed(_ cli: ShelfCLI, _ arguments: [String], once isUnderWay: @escaping () -> Bool) throws -> Bool {
        let process = Process()
        process.executableURL = ShelfCLI.executable
        process.arguments = arguments
        process.environment = cli.environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let underWay = eventually(within: .seconds(30)) { isUnderWay() || !process.isRunning }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        #expect(eventually(within: .seconds(30)) { !process.isRunning }, "shelf \(arguments[0]) ended")
        return underWay && process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
    }
}
