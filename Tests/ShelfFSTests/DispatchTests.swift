import Foundation
import Glibc
import Synchronization
import Testing
import FuseKit
import ShelfModel
import ShelfStore
@testable import ShelfFS
import TestTraits

/// The filesystem driven directly, without a kernel: names, the rename table and commits.
@Suite(.scratchFolders) struct DispatchTests {
    let library: MountableLibrary
    let fs: ShelfFileSystem

    init() throws {
        library = try MountableLibrary()
        try library.addBook()
        try library.addNote()
        fs = try ShelfFileSystem(store: library.store)
    }

    private var root: UInt64 { InodeTable.rootInode }

    private func folder(_ path: String) throws -> UInt64 {
        var inode = root
        for name in path.split(separator: "/") {
            inode = try fs.lookup(parent: inode, name: String(name)).attributes.inode.rawValue
        }
        return inode
    }

    /// Creates `name` in `folder` with `text`, saves it as its writer's close would, and
    /// returns its inode.
    @discardableResult
    private func writeFile(_ folder: String, _ name: String, _ text: String) throws -> UInt64 {
        let created = try fs.create(parent: try self.folder(folder), name: name, mode: 0o644,
                                    flags: OpenFlags(rawValue: O_WRONLY | O_CREAT | O_TRUNC))
        let inode = created.entry.attributes.inode.rawValue
        _ = try fs.write(inode, offset: 0, data: Array(text.utf8), appending: false)
        try fs.saves.save(inode)
        return inode
    }

    private func readFile(_ inode: UInt64) throws -> String {
        String(decoding: try fs.read(inode, offset: 0, size: 1 << 20), as: UTF8.self)
    }

    private func inode(_ folder: String, _ name: String) throws -> UInt64 {
        try fs.lookup(parent: try self.folder(folder), name: name).attributes.inode.rawValue
    }

    @Test func listingMergesItemsAndPlainFilesAndHidesStatus() throws {
        _ = try writeFile("Notes", "picture.png", "png")
        let names = try fs.list(root).names.map(\.name)
        #expect(names == ["Books", "Notes"], "/.shelf/ is reachable by its path but not listed")
        #expect(try fs.list(try folder("Notes")).names.map(\.name) == ["Plan.md", "picture.png"])
        #expect(try fs.list(try folder(".shelf")).names.map(\.name) == StatusFolder.fileNames)
        #expect(try fs.lookup(parent: root, name: "missing").isNegative)
    }

    @Test func aRenamedPlainFileKeepsItsInodeAndReplacesTheTarget() throws {
        let objects = try fs.makeDirectory(parent: root, name: "objects", mode: 0o755).attributes.inode.rawValue
        let temp = try writeFile("objects", "tmp_obj", "blob")
        let replaced = try writeFile("objects", "old", "old")
        try fs.rename(parent: objects, name: "tmp_obj", newParent: objects, newName: "old", flags: [])
        #expect(try fs.lookup(parent: objects, name: "tmp_obj").isNegative)
        let moved = try fs.lookup(parent: objects, name: "old").attributes.inode.rawValue
        #expect(moved == temp, "the file keeps its inode under its new name")
        #expect(moved != replaced)
        #expect(try readFile(moved) == "blob")
        #expect(try fs.list(objects).names.map(\.name) == ["old"])
    }

    @Test func statSizeIsTheStoredSizeWithoutReading() throws {
        let record = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        let entry = try fs.lookup(parent: try folder("Notes"), name: "Plan.md")
        #expect(entry.attributes.size == UInt64(record.text.utf8.count))
        #expect(entry.attributes.modificationTime == FileTime(record.modified))
        #expect(try readFile(entry.attributes.inode.rawValue) == record.text)
    }

    /// A program that still reads the file a rename replaced reads the version it had, whole,
    /// with the size it had; the name shows the new file. Both are gone once the kernel forgets.
    @Test func aFileReplacedByARenameKeepsItsVersionForItsReaders() throws {
        let record = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        let replaced = try inode("Notes", "Plan.md")
        let text = record.text.replacingOccurrences(of: "Read more.", with: "Read a great deal more.")
        try writeFile("Notes", "Plan.md.tmp", text)
        try fs.rename(parent: try folder("Notes"), name: "Plan.md.tmp", newParent: try folder("Notes"),
                      newName: "Plan.md", flags: [])
        #expect(try readFile(replaced) == record.text)
        #expect(try fs.attributes(of: replaced).size == UInt64(record.text.utf8.count))
        let current = try inode("Notes", "Plan.md")
        #expect(current != replaced)
        #expect(try readFile(current) == text)
        try fs.saves.save(current)
        #expect(try library.store.record(atPath: "Notes/Plan.md")?.text == text)
        #expect(try readFile(replaced) == record.text, "the replaced file's readers keep its bytes after the save")
        #expect(fs.parts.kernel.staleAttributes.areStale([replaced]) == [true], "the kernel got bytes of it")
        fs.forget(replaced, count: 2)
        #expect(fs.saves.buffers.buffer(of: replaced) == nil)
        #expect(fs.parts.kernel.staleAttributes.areStale([replaced]) == [false], "nothing is kept for a forgotten inode")
    }

    /// The kernel may forget a file as soon as no program holds it (memory pressure evicts it
    /// between a writer's close and the save that close starts): a new file's unsaved writes
    /// stay its own, under the same inode when its name is looked up again, and are saved.
    @Test func aNewFileForgottenBeforeItsFirstSaveKeepsItsWrites() throws {
        let created = try fs.create(parent: try folder("Notes"), name: "Draft.md", mode: 0o644,
                                    flags: OpenFlags(rawValue: O_WRONLY | O_CREAT | O_TRUNC))
        let written = created.entry.attributes.inode.rawValue
        _ = try fs.write(written, offset: 0, data: Array("Kept.\n".utf8), appending: false)
        fs.forget(written, count: .max)
        #expect(!fs.parts.inodes.isKnownToKernel(written))
        let again = try inode("Notes", "Draft.md")
        #expect(again == written, "a file with unsaved writes keeps its number")
        #expect(try readFile(again) == "Kept.\n")
        try fs.saves.save(written)
        #expect(try library.store.record(atPath: "Notes/Draft.md")?.text == "Kept.\n")
    }

    /// A new file's first save commits its item before the file's inode takes the item's key,
    /// and the change follower may index the item in between: a lookup then still finds the
    /// file being saved, never a second inode that would show the store's bytes instead of its.
    @Test func aNewFileBeingSavedIsFoundWhileItsItemIsIndexedAlready() throws {
        let created = try fs.create(parent: try folder("Notes"), name: "Draft.md", mode: 0o644,
                                    flags: OpenFlags(rawValue: O_WRONLY | O_CREAT | O_TRUNC))
        let written = created.entry.attributes.inode.rawValue
        _ = try fs.write(written, offset: 0, data: Array("Being saved.\n".utf8), appending: false)
        let landed = try library.store.insert(.note(Note(title: "Draft", content: "Stored.\n")))
        #expect(landed.path == "Notes/Draft.md")
        #expect(try ChangeFollower(fileSystem: fs).poll() > 0)
        #expect(fs.parts.index.summary(at: MountPath("Notes/Draft.md"))?.id == landed.item.id)
        #expect(fs.announcer.queued.isEmpty, "the item is the new file's: nothing appeared elsewhere")
        let found = try inode("Notes", "Draft.md")
        #expect(found == written)
        #expect(try readFile(found) == "Being saved.\n")
    }

    /// Watchers hear of a plain file another device changed as changed when it was there
    /// before, whether or not the kernel still holds it (memory pressure may have had it
    /// forgotten), and as new when it was not.
    @Test func aPlainFileChangedElsewhereIsAnnouncedByWhatWasThereBefore() throws {
        _ = try folder("Notes")
        for name in ["map.png", "new.png"] {
            try Data("png".utf8).write(to: URL(fileURLWithPath: fs.parts.plain.realPath(MountPath("Notes/" + name))))
        }
        fs.syncView.plainFileChangedElsewhere(MountPath("Notes/map.png"), wasThere: true)
        fs.syncView.plainFileChangedElsewhere(MountPath("Notes/new.png"), wasThere: false)
        #expect(fs.announcer.queued == [.modified(MountPath("Notes/map.png")),
                                        .created(MountPath("Notes/new.png"), .plain(MountPath("Notes/new.png")))])
    }

    /// A file the kernel forgot while it held unsaved writes keeps them when its item's name
    /// moves on to another file (as a change from elsewhere makes it): they are saved into the
    /// item, and only then does the inode go.
    @Test func writesOfAForgottenFileSurviveItsNameMovingOn() throws {
        let record = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        let plan = try inode("Notes", "Plan.md")
        _ = try fs.write(plan, offset: 0, data: Array("Last.\n".utf8), appending: true)
        fs.forget(plan, count: .max)
        fs.parts.view.giveAnotherFile(to: record.item.id, at: MountPath("Notes/Plan.md"), insteadOf: plan)
        try fs.saves.save(plan)
        #expect(try library.store.record(id: record.item.id)?.text == record.text + "Last.\n")
        #expect(fs.parts.inodes.key(of: plan) == nil, "saved, the forgotten inode goes")
    }

    /// Writers of one file share it, as on a disk: one writer's bytes are the other's, a stat
    /// shows the unsaved size, and nothing reaches the store until a save.
    @Test func writesAreHeldUntilSaved() throws {
        let record = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        let plan = try inode("Notes", "Plan.md")
        _ = try fs.write(plan, offset: 0, data: Array("More.\n".utf8), appending: true)
        _ = try fs.write(plan, offset: 0, data: Array("Last.\n".utf8), appending: true)
        let written = record.text + "More.\nLast.\n"
        #expect(try readFile(plan) == written)
        #expect(try fs.attributes(of: plan).size == UInt64(written.utf8.count))
        #expect(try library.store.record(id: record.item.id)?.content == record.content)
        let mtime = try fs.attributes(of: plan).modificationTime
        try fs.saves.save(plan)
        let saved = try #require(try library.store.record(id: record.item.id))
        #expect(saved.text == written)
        #expect(FileTime(saved.modified) == mtime, "the time the writer saw must not move at the save")
        #expect(fs.saves.buffers.buffer(of: plan) == nil, "saved bytes are read from the store again")
        _ = try fs.setAttributes(plan, changes: AttributeChanges(size: 0))
        #expect(try readFile(plan).isEmpty)
    }

    /// Saves Plan.md as an atomic save does: its text with `old` replaced by `new` written to
    /// `temp`, renamed over it. Returns the record before and the text saved.
    private func saveAtomically(through temp: String, replacing old: String, with new: String) throws -> (before: ItemRecord, text: String) {
        let record = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        let text = record.text.replacingOccurrences(of: old, with: new)
        try writeFile("Notes", temp, text)
        try fs.rename(parent: try folder("Notes"), name: temp, newParent: try folder("Notes"), newName: "Plan.md", flags: [])
        return (record, text)
    }

    @Test func tempFileRenamedOverAnItemIsAnAtomicSave() throws {
        let (record, text) = try saveAtomically(through: "sedX1b2c3", replacing: "Read more.", with: "Read less.")
        let notes = try folder("Notes")
        // The rename does not wait for the store: the file shows the save at once, and the
        // scheduler (not running here) commits it right after.
        let plan = try inode("Notes", "Plan.md")
        #expect(try readFile(plan) == text)
        #expect(try fs.attributes(of: plan).size == UInt64(text.utf8.count))
        #expect(try library.store.record(atPath: "Notes/Plan.md")?.text == record.text)
        try fs.saves.save(plan)
        let saved = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        #expect(saved.item.id == record.item.id)
        #expect(saved.text == text)
        #expect(try fs.list(notes).names.map(\.name) == ["Plan.md"])
    }

    /// `fsync` of the folder after the rename (what makes a rename durable on disk, as atomic
    /// write libraries do) commits the save before it returns.
    @Test func syncingTheFolderCommitsTheSavesRenamedIntoIt() throws {
        let (_, text) = try saveAtomically(through: ".Plan.md.tmp", replacing: "Read more.", with: "Read it all.")
        try fs.makeFolderDurable(try folder("Notes"))
        #expect(try library.store.record(atPath: "Notes/Plan.md")?.text == text)
    }

    @Test func itemToBackupNameLeavesAndComesBackWithItsID() throws {
        let record = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        let notes = try folder("Notes")
        try fs.rename(parent: notes, name: "Plan.md", newParent: notes, newName: "Plan.md~", flags: [])
        #expect(try library.store.trashedItems().map(\.id) == [record.item.id])
        let backup = try fs.lookup(parent: notes, name: "Plan.md~").attributes.inode.rawValue
        #expect(try readFile(backup) == record.text)
        // vim: write the new file with the same text, then delete the backup.
        try writeFile("Notes", "Plan.md", record.text)
        try fs.unlink(parent: notes, name: "Plan.md~")
        let back = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        #expect(back.item.id == record.item.id)
        #expect(back.version > record.version)
        #expect(try library.store.trashedItems().isEmpty)
        #expect(try fs.list(notes).names.map(\.name) == ["Plan.md"])
    }

    @Test func aSaveOverAChangeFromElsewhereKeepsBothSides() throws {
        let record = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        let plan = try inode("Notes", "Plan.md")
        _ = try fs.write(plan, offset: 0, data: Array("Appended.\n".utf8), appending: true)
        guard case .note(var elsewhere) = record.item else { Issue.record("unexpected case"); return }
        elsewhere.content = "Changed by the CLI.\n"
        try library.reopened().update(.note(elsewhere))
        _ = try fs.write(plan, offset: 0, data: Array("Again.\n".utf8), appending: true)
        try fs.saves.save(plan)
        let saved = try #require(try library.store.record(id: record.item.id))
        #expect(saved.text == record.text + "Appended.\nAgain.\n")
        let copy = try #require(try library.store.summaries(kind: .note).first { $0.path.contains("(conflict ") })
        guard case .note(let kept) = try #require(try library.store.record(id: copy.id)).item else { Issue.record("unexpected case"); return }
        #expect(kept.content == "Changed by the CLI.\n")
    }

    @Test func aCopyOfALiveItemIsANewItem() throws {
        let record = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        try writeFile("Notes", "Copy.md", record.text)
        let copy = try #require(try library.store.record(atPath: "Notes/Copy.md"))
        #expect(copy.item.id != record.item.id)
        #expect(try library.store.record(id: record.item.id)?.path == "Notes/Plan.md")
    }

    @Test func invalidSaveBecomesADraft() throws {
        let book = try #require(try library.store.summaries(kind: .book).first)
        let inode = try inode("Books", MountPath(book.path).name)
        let invalid = "---\nid: \(book.id)\ntitle: Dune\ncurrent_page: many\n---\n"
        _ = try fs.setAttributes(inode, changes: AttributeChanges(size: 0))  // O_TRUNC
        _ = try fs.write(inode, offset: 0, data: Array(invalid.utf8), appending: false)
        try fs.makeDurable(inode)
        let stored = try #require(try library.store.record(id: book.id))
        #expect(stored.text == invalid)
        #expect(stored.draftDiagnostics?.isEmpty == false)
        let error = String(decoding: try fs.extendedAttribute(inode, name: "user.shelf.error"), as: UTF8.self)
        #expect(error.contains("current_page"))
        let report = String(decoding: try fs.parts.statusFolder.content(of: "errors.txt"), as: UTF8.self)
        #expect(report.hasPrefix(book.path + "\n  line 4:"))
    }

    /// Labels and ACLs are "not supported" (which `ls -l` remembers for the whole mount), not
    /// merely absent (which it would ask every file again).
    @Test func securityLabelsAndACLsAreNotSupported() throws {
        let plan = try inode("Notes", "Plan.md")
        let picture = try writeFile("Notes", "picture.png", "png")
        for inode in [plan, picture] {
            for name in ["security.selinux", "system.posix_acl_access"] {
                #expect(throws: Errno(EOPNOTSUPP)) { try fs.extendedAttribute(inode, name: name) }
            }
        }
        #expect(throws: Errno(EOPNOTSUPP)) {
            try fs.setExtendedAttribute(picture, name: "security.selinux", value: [0], mode: .any)
        }
        #expect(try fs.extendedAttribute(plan, name: "user.shelf.kind") == Array("note".utf8))
    }

    @Test func foldersMoveTheirItemsAndKindsDoNotMix() throws {
        let notes = try folder("Notes")
        _ = try fs.makeDirectory(parent: notes, name: "Shelf", mode: 0o755)
        try fs.rename(parent: notes, name: "Plan.md", newParent: try folder("Notes/Shelf"), newName: "Plan.md", flags: [])
        try fs.rename(parent: notes, name: "Shelf", newParent: notes, newName: "Archive", flags: [])
        #expect(try library.store.summaries(kind: .note).map(\.path) == ["Notes/Archive/Plan.md"])
        #expect(throws: Errno(ENOTEMPTY)) { try fs.removeDirectory(parent: notes, name: "Archive") }
        #expect(throws: Errno(EXDEV)) {
            try fs.rename(parent: try folder("Notes/Archive"), name: "Plan.md", newParent: try folder("Books"),
                          newName: "Plan.md", flags: [])
        }
        #expect(throws: Errno(EACCES)) { try fs.unlink(parent: try folder(".shelf"), name: "errors.txt") }
        #expect(throws: Errno(EBUSY)) { try fs.removeDirectory(parent: root, name: "Books") }

        // An item further down holds every folder above it; once it leaves, they can go.
        let archive = try folder("Notes/Archive")
        _ = try fs.makeDirectory(parent: archive, name: "Deep", mode: 0o755)
        try fs.rename(parent: archive, name: "Plan.md", newParent: try folder("Notes/Archive/Deep"), newName: "Plan.md", flags: [])
        #expect(throws: Errno(ENOTEMPTY)) { try fs.removeDirectory(parent: notes, name: "Archive") }
        try fs.rename(parent: try folder("Notes/Archive/Deep"), name: "Plan.md", newParent: notes, newName: "Plan.md", flags: [])
        try fs.removeDirectory(parent: archive, name: "Deep")
        try fs.removeDirectory(parent: notes, name: "Archive")
        #expect(try library.store.summaries(kind: .note).map(\.path) == ["Notes/Plan.md"])
    }

    @Test func changesFromOutsideReachTheIndex() throws {
        let follower = ChangeFollower(fileSystem: fs)
        let other = try library.reopened()
        let added = try other.insert(.note(Note(title: "Elsewhere")))
        #expect(try follower.poll() == 1)
        #expect(fs.parts.names.resolve(MountPath(added.path)) == .item(added.item.id))
        try other.write { try $0.trash(id: added.item.id) }
        try follower.poll()
        #expect(fs.parts.names.resolve(MountPath(added.path)) == nil)
    }
}

/// What the change follower tells the kernel, recorded instead of sent.
@Suite(.scratchFolders) struct InvalidationTests {
    let library: MountableLibrary
    let fs: ShelfFileSystem
    let follower: ChangeFollower
    let sent = SentInvalidations()
    let notifier = Notifier()

    init() throws {
        library = try MountableLibrary()
        try library.addNote()
        fs = try ShelfFileSystem(store: library.store)
        follower = ChangeFollower(fileSystem: fs)
        fs.parts.kernel.attach(notifier)
        notifier.start { [sent] invalidation in
            sent.record(invalidation)
            return 0
        }
    }

    /// Polls the feed and returns what was sent to the kernel because of it.
    /// The follower's invalidations; like the kernel, the next access of an inode whose cached
    /// copy was dropped asks for its attributes again.
    private func poll() throws -> [Notifier.Invalidation] {
        try follower.poll()
        #expect(notifier.waitUntilIdle())
        let invalidations = sent.take()
        for case .content(let inode) in invalidations { _ = try? fs.cachedAttributes(of: inode.rawValue) }
        return invalidations
    }

    private func changeElsewhere(_ content: String) throws {
        let other = try library.reopened()
        let record = try #require(try other.record(atPath: "Notes/Plan.md"))
        guard case .note(var note) = record.item else { Issue.record("unexpected case"); return }
        note.content = content
        try other.update(.note(note))
    }

    @Test func unsavedWritesKeepTheirPagesAndDeletionsAreAnnounced() throws {
        let notes = try fs.lookup(parent: InodeTable.rootInode, name: "Notes").attributes.inode
        let plan = try fs.lookup(parent: notes.rawValue, name: "Plan.md").attributes.inode
        _ = try fs.write(plan.rawValue, offset: 0, data: Array("Mine.\n".utf8), appending: true)

        try changeElsewhere("One.\n")
        #expect(try poll().isEmpty, "the kernel shows the unsaved writes, which stay")

        try fs.saves.save(plan.rawValue)
        _ = try poll()  // the save's own changes (and its conflict copy)
        let saved = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        try changeElsewhere("Two.\n")
        #expect(try poll() == [.content(notes), .entry(parent: notes, name: "Plan.md")],
                "the name stands for another file from its next lookup, as after a rename over it")
        #expect(String(decoding: try fs.read(plan.rawValue, offset: 0, size: 4096), as: UTF8.self) == saved.text,
                "the file programs hold keeps the bytes it showed")
        let current = try fs.lookup(parent: notes.rawValue, name: "Plan.md").attributes.inode
        #expect(current != plan)

        let last = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        let id = last.item.id
        try library.reopened().write { try $0.trash(id: id) }
        #expect(try poll() == [.content(notes), .deletion(parent: notes, child: current, name: "Plan.md")])
        #expect(String(decoding: try fs.read(current.rawValue, offset: 0, size: 4096), as: UTF8.self) == last.text,
                "a program holding the deleted file still reads it")

        try library.reopened().write { _ = try $0.restore(id: id) }
        #expect(try poll() == [.entry(parent: notes, name: "Plan.md"), .content(notes)],
                "back: its cached \"no such file\" goes, and the folder's cached listing")
        try library.reopened().write { try $0.trash(id: id) }
        #expect(try poll() == [.content(notes), .deletion(parent: notes, child: current, name: "Plan.md")])
    }

    @Test func ownSavesNeedNoInvalidation() throws {
        let notes = try fs.lookup(parent: InodeTable.rootInode, name: "Notes").attributes.inode
        let plan = try fs.lookup(parent: notes.rawValue, name: "Plan.md").attributes.inode
        _ = try fs.write(plan.rawValue, offset: 0, data: Array("More.\n".utf8), appending: true)
        try fs.saves.save(plan.rawValue)
        #expect(try poll().isEmpty)
    }

    /// The first read after a save is answered from the saved bytes; a change from elsewhere
    /// comes as another file at the name, and the one read so far keeps showing the saved bytes.
    @Test func readsAfterASaveShowItsBytesAndAChangeFromElsewhereIsAnotherFile() throws {
        let notes = try fs.lookup(parent: InodeTable.rootInode, name: "Notes").attributes.inode
        let plan = try fs.lookup(parent: notes.rawValue, name: "Plan.md").attributes.inode.rawValue
        _ = try fs.write(plan, offset: 0, data: Array("More.\n".utf8), appending: true)
        try fs.saves.save(plan)
        let saved = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        #expect(fs.saves.recentSaves.content(of: saved.item.id, version: saved.version) == saved.content)
        #expect(String(decoding: try fs.read(plan, offset: 0, size: 1 << 20), as: UTF8.self) == saved.text)

        try changeElsewhere("One.\n")
        _ = try poll()
        let changed = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        #expect(changed.text.contains("One."))
        #expect(String(decoding: try fs.read(plan, offset: 0, size: 1 << 20), as: UTF8.self) == saved.text)
        let current = try fs.lookup(parent: notes.rawValue, name: "Plan.md").attributes.inode.rawValue
        #expect(String(decoding: try fs.read(current, offset: 0, size: 1 << 20), as: UTF8.self) == changed.text)
    }

    /// A program that reads the file it holds after a change elsewhere gave the name another
    /// file read the version that file keeps: its next save is merged against that version.
    @Test func aReadOfAKeptFileIsThatVersionToItsReader() throws {
        let notes = try fs.lookup(parent: InodeTable.rootInode, name: "Notes").attributes.inode
        let plan = try fs.lookup(parent: notes.rawValue, name: "Plan.md").attributes.inode.rawValue
        let shown = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        try changeElsewhere("One.\n")
        _ = try poll()
        let editor: ProcessID = 4242
        _ = try fs.read(plan, offset: 0, size: 1 << 20, for: editor)
        #expect(fs.saves.served.readFrom(shown.item.id, by: [editor]) == [shown.version])
    }

    /// A listing made before a change from elsewhere hands the kernel the changed name alone,
    /// never an entry of the file it replaced (which the kernel would then keep the name on).
    @Test func aListingMadeBeforeAChangeElsewhereSendsTheChangedNameAlone() throws {
        let notes = try fs.lookup(parent: InodeTable.rootInode, name: "Notes").attributes.inode.rawValue
        let plan = try fs.lookup(parent: notes, name: "Plan.md").attributes.inode.rawValue
        let listed = try fs.list(notes).names.filter { $0.name == "Plan.md" }
        #expect(listed.map(\.inode) == [plan])
        try changeElsewhere("One.\n")
        _ = try poll()
        let entries = fs.entries(for: listed[...])
        guard case .nameOnly? = entries.first else {
            Issue.record("the replaced file's entry was sent: \(entries)")
            return
        }
    }

    /// What a program writes to a file deleted elsewhere meanwhile brings the item back.
    @Test func writesToAnItemDeletedElsewhereBringItBack() throws {
        let notes = try fs.lookup(parent: InodeTable.rootInode, name: "Notes").attributes.inode
        let plan = try fs.lookup(parent: notes.rawValue, name: "Plan.md").attributes.inode
        let record = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        _ = try fs.write(plan.rawValue, offset: 0, data: Array("Kept.\n".utf8), appending: true)
        try library.reopened().write { try $0.trash(id: record.item.id) }
        try follower.poll()
        try fs.saves.save(plan.rawValue)
        let back = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        #expect(back.item.id == record.item.id)
        #expect(back.text == record.text + "Kept.\n")
        #expect(fs.parts.names.resolve(MountPath("Notes/Plan.md")) == .item(record.item.id))
    }
}

final class SentInvalidations: Sendable {
    private let sent = Mutex<[Notifier.Invalidation]>([])

    func record(_ invalidation: Notifier.Invalidation) { sent.withLock { $0.append(invalidation) } }

    /// What was sent since the last call.
    func take() -> [Notifier.Invalidation] {
        sent.withLock { sent in
            defer { sent.removeAll() }
            return sent
        }
    }
}
