import Foundation
import TestSupport
import TestTraits
import Testing
import ShelfModel
import ShelfStore
@testable import ShelfImport

@Suite(.scratchFolders) struct ExporterTests {
    private struct Fixture {
        let folder: TemporaryFolder
        let store: LibraryStore
        let exportFolder: URL

        init() throws {
            let library = try TestLibrary()
            (folder, store) = (library.scratch, library.store)
            exportFolder = folder.url.appendingPathComponent("export", isDirectory: true)
            _ = try Importer().importFile(fixture("goodreads_library_export.csv"), into: store)
            try store.insert(.note(Note(title: "Reading goals", content: "Twelve books.\n")))
        }

        func url(_ path: String) -> URL { exportFolder.appendingPathComponent(path) }

        /// Inode and modification time, which change when a file is replaced.
        func identity(_ path: String) throws -> [FileAttributeKey: AnyHashable] {
            let attributes = try FileManager.default.attributesOfItem(atPath: url(path).path)
            return [.systemFileNumber: attributes[.systemFileNumber] as! AnyHashable,
                    .modificationDate: attributes[.modificationDate] as! AnyHashable]
        }

        func exportedFiles() throws -> Set<String> {
            let enumerator = FileManager.default.enumerator(atPath: exportFolder.path)!
            return Set(enumerator.compactMap { $0 as? String }.filter { $0.hasSuffix(".md") })
        }
    }

    @Test func writesTheTreeTheMountShows() throws {
        let fixture = try Fixture()
        let summary = try Exporter.export(fixture.store, to: fixture.exportFolder)
        #expect(summary.written == 7 && summary.unchanged == 0 && summary.removed == 0)

        let records = try fixture.store.summaries().map { try #require(try fixture.store.record(id: $0.id)) }
        #expect(try fixture.exportedFiles() == Set(records.map(\.path)))
        for record in records {
            #expect(try String(contentsOf: fixture.url(record.path), encoding: .utf8) == record.text)
        }
        #expect(records.contains { $0.path.hasPrefix("Notes/") } && records.contains { $0.path.hasPrefix("Books/") })
        let leftovers = try FileManager.default.subpathsOfDirectory(atPath: fixture.exportFolder.path)
            .filter { $0.contains("shelf-tmp") }
        #expect(leftovers.isEmpty, "no temporary files stay behind")
    }

    /// An item at a path no item may have (a cloud let it in before Shelf checked its input)
    /// is reported with its path and why; every other file is still written.
    @Test func anItemAtAnInvalidPathIsReportedAndTheRestIsExported() throws {
        let fixture = try Fixture()
        let bad = try fixture.store.insert(.note(Note(title: "Pwned", content: "x\n")))
        let path = "../../../../../tmp/x/pwned-note.md"
        try LibraryDatabase.execute("UPDATE item SET path = ? WHERE id = ?", [path, bad.item.id.rawValue],
                                    inLibrary: fixture.store.folder)

        let summary = try Exporter.export(fixture.store, to: fixture.exportFolder)
        #expect(summary.written == 7)
        #expect(summary.refused.count == 1)
        #expect(summary.refused.first?.contains(path) == true && summary.refused.first?.contains("not a valid item path") == true,
                "\(summary.refused)")
        #expect(summary.description.contains("not exported: \(path)"))
        #expect(try fixture.exportedFiles().count == 7)
    }

    @Test func unchangedFilesAreNotTouchedAndChangedOnesAreReplaced() throws {
        let fixture = try Fixture()
        _ = try Exporter.export(fixture.store, to: fixture.exportFolder)
        let paths = try fixture.store.summaries().map(\.path)
        let before = try Dictionary(uniqueKeysWithValues: paths.map { ($0, try fixture.identity($0)) })

        let again = try Exporter.export(fixture.store, to: fixture.exportFolder)
        #expect(again.written == 0 && again.unchanged == 7)
        for path in paths { #expect(try fixture.identity(path) == before[path], "\(path)") }

        let note = try #require(try fixture.store.summaries(kind: .note).first)
        guard case .note(var changed)? = try fixture.store.record(id: note.id)?.item else {
            Issue.record("not a note")
            return
        }
        changed.title = "Reading goals for 2026"
        changed.content = "Twenty books.\n"
        let record = try fixture.store.update(.note(changed))
        let third = try Exporter.export(fixture.store, to: fixture.exportFolder)
        #expect(third.written == 1 && third.unchanged == 6)
        #expect(try String(contentsOf: fixture.url(record.path), encoding: .utf8) == record.text)
        // Replaced by rename: a new inode, so a reader holding the old file never sees a mix.
        #expect(try fixture.identity(record.path)[.systemFileNumber] != before[record.path]?[.systemFileNumber])
    }

    @Test func removesOnlyTheFilesOfDeletedItems() throws {
        let fixture = try Fixture()
        _ = try Exporter.export(fixture.store, to: fixture.exportFolder)
        let userFile = fixture.url("Books/my own list.md")
        try Data("mine\n".utf8).write(to: userFile)
        let userFolderFile = fixture.url("Attachments/cover.jpg")
        try FileManager.default.createDirectory(at: userFolderFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data([0xFF, 0xD8]).write(to: userFolderFile)

        let books = try fixture.store.summaries(kind: .book)
        let deleted = books[0], edited = books[1]
        try fixture.store.write { try $0.trash(id: deleted.id) }
        try fixture.store.write { try $0.trash(id: edited.id) }
        try Data("my edits\n".utf8).write(to: fixture.url(edited.path))

        let summary = try Exporter.export(fixture.store, to: fixture.exportFolder)
        #expect(summary.removed == 1 && summary.unchanged == 5)
        #expect(summary.keptEdited == [edited.path])
        #expect(!FileManager.default.fileExists(atPath: fixture.url(deleted.path).path))
        #expect(FileManager.default.fileExists(atPath: fixture.url(edited.path).path))
        #expect(FileManager.default.fileExists(atPath: userFile.path))
        #expect(FileManager.default.fileExists(atPath: userFolderFile.path))
    }

    @Test func aFolderEmptiedByRemovalsGoesToo() throws {
        let fixture = try Fixture()
        _ = try Exporter.export(fixture.store, to: fixture.exportFolder)
        let note = try #require(try fixture.store.summaries(kind: .note).first)
        try fixture.store.write { try $0.trash(id: note.id) }
        let summary = try Exporter.export(fixture.store, to: fixture.exportFolder)
        #expect(summary.removed == 1)
        #expect(!FileManager.default.fileExists(atPath: fixture.url("Notes").path))
        #expect(FileManager.default.fileExists(atPath: fixture.url(Exporter.manifestName).path))
    }

    @Test func aMovedItemLeavesNoStaleCopy() throws {
        let fixture = try Fixture()
        _ = try Exporter.export(fixture.store, to: fixture.exportFolder)
        let book = try #require(try fixture.store.summaries(kind: .book).first)
        let moved = try fixture.store.write { try $0.move(id: book.id, to: "Books/Shelved/Renamed.md") }
        let summary = try Exporter.export(fixture.store, to: fixture.exportFolder)
        #expect(summary.written == 1 && summary.removed == 1)
        #expect(!FileManager.default.fileExists(atPath: fixture.url(book.path).path))
        #expect(try String(contentsOf: fixture.url(moved.path), encoding: .utf8) == moved.text)
    }

    @Test func aFileThatCannotBeWrittenIsReportedAndTheOthersAreStillExported() throws {
        let fixture = try Fixture()
        let note = try #require(try fixture.store.summaries(kind: .note).first)
        // A folder where the note's file belongs: the rename onto it fails.
        let blocker = fixture.url(note.path)
        try FileManager.default.createDirectory(at: blocker, withIntermediateDirectories: true)
        try Data("keep\n".utf8).write(to: blocker.appendingPathComponent("inside.txt"))

        let summary = try Exporter.export(fixture.store, to: fixture.exportFolder)
        #expect(summary.failed.count == 1)
        #expect(summary.failed.first?.hasPrefix(blocker.path + ": ") == true, "\(summary.failed)")
        let others = try fixture.store.summaries().filter { $0.path != note.path }
        #expect(!others.isEmpty)
        for other in others {
            #expect(try Data(contentsOf: fixture.url(other.path)) == fixture.store.record(id: other.id)?.content)
        }
        #expect(summary.written == others.count)
        let notes = try FileManager.default.contentsOfDirectory(atPath: blocker.deletingLastPathComponent().path)
        #expect(notes == [blocker.lastPathComponent], "the temporary file was removed")
        #expect(try String(contentsOf: blocker.appendingPathComponent("inside.txt"), encoding: .utf8) == "keep\n")
    }

    /// A title of 255 bytes: the export's temporary name must still fit NAME_MAX.
    @Test func aLongFileNameIsExported() throws {
        let fixture = try Fixture()
        let title = String(repeating: "é", count: 126)  // 252 bytes, the longest name the store makes
        let long = try fixture.store.insert(.note(Note(title: title, content: "Long.\n")))
        #expect(long.path.utf8.count > 240)
        let summary = try Exporter.export(fixture.store, to: fixture.exportFolder)
        #expect(summary.failed.isEmpty, "\(summary.failed)")
        #expect(try Data(contentsOf: fixture.url(long.path)) == long.content)
    }
}
