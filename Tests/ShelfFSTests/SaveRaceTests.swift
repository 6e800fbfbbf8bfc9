import Foundation
import Glibc
import Synchronization
import Testing
import FuseKit
import GRDB
import ShelfModel
@testable import ShelfStore
@testable import ShelfFS
import TestTraits

/// A save and what runs beside it: a writer that goes on writing while its bytes commit, and
/// the change follower reading the index just before a save moves it on. Both once lost an
/// append (or kept a false conflict copy) in `scripts/soak`'s walks of appends.
@Suite(.scratchFolders) struct SaveRaceTests {
    let library: MountableLibrary
    let fs: ShelfFileSystem

    init() throws {
        library = try MountableLibrary()
        try library.addNote()
        fs = try ShelfFileSystem(store: library.store)
    }

    private func planInode() throws -> UInt64 {
        let notes = try fs.lookup(parent: InodeTable.rootInode, name: "Notes").attributes.inode.rawValue
        return try fs.lookup(parent: notes, name: "Plan.md").attributes.inode.rawValue
    }

    private func readFile(_ inode: UInt64) throws -> String {
        String(decoding: try fs.read(inode, offset: 0, size: 1 << 20), as: UTF8.self)
    }

    private func conflictCopies() throws -> [String] {
        try library.store.summaries(kind: .note).map(\.path).filter { $0.contains("(conflict ") }
    }

    /// The follower read the index (the version before a save), then the store (the save's
    /// version); by the time it keeps what the file shows, the save is published. Keeping the
    /// older version then would have the file show it, and the writer's next append land on it.
    @Test func keepingAVersionASaveHasPassedKeepsNothing() throws {
        let plan = try planInode()
        let before = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        let writer: ProcessID = 4242
        _ = try fs.read(plan, offset: 0, size: 1 << 20, for: writer)
        _ = try fs.write(plan, offset: 0, data: Array("One.\n".utf8), appending: true, by: writer)
        try fs.saves.save(plan)
        let saved = try #require(try library.store.record(id: before.item.id))
        #expect(saved.version > before.version)

        #expect(try fs.parts.view.keepShown(plan, version: before.version) == false)
        #expect(fs.saves.buffers.buffer(of: plan) == nil, "the file holds no bytes of an older version")
        #expect(try readFile(plan) == saved.text)

        _ = try fs.write(plan, offset: 0, data: Array("Two.\n".utf8), appending: true, by: writer)
        try fs.saves.save(plan)
        #expect(try library.store.record(id: before.item.id)?.text == before.text + "One.\nTwo.\n")
        #expect(try conflictCopies().isEmpty)
    }

    /// A version still shown is kept: the follower's ordinary case.
    @Test func keepingTheVersionShownHoldsItsBytes() throws {
        let plan = try planInode()
        let shown = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        #expect(try fs.parts.view.keepShown(plan, version: shown.version))
        #expect(fs.saves.buffers.buffer(of: plan)?.isDirty == false)
        #expect(try readFile(plan) == shown.text)
    }

    /// A save has committed its bytes and not yet let go of them when the change follower meets
    /// a change from elsewhere: the bytes the save holds are what the file shows, so the follower
    /// keeps them and gives the name another file. The save then lets go of what it held (its
    /// file was still the name's a moment before). The file the kernel holds must go on showing
    /// those bytes, at the size the kernel has: when it read the newer version instead, a reader
    /// got it cut at the older size (soak-sync: a note lost its final newline everywhere).
    @Test func bytesKeptForAFileThatLostItsNameOutliveTheSaveThatHeldThem() throws {
        let plan = try planInode()
        let shown = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        // What a save leaves for a moment after its commit: the bytes it saved, held and clean.
        #expect(try fs.parts.view.keepShown(plan, version: shown.version))
        _ = try library.store.write { try $0.saveFile(Data((shown.text + "Longer elsewhere.\n").utf8), of: shown.item.id,
                                                         kind: .note, at: shown.path, basedOn: nil, modified: Date()) }
        #expect(try ChangeFollower(fileSystem: fs).poll() > 0)
        #expect(fs.parts.inodes.existingInode(for: .item(shown.item.id)) != plan, "the name has another file now")
        fs.saves.buffers.releaseIfSaved(plan)  // the save's last step, decided before the name moved
        #expect(try readFile(plan) == shown.text, "the file the kernel holds shows what it showed")
        #expect(try fs.attributes(of: plan).size == UInt64(shown.content.count))
        fs.forget(plan, count: 2)
        #expect(fs.saves.buffers.buffer(of: plan) == nil, "once the kernel forgets the file, its bytes go")
    }

    /// A save made from a version the item has left since is merged: its transaction stores the
    /// writer's bytes, then the merge on top of them. When the change follower meets the merge
    /// before the save has published its bytes as saved, it keeps nothing (the file holds unsaved
    /// writes) and shows the kernel nothing, and the index moves to the merge. The save must not
    /// then let its file read the merge: the kernel holds the size of the writer's bytes, and a
    /// merge one byte longer read through it loses its final newline (ManyDevicesTests on
    /// PostgreSQL under load: `d3: edit 16` merged with another device's `d6: edit 11`, read
    /// back cut, and every merge with the next save failed). The file keeps the writer's bytes;
    /// the name goes to another file, which reads the merge.
    @Test func aMergeTheFollowerMeetsBeforeItsSaveEndsDoesNotReachTheSavedFile() throws {
        let race = try UnsavedEdit(in: library)
        _ = try library.store.write {
            try $0.saveFile(Data(race.read.replacingOccurrences(of: "b: start", with: "b: edit 10").utf8), of: race.note.item.id,
                            kind: .note, at: race.note.path, basedOn: nil, modified: Date())
        }
        // What the kernel is told of the file while the writes wait, and keeps.
        #expect(try race.fs.attributes(of: race.shared).size == UInt64(race.written.utf8.count))

        race.observer.onNextCommit { _ = try race.follower.poll() }
        try race.fs.saves.save(race.shared)
        #expect(race.observer.ran, "the follower met the merge between the save's commit and its end")
        let merged = try #require(try race.store.record(id: race.note.item.id)).text
        #expect(merged == race.written.replacingOccurrences(of: "b: start", with: "b: edit 10"))
        try race.expectSavedFileKept(andNameReading: merged)
    }

    /// The same, with a change made elsewhere after the save committed rather than merged into it
    /// (sync applies one as soon as the file holds no unsaved writes): a save that was not
    /// merged must not let its file read a version the kernel holds another size of either.
    @Test func aChangeAppliedBetweenASavesCommitAndItsEndDoesNotReachTheSavedFile() throws {
        let race = try UnsavedEdit(in: library)
        let elsewhere = race.written.replacingOccurrences(of: "b: start", with: "b: edit 10")
        let (other, note, follower) = (library.store, race.note, race.follower)
        race.observer.onNextCommit {
            _ = try other.write {
                try $0.saveFile(Data(elsewhere.utf8), of: note.item.id, kind: .note, at: note.path, basedOn: nil, modified: Date())
            }
            _ = try follower.poll()
        }
        try race.fs.saves.save(race.shared)
        #expect(race.observer.ran, "the change and the follower came between the save's commit and its end")
        #expect(try race.store.record(id: note.item.id)?.text == elsewhere)
        try race.expectSavedFileKept(andNameReading: elsewhere)
    }

    /// A save's last step can come after a rename put another file at its item's name: an
    /// editor's atomic save, whose bytes wait unsaved in the renamed file. The saved file, whose
    /// content moved on, gives the name away only while it is still the file at it. When it took
    /// the name from the renamed file, the next lookup numbered a new inode reading the version
    /// before the rename, and writes through it were merged over the renamed bytes (fsx in CI:
    /// `replace`, then a read of the old bytes).
    @Test func aSaveEndingAfterARenameOverItsFileLeavesTheNameWithTheRenamedFile() throws {
        let plan = try planInode()
        let id = try #require(try library.store.record(atPath: "Notes/Plan.md")).item.id
        let notes = try fs.lookup(parent: InodeTable.rootInode, name: "Notes").attributes.inode.rawValue
        let temporary = try fs.create(parent: notes, name: ".Plan.md.tmp", mode: 0o644,
                                      flags: OpenFlags(rawValue: O_WRONLY | O_CREAT | O_TRUNC)).entry.attributes.inode.rawValue
        _ = try fs.write(temporary, offset: 0, data: Array("Renamed.\n".utf8), appending: false)
        try fs.rename(parent: notes, name: ".Plan.md.tmp", newParent: notes, newName: "Plan.md", flags: [])
        #expect(fs.saves.buffers.holdsUnsavedWrites(temporary), "the renamed bytes wait for their save")

        // What the replaced file's save does last when the item moved on from what it saved.
        #expect(try fs.parts.view.keepShown(plan))
        fs.parts.view.giveAnotherFile(to: id, at: MountPath("Notes/Plan.md"), insteadOf: plan)

        let named = try fs.lookup(parent: notes, name: "Plan.md").attributes.inode.rawValue
        #expect(named == temporary, "the name stays with the file renamed to it")
        #expect(try readFile(named) == "Renamed.\n")
        try fs.saves.save(temporary)
        #expect(try library.store.record(id: id)?.text == "Renamed.\n")
    }

    /// Two saves of one file can end out of order (a writer's close saves in the background
    /// while a `chmod`, `utime` or `fsync` saves on the request's thread): the first's end
    /// comes after the second has committed and published. The item is past the first's
    /// version then, but through the file's own later save, which the file shows: the first
    /// must not keep the file at its bytes and give the name away. It did, and descriptors
    /// still open on the file wrote into one no name showed, whose save was merged over the
    /// newer file's (fsx `--reopen 8` under load: a write through a held descriptor missing
    /// from the file, then lost).
    @Test func aSaveEndingAfterTheFilesNextSaveKeepsNothing() throws {
        let buffers = ItemBuffers(journal: try SaveJournal(library: library.store.folder))
        let inode: UInt64 = 77
        let item = ItemID("note")
        func save(_ text: String, as version: Int64) throws {
            try buffers.apply(.write(offset: 0, data: Array(text.utf8), appending: true), to: inode, by: nil,
                              start: { (Array("Start.\n".utf8), 1) }, target: { .item(item, baseVersion: $0) })
            _ = try #require(buffers.buffer(of: inode)).saveIfDirty(largest: 1 << 20, setAside: nil) { _ in
                ItemBuffer.Saved(version: version, nextTarget: .item(item, baseVersion: version))
            }
        }
        try save("One.\n", as: 2)
        try save("Two.\n", as: 3)
        #expect(buffers.keepHeld(inode, ifSaved: 2) == false, "the first save's end: the file shows the second's bytes")
        #expect(buffers.buffer(of: inode)?.isDirty == false)
        #expect(buffers.keepHeld(inode, ifSaved: 3) == true, "the second save's end keeps what it saved")
    }

    /// Writes that arrive while a save commits stay unsaved on top of it, and their writer is
    /// the next save's writer: its last read is the version just saved, so the next save is
    /// made from it and keeps no conflict copy.
    @Test func aWriterWritingWhileItsSaveCommitsIsTheNextSavesWriter() throws {
        let buffers = ItemBuffers(journal: try SaveJournal(library: library.store.folder))
        let writer: ProcessID = 4242
        let inode: UInt64 = 77
        func append(_ text: String) throws {
            try buffers.apply(.write(offset: 0, data: Array(text.utf8), appending: true), to: inode, by: writer,
                              start: { (Array("Start.\n".utf8), 1) }, target: { .item(ItemID("note"), baseVersion: $0) })
        }
        try append("One.\n")
        let buffer = try #require(buffers.buffer(of: inode))
        var committed: [Set<ProcessID?>] = []
        _ = try buffer.saveIfDirty(largest: 1 << 20, setAside: nil) { unsaved in
            committed.append(unsaved.writers)
            try append("Two.\n")  // the writer goes on while the bytes commit
            return ItemBuffer.Saved(version: 2, nextTarget: .item(ItemID("note"), baseVersion: 2))
        }
        #expect(buffer.isDirty)
        _ = try buffer.saveIfDirty(largest: 1 << 20, setAside: nil) { unsaved in
            committed.append(unsaved.writers)
            #expect(unsaved.baseVersion == 2)
            #expect(String(decoding: unsaved.bytes, as: UTF8.self) == "Start.\nOne.\nTwo.\n")
            return ItemBuffer.Saved(version: 3, nextTarget: nil)
        }
        #expect(committed == [[writer], [writer]])
        #expect(!buffer.isDirty)

        let served = ServedVersions()
        let note = ItemID("note")
        served.served(note, version: 1, to: writer)
        served.saved(note, version: 2, by: committed[0], startsAgain: true)
        #expect(served.readFrom(note, by: committed[1], startedFrom: 2) == [2, 2])
    }
}

/// A note whose file a writer read and rewrote (`a: start` → `a: edit 1`), not saved yet, on a
/// mount whose store runs a step right after its next commit: the race of a save's commit and
/// its end.
private struct UnsavedEdit {
    let note: ItemRecord
    let observer = CommitObserver()
    let store: LibraryStore
    let fs: ShelfFileSystem
    let follower: ChangeFollower
    let notes: UInt64
    let shared: UInt64
    let read: String
    let written: String

    init(in library: MountableLibrary) throws {
        note = try library.addNote("Shared", content: "a: start\n\nb: start\n")
        store = try observer.observedStore(of: library.store.folder)
        fs = try ShelfFileSystem(store: store)
        follower = ChangeFollower(fileSystem: fs)
        notes = try fs.lookup(parent: InodeTable.rootInode, name: "Notes").attributes.inode.rawValue
        shared = try fs.lookup(parent: notes, name: "Shared.md").attributes.inode.rawValue
        let writer: ProcessID = 4242
        read = String(decoding: try fs.read(shared, offset: 0, size: 1 << 20, for: writer), as: UTF8.self)
        #expect(read == note.text)
        written = read.replacingOccurrences(of: "a: start", with: "a: edit 1")
        _ = try fs.write(shared, offset: 0, data: Array(written.utf8), appending: false, by: writer)
    }

    /// The file the kernel holds shows what it showed, at its size; the name has another file,
    /// which reads `current`.
    func expectSavedFileKept(andNameReading current: String) throws {
        #expect(String(decoding: try fs.read(shared, offset: 0, size: 1 << 20), as: UTF8.self) == written,
                "the file the kernel holds shows what it showed")
        #expect(try fs.attributes(of: shared).size == UInt64(written.utf8.count))
        let renamed = try fs.lookup(parent: notes, name: "Shared.md").attributes.inode.rawValue
        #expect(renamed != shared, "the name has another file now")
        #expect(String(decoding: try fs.read(renamed, offset: 0, size: 1 << 20), as: UTF8.self) == current)
        #expect(try fs.attributes(of: renamed).size == UInt64(current.utf8.count))
    }
}

/// Runs a step right after the next transaction a store commits — on another thread, which the
/// committing thread waits for — so a test can put something between a commit and what the
/// committer does next (a save publishing its bytes as saved).
final class CommitObserver: TransactionObserver, @unchecked Sendable {
    private let next = Mutex<(@Sendable () throws -> Void)?>(nil)
    private let done = Atomic<Bool>(false)
    /// The store's pool, which holds its observers weakly.
    private var pool: DatabasePool?

    /// A second store over the library in `folder`, whose commits this observes.
    func observedStore(of folder: URL) throws -> LibraryStore {
        let pool = try LibraryFolder(url: folder).openDatabase()
        pool.add(transactionObserver: self, extent: .observerLifetime)
        self.pool = pool
        return LibraryStore(folder: folder, database: pool)
    }

    /// `step` runs once, after the next commit.
    func onNextCommit(_ step: @escaping @Sendable () throws -> Void) {
        next.withLock { $0 = step }
    }

    /// Whether the step ran, and ended without an error.
    var ran: Bool { done.load(ordering: .acquiring) }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { true }
    func databaseDidChange(with event: DatabaseEvent) {}
    func databaseDidRollback(_ db: Database) {}

    func databaseDidCommit(_ db: Database) {
        guard let step = next.withLock({ $0.take() }) else { return }
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread { [self] in
            if (try? step()) != nil { done.store(true, ordering: .releasing) }
            finished.signal()
        }
        _ = finished.wait(timeout: .now() + 10)
    }
}
