import Foundation
import Synchronization
import ShelfModel
import ShelfStore
import Testing
import TestDevices
import TestSupport
import TestTraits
@testable import ShelfSync

@Suite(.scratchFolders) struct SyncEngineTests {
    @Test(arguments: CloudKind.allCases)
    func anItemMadeOnOneDeviceArrivesOnTheOtherByteForByte(cloud: CloudKind) throws {
        let devices = try Devices(cloud: cloud)
        let a = try devices.device("a")
        let b = try devices.device("b")
        let bytes = "no frontmatter at all\r\nCRLF and a BOM-less é\n"
        let id = try a.write("Notes/Plain.md", bytes)
        try a.store.write { writer in
            _ = try writer.setFileTimes(id: id, modified: Date(timeIntervalSince1970: 1_000_000_000.25), permissions: 0o600)
            try writer.setExtendedAttribute(id: id, name: "user.xdg.tags", value: Data("red".utf8))
        }
        #expect(try a.sync().pushed == 1)
        #expect(try b.sync().pulled == 1)

        // Metadata arrives at once; the bytes stay in the cloud until read.
        let placeholder = try #require(try b.store.summary(id: id))
        #expect(placeholder.isPlaceholder)
        #expect(placeholder.size == bytes.utf8.count)
        #expect(placeholder.path == "Notes/Plain.md")
        #expect(try b.text(id: id) == bytes)
        let record = try #require(try b.store.record(id: id))
        #expect(try b.store.summary(id: id)?.isPlaceholder == false)
        #expect(try b.store.history(id: id).isEmpty, "the placeholder leaves no version behind")
        #expect(record.modified == Date(timeIntervalSince1970: 1_000_000_000.25))
        #expect(record.permissions == 0o600)
        #expect(try b.store.extendedAttributes(id: id) == ["user.xdg.tags": Data("red".utf8)])
        // Nothing echoes back.
        #expect(try b.sync() == SyncEngine.Report())
        #expect(try a.sync() == SyncEngine.Report())
    }

    @Test(arguments: CloudKind.allCases)
    func editsRenamesDeletesAndRestoresTravelBothWays(cloud: CloudKind) throws {
        let devices = try Devices(cloud: cloud)
        let a = try devices.device("a")
        let b = try devices.device("b")
        let id = try a.write("Books/Dune.md", "---\ntitle: Dune\n---\n# Dune\n")
        try devices.settle(a, b)

        _ = try b.write("Books/Dune.md", "---\ntitle: Dune\nauthor: Frank Herbert\n---\n# Dune\n")
        try devices.settle(b, a)
        #expect(try a.text("Books/Dune.md") == "---\ntitle: Dune\nauthor: Frank Herbert\n---\n# Dune\n")

        _ = try a.store.move(id: id, to: "Books/Dune (1965).md")
        try devices.settle(a, b)
        #expect(try b.store.record(id: id)?.path == "Books/Dune (1965).md")
        #expect(try b.text("Books/Dune.md") == nil)

        try b.store.trash(id: id)
        try devices.settle(b, a)
        #expect(try a.store.record(id: id) == nil)
        #expect(try a.store.trashedItems().map(\.id) == [id])

        _ = try a.store.restore(id: id)
        try devices.settle(a, b)
        #expect(try b.store.record(id: id)?.path == "Books/Dune (1965).md")
        #expect(try a.files() == b.files())
    }

    @Test(arguments: CloudKind.allCases)
    func invalidFilesTravelAsDrafts(cloud: CloudKind) throws {
        let devices = try Devices(cloud: cloud)
        let a = try devices.device("a")
        let b = try devices.device("b")
        let broken = "---\ntitle: [unclosed\n---\nbody\n"
        let id = try a.write("Notes/Broken.md", broken)
        try devices.settle(a, b)
        #expect(try b.text(id: id) == broken)
        #expect(try b.store.record(id: id)?.draftDiagnostics != nil)
    }

    @Test(arguments: CloudKind.allCases)
    func editsOfTheSameLineKeepTheNewestAndOneConflictCopyOnBothDevices(cloud: CloudKind) throws {
        let devices = try Devices(cloud: cloud)
        let a = try devices.device("a")
        let b = try devices.device("b")
        let id = try a.write("Notes/Plan.md", "one\ntwo\n")
        try devices.settle(a, b)

        let now = Date()
        _ = try a.write("Notes/Plan.md", "one\nTWO from a\n", modified: now)
        _ = try b.write("Notes/Plan.md", "one\nTWO from b\n", modified: now.addingTimeInterval(5))
        // Both push before either pulls: two concurrent changes in the cloud.
        #expect(try a.sync().pushed == 1)
        #expect(try b.engine.sync().pulled == 1)
        try devices.settle(a, b)

        for device in [a, b] {
            let files = try device.files()
            #expect(files.count == 2)
            #expect(try device.text(id: id) == "one\nTWO from b\n")
            let copies = files.filter { $0.key.contains("(conflict ") }
            #expect(copies.count == 1)
            #expect(copies.values.first == Data("one\nTWO from a\n".utf8))
        }
        #expect(try a.files() == b.files())
    }

    @Test(arguments: CloudKind.allCases)
    func fiveDevicesRewritingOneNoteAtOnceKeepTheNewestAndOneCopyOfEveryOther(cloud: CloudKind) throws {
        let devices = try Devices(cloud: cloud)
        let fleet = try (0..<5).map { try devices.device("d\($0)") }
        let id = try fleet[0].write("Notes/Contested.md", "nobody yet\n")
        try devices.settle(fleet[0])
        try devices.settle(fleet[1], fleet[2], fleet[3], fleet[4])
        let now = Date()
        for (index, device) in fleet.enumerated() {
            _ = try device.write("Notes/Contested.md", "d\(index) says so\n", modified: now.addingTimeInterval(Double(index)))
        }
        // Each device meets the others' edits in another order: some as pushes already in the
        // cloud, some while rebasing its own edit onto them.
        try devices.settle(fleet[2], fleet[0], fleet[4], fleet[1], fleet[3])

        let files = try fleet[0].files()
        #expect(try fleet[0].text(id: id) == "d4 says so\n", "the newest edit keeps the note")
        let copies = files.filter { $0.key.contains("(conflict ") }
        #expect(copies.values.map { String(decoding: $0, as: UTF8.self) }.sorted() == (0..<4).map { "d\($0) says so\n" },
                "every other edit once, in a copy: \(copies.keys.sorted())")
        for device in fleet.dropFirst() { #expect(try device.files() == files) }
    }

    /// Six devices edit their own lines of shared notes and their own notes, syncing in a seeded
    /// random order through a file-sync tool that delivers late (so pushes cross), each edit on
    /// top of whatever that device has seen: every device ends with the same files, every
    /// device's last line in each shared note, and no conflict copy.
    @Test(arguments: [20261125, 7, 1234] as [UInt64])
    func randomlyInterleavedEditsOnSixDevicesConvergeWithNothingLost(seed: UInt64) throws {
        try InterleavedEdits(seed: seed, devices: 6, steps: 240, deliversInAnyOrder: false).run()
    }

    /// The same through a file-sync tool that delivers some files and not others, in any order:
    /// a device meets changes whose ancestors have not arrived yet, and must wait for them.
    @Test(arguments: [20261125, 7, 1234] as [UInt64])
    func editsDeliveredInAnyOrderConvergeWithNothingLost(seed: UInt64) throws {
        try InterleavedEdits(seed: seed, devices: 6, steps: 240, deliversInAnyOrder: true).run()
    }

    /// `SHELF_SYNC_SOAK=SEEDS` (scripts/soak-sync): many more seeds, devices and steps.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["SHELF_SYNC_SOAK"] != nil))
    func soakOfInterleavedEdits() throws {
        let seeds = UInt64(ProcessInfo.processInfo.environment["SHELF_SYNC_SOAK"] ?? "") ?? 20
        for seed in 1...seeds {
            try InterleavedEdits(seed: seed, devices: 8, steps: 600, deliversInAnyOrder: seed % 2 == 0).run()
        }
    }

    /// A file-sync tool brings c the batch of b's edit before the batch of a's edit that b made
    /// it on top of (or brings a damaged copy of a's first): c holds b's batch back (it would
    /// look concurrent and fork), still pushes its own edits, and takes both in order once a's
    /// arrives whole.
    @Test(arguments: [false, true])
    func aChangeWaitsForTheChangeItWasMadeOnTopOf(damagedFirst: Bool) throws {
        let devices = try Devices(delayed: true)
        let (a, b, c, id) = try devices.threeHolding("Notes/Plan.md", "one\ntwo\n")

        try a.write("Notes/Plan.md", "one\nfrom a\n")
        try a.sync()
        try devices.deliver(only: { _, to in to == "b" })
        #expect(try b.sync().pulled == 1)
        try b.write("Notes/Plan.md", "one\nfrom a\nthree from b\n")
        try b.sync()
        let aLog = "log/" + (try #require(try a.store.cloudLink()).device) + "/"
        try devices.deliver(only: { path, to in to == "c" && !path.hasPrefix(aLog) })
        let aBatches = try FileManager.default.contentsOfDirectory(
            atPath: devices.cloudFolder(for: "a").appendingPathComponent(aLog).path).sorted()
        let damaged = devices.cloudFolder(for: "c").appendingPathComponent(aLog + (try #require(aBatches.last)))
        if damagedFirst {
            try FileManager.default.createDirectory(at: damaged.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("{\"half a file".utf8).write(to: damaged)
        }
        try c.write("Notes/Other.md", "c's own\n")
        let report = try c.sync()
        #expect(report.pulled == 0)
        #expect(report.pushed == 1)
        #expect(try c.text(id: id) == "one\ntwo\n")
        let waiting = try #require(try c.engine.status()?.waiting, "the status says what waits")
        #expect(waiting.contains("changes from b") && waiting.contains(damagedFirst ? "damaged" : "has not arrived"), "\(waiting)")

        if damagedFirst { try FileManager.default.removeItem(at: damaged) }
        try devices.settle(a, b, c)
        #expect(try c.engine.status()?.waiting == nil)
        for device in [a, b, c] {
            #expect(try device.text(id: id) == "one\nfrom a\nthree from b\n")
            #expect(try device.files().keys.filter { $0.contains("(conflict ") }.isEmpty)
            #expect(try device.text("Notes/Other.md") == "c's own\n")
        }
    }

    /// A device's edits are one line: b's edit beats a's outright without being made from it, so
    /// it is pushed as concurrent; a's next edit, written from the buffer that held its first
    /// (as an editor that never reloaded saves), continues a's line — the copy of its first edit
    /// is retired, and only b's, which now loses, is kept aside, once, on every device.
    @Test func aDevicesSuccessiveEditsLeaveOneCopyOfTheLosingLine() throws {
        let devices = try Devices(delayed: true)
        let (a, b, c, id) = try devices.threeHolding("Notes/Plan.md", "one\ntwo\n")
        let now = Date()
        _ = try a.write("Notes/Plan.md", "one\na first\n", modified: now.addingTimeInterval(1))
        #expect(try a.sync().pushed == 1)
        _ = try b.write("Notes/Plan.md", "one\nb once\n", modified: now.addingTimeInterval(2))
        try devices.deliver()
        #expect(try b.sync().pushed == 2, "b's edit, newer, beats a's and is sent, with the copy of a's")
        #expect(try b.text(id: id) == "one\nb once\n")
        try devices.settle(a, c)
        #expect(try a.text(id: id) == "one\nb once\n")

        // a's editor still holds its first edit and saves again on top of it.
        try a.store.write { writer in
            let firstEdit = try #require(try (1...8).reversed().first { try writer.file(id: id, version: $0) == Data("one\na first\n".utf8) })
            _ = try writer.saveFile(Data("one\na again\n".utf8), of: id, kind: .note, at: "Notes/Plan.md", basedOn: nil,
                                    modified: now.addingTimeInterval(3))
            try a.engine.saveWon(id, madeFrom: firstEdit, with: writer)
        }
        try devices.settle(a, b, c)

        try devices.expectAgreed([a, b, c], on: "Notes/Plan.md", reading: "one\na again\n", oneCopyHolding: "one\nb once\n")
    }

    @Test func concurrentEditsPushedBeforeEitherPulledReachTheSameResultEverywhere() throws {
        let devices = try Devices(delayed: true)
        let (a, b, c, id) = try devices.threeHolding("Notes/Plan.md", "one\ntwo\n")

        let now = Date()
        _ = try a.write("Notes/Plan.md", "one\nfrom a\n", modified: now.addingTimeInterval(5))
        _ = try b.write("Notes/Plan.md", "one\nfrom b\n", modified: now)
        // Each pushes into its own copy of the cloud: two concurrent changes, neither seen.
        #expect(try a.sync().pushed == 1)
        #expect(try b.sync().pushed == 1)
        try devices.settle(c, b, a)

        #expect(try a.files() == b.files())
        #expect(try b.files() == c.files())
        // a's file is the newer (as in Syncthing, file times decide, not who synced last): it
        // wins, and b's is kept beside it, once.
        #expect(try c.text(id: id) == "one\nfrom a\n")
        let copies = try c.files().filter { $0.key.contains("(conflict ") }
        #expect(copies.count == 1)
        #expect(copies.values.first == Data("one\nfrom b\n".utf8))
    }

    @Test(arguments: CloudKind.allCases)
    func changesOfABusyItemWaitInOrderAndNothingElseDoes(cloud: CloudKind) throws {
        let devices = try Devices(cloud: cloud)
        let a = try devices.device("a")
        let b = try devices.device("b")
        let held = try a.write("Notes/Held.md", "one\n")
        let free = try a.write("Notes/Free.md", "free\n")
        try devices.settle(a, b)

        let busy = Mutex<Set<ItemID>>([held])
        b.engine.considerBusy { busy.withLock { $0 } }
        _ = try a.write("Notes/Held.md", "two\n")
        try a.sync()
        _ = try a.write("Notes/Held.md", "three\n")
        _ = try a.write("Notes/Free.md", "free again\n")
        try a.sync()
        #expect(try b.sync().pulled == 1, "only the free item's change")
        #expect(try b.text(id: held) == "one\n")
        #expect(try b.engine.status()?.waiting == "changes of Notes/Held.md wait: a program holds them (a lock, or writes not saved yet)")
        #expect(try b.text(id: free) == "free again\n")

        busy.withLock { $0 = [] }
        #expect(try b.sync().pulled == 2, "both held-back changes, in order")
        #expect(try b.text(id: held) == "three\n")
        #expect(try b.sync() == SyncEngine.Report())
        #expect(try b.engine.status()?.waiting == nil)
    }

    /// When the mount cannot tell which files are locked (an unreadable `/proc/locks`), no
    /// change from the cloud goes over any item, and the status says why; they follow, in
    /// order, once it can tell again.
    @Test func changesWaitForEveryItemWhileWhatIsLockedIsUnknown() throws {
        let devices = try Devices()
        let a = try devices.device("a")
        let b = try devices.device("b")
        let id = try a.write("Notes/Any.md", "one\n")
        try devices.settle(a, b)

        let unknown = Mutex<String?>("the lock table cannot be read")
        b.engine.considerBusy { ItemsInUse([], everyItemBecause: unknown.withLock { $0 }) }
        _ = try a.write("Notes/Any.md", "two\n")
        try a.sync()
        #expect(try b.sync().pulled == 0)
        #expect(try b.text(id: id) == "one\n")
        let waiting = try #require(try b.engine.status()?.waiting)
        #expect(waiting.contains("the lock table cannot be read"), "\(waiting)")

        unknown.withLock { $0 = nil }
        #expect(try b.sync().pulled == 1)
        #expect(try b.text(id: id) == "two\n")
        #expect(try b.engine.status()?.waiting == nil)
    }

    @Test(arguments: CloudKind.allCases)
    func evictingFreesTheBytesAndTheNextReadBringsThemBack(cloud: CloudKind) throws {
        let devices = try Devices(cloud: cloud)
        let a = try devices.device("a")
        let id = try a.write("Notes/Evict me.md", "bytes worth keeping\n")
        try a.sync()
        try a.engine.evict(id)
        #expect(try a.store.summary(id: id)?.isPlaceholder == true)
        #expect(try a.store.summary(id: id)?.size == 20)
        #expect(try a.store.history(id: id).isEmpty, "evicted bytes are not kept twice")
        #expect(try a.sync() == SyncEngine.Report(), "an eviction is nothing to tell the cloud")
        #expect(try a.text(id: id) == "bytes worth keeping\n")

        // What may not be evicted stays, with the reason.
        try a.engine.pin(id)
        #expect(throws: EvictError.pinned) { try a.engine.evict(id) }
        try a.engine.pin(id, false)
        _ = try a.write("Notes/Evict me.md", "changed, not uploaded\n")
        #expect(throws: EvictError.notUploaded) { try a.engine.evict(id) }
        try a.sync()
        a.engine.considerBusy { [id] }
        #expect(throws: EvictError.busy) { try a.engine.evict(id) }
        #expect(try a.store.summary(id: id)?.isPlaceholder == false)
    }

    @Test(arguments: CloudKind.allCases)
    func theCacheBudgetEvictsTheLeastRecentlyReadFirst(cloud: CloudKind) throws {
        let devices = try Devices(cloud: cloud)
        let a = try devices.device("a")
        let ids = try (1...3).map { try a.write("Notes/Item \($0).md", String(repeating: "\($0)", count: 100) + "\n") }
        try a.sync()
        let b = try devices.device("b", cacheLimit: 250)
        try b.sync()
        for id in ids { _ = try b.text(id: id) }
        let now = Date()
        b.engine.evictByLastRead { [ids[0]: now, ids[1]: now.addingTimeInterval(-60), ids[2]: now.addingTimeInterval(-30)] }
        try b.engine.pin(ids[1])
        try b.sync()
        // 303 bytes held, 250 allowed: the least recently read item that is not pinned goes.
        #expect(try ids.map { try b.store.summary(id: $0)?.isPlaceholder } == [false, false, true])
        #expect(try b.store.downloadedBytes() <= 250)
    }

    @Test func offlineEditsOfDifferentKeysAndPassagesMergeEverywhere() throws {
        for delayed in [false, true] {
            let devices = try Devices(delayed: delayed)
            let a = try devices.device("a")
            let b = try devices.device("b")
            let book = "---\ntitle: Dune\nrating: 3\n---\n# Dune\n\n## Passages\n\n### Page 1 ^p1\n> Fear is the mind-killer.\n\n"
            let id = try a.write("Books/Dune.md", book)
            try devices.settle(a, b)
            _ = try b.text(id: id)

            _ = try a.write("Books/Dune.md", book.replacingOccurrences(of: "rating: 3", with: "rating: 5")
                + "### Page 2 ^p2\n> I must not fear.\n\n")
            _ = try b.write("Books/Dune.md", book.replacingOccurrences(of: "title: Dune\n", with: "title: Dune\nauthor: Frank Herbert\n")
                + "### Page 3 ^p3\n> The spice must flow.\n\n")
            // Delayed: both push before either sees the other; otherwise b rebases onto a's push.
            try a.sync()
            try b.sync()
            try devices.settle(a, b)

            for device in [a, b] {
                let text = try #require(try device.text(id: id))
                #expect(text.contains("rating: 5") && text.contains("author: Frank Herbert"), "\(text)")
                #expect(text.contains("I must not fear.") && text.contains("The spice must flow."), "\(text)")
                #expect(try !device.files().keys.contains { $0.contains("(conflict ") })
            }
            #expect(try a.files() == b.files())

            // The merge is in the history, and restoring the version before it undoes it everywhere.
            let (merger, other) = delayed ? (a, b) : (b, a)
            #expect(try merger.store.origin(of: id)?.reason == .merge)
            let before = try #require(try merger.store.history(id: id).first { $0.origin?.reason != .merge })
            let undone = try #require(try merger.store.file(id: id, version: before.version))
            _ = try merger.store.write(as: ChangeOrigin(.restore)) {
                try $0.saveFile(undone, of: id, kind: .book, at: "Books/Dune.md", basedOn: nil, modified: Date())
            }
            try devices.settle(merger, other)
            #expect(try other.text(id: id) == String(decoding: undone, as: UTF8.self))
            #expect(try other.store.origin(of: id)?.reason == .sync)
        }
    }

    @Test func twoItemsAtOnePathBothStayWithTheSameNamesOnEveryDevice() throws {
        // A library joining a cloud that has an item at a path it uses too.
        let devices = try Devices()
        let a = try devices.device("a")
        let joining = try devices.library("b")
        _ = try joining.write { try $0.saveFile(Data("b's plan\n".utf8), of: .generate(), kind: .note, at: "Notes/Plan.md",
                                                 basedOn: nil, modified: Date()) }
        _ = try a.write("Notes/Plan.md", "a's plan\n")
        try a.sync()
        let b = try devices.join(joining, as: "b")
        try devices.settle(b, a)
        for device in [a, b] {
            let files = try device.files()
            #expect(files["Notes/Plan.md"] == Data("a's plan\n".utf8), "the item already in the cloud keeps its path")
            #expect(files.filter { $0.key.hasPrefix("Notes/Plan (conflict ") && $0.key.hasSuffix(" b).md") }.values.first
                    == Data("b's plan\n".utf8), "\(files.keys.sorted())")
        }
        #expect(try a.files() == b.files())

        // Two devices creating one path while neither sees the other: the newer keeps it.
        let delayed = try Devices(delayed: true)
        let c = try delayed.device("c")
        let d = try delayed.device("d")
        _ = try c.write("Notes/Same.md", "c's\n")
        try c.sync()
        _ = try d.write("Notes/Same.md", "d's\n")
        try d.sync()
        try delayed.settle(c, d)
        #expect(try c.files() == d.files())
        #expect(try c.files()["Notes/Same.md"] == Data("d's\n".utf8))
        #expect(try c.files().filter { $0.key.hasPrefix("Notes/Same (conflict ") }.count == 1)
    }

    @Test(arguments: CloudKind.allCases)
    func anEditBeatsAConcurrentDelete(cloud: CloudKind) throws {
        let devices = try Devices(cloud: cloud)
        let a = try devices.device("a")
        let b = try devices.device("b")
        let id = try a.write("Notes/Keep.md", "first\n")
        try devices.settle(a, b)

        try a.store.trash(id: id)
        _ = try b.write("Notes/Keep.md", "edited\n")
        try a.sync()
        try devices.settle(b, a)
        #expect(try a.text(id: id) == "edited\n")
        #expect(try b.text(id: id) == "edited\n")
    }
}

@Suite(.scratchFolders) struct CloudIdentityTests {
    @Test func aCloudIsCreatedOnlyInANewOrEmptyFolder() throws {
        let folder = try TemporaryFolder()
        let store = try LibraryStore.create(at: folder.child("library"))
        let occupied = folder.child("occupied")
        try FileManager.default.createDirectory(at: occupied, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: occupied.appendingPathComponent("taxes.pdf"))
        #expect(throws: CloudError.notACloud(location: occupied.path)) {
            try CloudLinking.link(store, to: FolderCloud(folder: occupied), deviceName: "a")
        }
        #expect(try store.cloudLink() == nil)

        // What sync tools and systems leave behind does not count.
        let fresh = folder.child("fresh")
        try FileManager.default.createDirectory(at: fresh.appendingPathComponent(".stfolder"), withIntermediateDirectories: true)
        try Data().write(to: fresh.appendingPathComponent("desktop.ini"))
        try CloudLinking.link(store, to: FolderCloud(folder: fresh), deviceName: "a")
        #expect(try FolderCloud(folder: fresh).identity().format == CloudIdentity.plainFormat)
        #expect(throws: SyncError.alreadyLinked(location: fresh.path)) {
            try CloudLinking.link(store, to: FolderCloud(folder: fresh), deviceName: "a")
        }
    }

    /// A cloud made by a Shelf of format 1 keeps its one shared content folder, which devices
    /// of every format read and write; a new cloud has a content folder per device.
    @Test func aFirstFormatCloudKeepsItsSharedContentFolder() throws {
        let devices = try Devices()
        try FolderCloud(folder: devices.cloudFolder(for: "a")).create(CloudIdentity(format: 1))
        let a = try devices.device("a")
        let b = try devices.device("b")
        let id = try a.write("Notes/Old.md", "an old cloud\n")
        try devices.settle(a, b)
        #expect(try b.text(id: id) == "an old cloud\n")
        let hash = ContentHash(of: Data("an old cloud\n".utf8)).rawValue
        let content = devices.cloudFolder(for: "a").appendingPathComponent("content")
        #expect(FileManager.default.fileExists(atPath: content.appendingPathComponent("\(hash.prefix(2))/\(hash)").path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: content.path).allSatisfy { $0.count == 2 })

        let newer = try Devices()
        let c = try newer.device("c")
        _ = try c.write("Notes/New.md", "a new cloud\n")
        try c.sync()
        let device = try #require(try c.store.cloudLink()?.device)
        let newHash = ContentHash(of: Data("a new cloud\n".utf8)).rawValue
        #expect(FileManager.default.fileExists(
            atPath: newer.cloudFolder(for: "c").appendingPathComponent("content/\(device)/\(newHash.prefix(2))/\(newHash)").path))
    }

    @Test func aMissingEmptiedOrReplacedCloudStopsSyncAndDeletesNothing() throws {
        let devices = try Devices()
        let a = try devices.device("a")
        let id = try a.write("Notes/Keep.md", "keep\n")
        try a.sync()
        let cloudFolder = devices.cloudFolder(for: "a")
        let away = devices.folder.child("away")
        try FileManager.default.moveItem(at: cloudFolder, to: away)

        #expect(throws: CloudError.missing(location: cloudFolder.path)) { try a.sync() }
        _ = try a.write("Notes/Keep.md", "edited while offline\n")
        let link = try #require(try a.store.cloudLink())
        #expect(link.offlineSince != nil)
        #expect(link.error?.contains("not there") == true)
        #expect(try a.engine.pendingUploads() == 1)

        try FileManager.default.createDirectory(at: cloudFolder, withIntermediateDirectories: true)
        #expect(throws: CloudError.empty(location: cloudFolder.path)) { try a.sync() }

        let other = try Devices()
        _ = try other.device("x")
        try FileManager.default.removeItem(at: cloudFolder)
        try FileManager.default.copyItem(at: other.cloudFolder(for: "x"), to: cloudFolder)
        let expected = try #require(try a.store.cloudLink()).cloud
        let found = try FolderCloud(folder: cloudFolder).identity().cloud
        #expect(throws: CloudError.differentCloud(location: cloudFolder.path, expected: expected, found: found)) { try a.sync() }
        #expect(try a.text(id: id) == "edited while offline\n")

        try FileManager.default.removeItem(at: cloudFolder)
        try FileManager.default.moveItem(at: away, to: cloudFolder)
        #expect(try a.sync().pushed == 1)
        #expect(try a.store.cloudLink()?.offlineSince == nil)
        #expect(try a.engine.pendingUploads() == 0)
        let b = try devices.device("b")
        try b.sync()
        #expect(try b.text(id: id) == "edited while offline\n")
    }

    @Test func foreignFilesInTheCloudAreIgnored() throws {
        let devices = try Devices()
        let a = try devices.device("a")
        let b = try devices.device("b")
        _ = try a.write("Notes/One.md", "one\n")
        try a.sync()
        let root = devices.cloudFolder(for: "a")
        let log = try #require(try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("log").path).first)
        let logFolder = root.appendingPathComponent("log").appendingPathComponent(log)
        for name in ["desktop.ini", ".DS_Store", "000000000001 (conflicted copy).json",
                     "000000000001.sync-conflict-20261124-101500-ABCDEFG.json", "000000000009.json.tmp"] {
            try Data("not shelf's".utf8).write(to: logFolder.appendingPathComponent(name))
        }
        try Data("x".utf8).write(to: root.appendingPathComponent("desktop.ini"))
        try FileManager.default.createDirectory(at: root.appendingPathComponent("log/.stversions"), withIntermediateDirectories: true)
        #expect(try b.sync().pulled == 1)
        #expect(try b.files() == a.files())
    }

    @Test func aBatchStoredByAPushThatDiedIsAdoptedNotRepeated() throws {
        let devices = try Devices()
        let a = try devices.device("a")
        let b = try devices.device("b")
        let id = try a.write("Notes/One.md", "one\n")
        let link = try #require(try a.store.cloudLink())
        // The push stored batch 1 and died before the library recorded it.
        let stored = try #require(try a.store.record(id: id))
        let change = CloudChange(id: "\(link.device)-1-0", item: id.rawValue, base: nil, device: link.device, time: Date(),
                                 operation: .put, kind: "note", path: stored.path, title: stored.item.title,
                                 hash: ContentHash(of: stored.content), size: stored.content.count,
                                 modified: stored.modified, permissions: stored.permissions, attributes: [:])
        try devices.cloud(for: "a").putContent(stored.content, hash: change.hash, by: link.device)
        try devices.cloud(for: "a").append(ChangeBatch(device: link.device, number: 1, changes: [change]))

        #expect(try a.sync().pushed == 0)
        #expect(try a.store.cloudLink()?.nextBatch == 2)
        try b.sync()
        #expect(try b.files() == a.files())
        let batches = try FileManager.default.contentsOfDirectory(
            atPath: devices.cloudFolder(for: "a").appendingPathComponent("log/\(link.device)").path)
        #expect(batches == ["000000000001.json"])
    }
}

@Suite(.scratchFolders) struct CloudMaintenanceTests {
    /// How many change batches the cloud holds, of every device.
    func storedBatches(_ devices: Devices) throws -> Int {
        try devices.cloud(for: "a").batches(after: CloudCursor(), limit: .max).batches.count
    }

    @Test(arguments: CloudKind.allCases)
    func logsEveryDeviceReadAndBytesNobodyNeedsGoAndALateDeviceStartsFromTheSnapshot(cloud: CloudKind) throws {
        let devices = try Devices(cloud: cloud)
        let a = try devices.device("a")
        let b = try devices.device("b")
        let id = try a.write("Notes/Often.md", "version 0\n")
        for round in 1...20 {
            _ = try a.write("Notes/Often.md", "version \(round)\n")
            _ = try a.write("Notes/Other \(round).md", "other \(round)\n")
            try a.sync()
        }
        try devices.settle(a, b)
        let batchesBefore = try storedBatches(devices)

        // Until b reports how far it has read, nothing of a's log can go.
        var report = try a.engine.maintainCloud(snapshotEvery: 1, unusedFor: 0)
        #expect(report.snapshotWritten)
        #expect(report.batchesRemoved == 0)
        try b.engine.maintainCloud(snapshotEvery: 1_000_000, unusedFor: 0)
        report = try a.engine.maintainCloud(snapshotEvery: 1_000_000, unusedFor: 0)
        #expect(report.batchesRemoved > 0)
        #expect(report.contentRemoved >= 19, "the replaced versions of Often.md")
        #expect(try storedBatches(devices) < batchesBefore)

        // A third device joining now starts from the snapshot and ends like the others.
        let c = try devices.device("c")
        try devices.settle(c, a, b)
        #expect(try c.text(id: id) == "version 20\n")
        #expect(try c.files() == a.files())
        #expect(try b.files() == a.files())
        _ = try a.write("Notes/Often.md", "after the snapshot\n")
        try devices.settle(a, b, c)
        #expect(try c.text(id: id) == "after the snapshot\n")
    }

    static let firstVersion = "one\n---\ntwo\n---\nthree\n"

    /// Devices a and b of a cloud a file-sync tool carries late, both holding a note in its
    /// first version; then b edits its first line and a its last, each pushing into its own
    /// copy of the cloud. Returns them and the note's id.
    func crossingEdits() throws -> (Devices, Device, Device, ItemID) {
        let devices = try Devices(delayed: true)
        let a = try devices.device("a")
        let b = try devices.device("b")
        let id = try a.write("Notes/Plan.md", Self.firstVersion)
        try devices.settle(a, b)
        try b.write("Notes/Plan.md", "ONE\n---\ntwo\n---\nthree\n")
        try b.sync()
        try a.write("Notes/Plan.md", "one\n---\ntwo\n---\nTHREE\n")
        try a.sync()
        return (devices, a, b, id)
    }

    /// A device that starts from a snapshot learns the changes before it: an edit pushed later
    /// on top of one of them (made before its device saw the snapshot's) merges there as on
    /// every other device, not into a conflict copy of its own.
    @Test func anEditMadeOnAnOlderVersionMergesOnADeviceThatStartedFromTheSnapshot() throws {
        let (devices, a, b, id) = try crossingEdits()
        #expect(try a.engine.maintainCloud(snapshotEvery: 1, unusedFor: 0).snapshotWritten)

        let c = try devices.device("c")
        try devices.settle(c, a, b)
        for device in [a, b, c] {
            #expect(try device.text(id: id) == "ONE\n---\ntwo\n---\nTHREE\n")
            #expect(try device.files().keys.filter { $0.contains("(conflict ") }.isEmpty)
        }
    }

    /// Bytes a change was made on top of stay while a device may still merge against them: b
    /// has not read a's edit, made on the first version, when a removes what nobody needs.
    @Test func theBytesAnUnreadChangeWasMadeOnStay() throws {
        let (devices, a, b, _) = try crossingEdits()
        try devices.deliver()
        try a.sync()  // a merges b's edit; b has not read a's yet
        try b.engine.maintainCloud(snapshotEvery: 1_000_000)
        try devices.deliver()
        Thread.sleep(forTimeInterval: 1.1)  // the first version's bytes were last used over a second ago
        let report = try a.engine.maintainCloud(snapshotEvery: 1, unusedFor: 1)
        #expect(report.batchesRemoved > 0, "the first version's batch went")
        #expect(try devices.cloud(for: "a").hasContent(ContentHash(of: Data(Self.firstVersion.utf8))))
    }

    /// The bytes of a merge, which no device pushes, stay while the devices hold it: a device
    /// that keeps it as a placeholder downloads it from the cloud.
    @Test func theBytesOfAMergeStay() throws {
        let (devices, a, b, id) = try crossingEdits()
        #expect(try a.engine.maintainCloud(snapshotEvery: 1).snapshotWritten, "a snapshot from before the merge")
        try devices.settle(a, b)
        let merged = "ONE\n---\ntwo\n---\nTHREE\n"
        #expect(try a.text(id: id) == merged)

        try b.engine.maintainCloud(snapshotEvery: 1_000_000)
        try devices.deliver()
        Thread.sleep(forTimeInterval: 1.1)  // the merge's bytes were last used over a second ago
        try a.engine.maintainCloud(snapshotEvery: 1_000_000, unusedFor: 1)
        #expect(try devices.cloud(for: "a").hasContent(ContentHash(of: Data(merged.utf8))))
    }

    @Test(arguments: CloudKind.allCases)
    func aLostDeviceHoldsRemovalBackUntilForgotten(cloud: CloudKind) throws {
        let devices = try Devices(cloud: cloud)
        let a = try devices.device("a")
        _ = try devices.device("lost")  // linked once, never heard from again
        for round in 1...5 {
            _ = try a.write("Notes/Note.md", "round \(round)\n")
            try a.sync()
        }
        #expect(try a.engine.maintainCloud(snapshotEvery: 1, unusedFor: 0).batchesRemoved == 0)
        #expect(throws: SyncError.self) { try a.engine.forgetDevice(named: "nobody") }
        #expect(throws: SyncError.cannotForgetItself) { try a.engine.forgetDevice(named: "a") }
        try a.engine.forgetDevice(named: "lost")
        #expect(try a.engine.maintainCloud(snapshotEvery: 1, unusedFor: 0).batchesRemoved > 0)
    }
}

/// Devices editing their own notes and their own lines of shared notes in a seeded random
/// order, through a folder cloud a file-sync tool carries late: every device must end with the
/// same files, every device's last line in each shared note, and no conflict copy.
struct InterleavedEdits {
    let seed: UInt64
    let devices: Int
    let steps: Int
    /// Each delivery copies about half of the missing files, the rest wait for a later one.
    let deliversInAnyOrder: Bool

    func run() throws {
        let cloud = try Devices(delayed: true)
        let fleet = try (0..<devices).map { try cloud.device("d\($0)") }
        let lines = (0..<fleet.count).map { "d\($0): nothing yet\n---\n" }.joined()
        for note in 0..<3 { try fleet[0].write("Notes/Shared \(note).md", lines) }
        try cloud.settle(fleet[0])
        try cloud.settle(fleet)

        var random = SeededGenerator(seed: seed)
        var last: [String: String] = [:]
        for step in 0..<steps {
            let index = Int(random.next() % UInt64(fleet.count))
            let device = fleet[index]
            switch random.next() % 5 {
            case 0:
                try device.sync()
            case 1:
                try cloud.deliver(only: deliversInAnyOrder ? { _, _ in random.next() % 2 == 0 } : nil)
            case 2:
                let text = "d\(index) own, step \(step)\n"
                try device.write("Notes/Own \(index).md", text)
                last["Notes/Own \(index).md"] = text
            default:
                let path = "Notes/Shared \(random.next() % 3).md"
                let text: String
                do {
                    guard let read = try device.text(path) else { continue }  // not here yet
                    text = read
                } catch DownloadError.notArrived {
                    continue  // its bytes have not arrived yet; any other failure fails the walk
                }
                var lines = text.components(separatedBy: "\n")
                lines[2 * index] = "d\(index): step \(step)"
                try device.write(path, lines.joined(separator: "\n"))
                last[path + " " + String(index)] = lines[2 * index]
            }
        }
        try cloud.settle(fleet)
        try cloud.settle(fleet)

        let files = try fleet[0].files()
        for (number, device) in fleet.enumerated().dropFirst() {
            let theirs = try device.files()
            #expect(theirs == files, "seed \(seed): d\(number) differs from d0 in \(Set(files.keys).union(theirs.keys).filter { files[$0] != theirs[$0] }.sorted())")
        }
        #expect(files.keys.filter { $0.contains("(conflict ") }.isEmpty, "seed \(seed): \(files.keys.sorted())")
        for (key, written) in last {
            let path = key.hasSuffix(".md") ? key : String(key[..<key.lastIndex(of: " ")!])
            let text = String(decoding: files[path] ?? Data(), as: UTF8.self)
            #expect(key.hasSuffix(".md") ? text == written : text.components(separatedBy: "\n").contains(written),
                    "seed \(seed), \(key): \(written) is not in \(text)")
        }
    }
}
