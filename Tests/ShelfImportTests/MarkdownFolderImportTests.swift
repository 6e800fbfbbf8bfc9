import Foundation
import TestSupport
import TestTraits
import Testing
import ShelfModel
import ShelfStore
@testable import ShelfImport

/// Importing a folder laid out like the mount: exact bytes, identity by id or path, idempotence.
@Suite(.scratchFolders) struct MarkdownFolderImportTests {
    private struct Fixture {
        let folder: TemporaryFolder
        let store: LibraryStore
        let source: URL

        init() throws {
            let library = try TestLibrary()
            (folder, store) = (library.scratch, library.store)
            source = folder.url.appendingPathComponent("vault", isDirectory: true)
            try write("Books/Shelf A/Dune - Frank Herbert.md", """
                ---
                id: dune-1
                title: Dune
                author: Frank Herbert
                isbn: "0441013597"
                tags: [scifi, classics]
                ---
                # Dune

                ## Passages

                ### Page 8
                > I must not fear. ^p-0001

                """)
            try write("Notes/Loose thought.md", "No frontmatter here, just a thought.\n")
            try write("Notes/Broken.md", "---\nid: broken-1\ntitle: Broken\nfavorite: maybe\n---\nBody\n")
            try write("Notes/.hidden.md", "---\ntitle: Hidden\n---\n")
            try write("Notes/cover.png", "not markdown")
        }

        func write(_ path: String, _ text: String) throws {
            let url = source.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }

        func text(_ path: String) throws -> String {
            try String(contentsOf: source.appendingPathComponent(path), encoding: .utf8)
        }
    }

    @Test func importsEveryItemWithItsExactBytesAndPath() throws {
        let fixture = try Fixture()
        let summary = try Importer().importFile(fixture.source, into: fixture.store)
        #expect(summary.format == .markdown)
        #expect(summary.added == 2 && summary.skipped == 1)
        let problem = try #require(summary.problems.first)
        #expect(problem.file == "Notes/Broken.md" && problem.line == 4)

        let dune = try #require(try fixture.store.record(id: ItemID("dune-1")))
        #expect(dune.path == "Books/Shelf A/Dune - Frank Herbert.md")
        #expect(dune.text == (try fixture.text("Books/Shelf A/Dune - Frank Herbert.md")))
        guard case .book(let book) = dune.item else { Issue.record("Dune is not a book"); return }
        #expect(book.passages.map(\.text) == ["I must not fear."])

        let loose = try #require(try fixture.store.record(atPath: "Notes/Loose thought.md"))
        #expect(loose.item.title == "Loose thought")
        #expect(loose.text == "No frontmatter here, just a thought.\n")
    }

    @Test func importingAgainChangesNothingAndAnEditUpdatesInPlace() throws {
        let fixture = try Fixture()
        _ = try Importer().importFile(fixture.source, into: fixture.store)
        let sequence = try fixture.store.lastSequence()

        let again = try Importer().importFile(fixture.source, into: fixture.store)
        #expect(again.added == 0 && again.updated == 0 && again.unchanged == 2)
        #expect(try fixture.store.lastSequence() == sequence)

        let edited = try fixture.text("Books/Shelf A/Dune - Frank Herbert.md").replacingOccurrences(of: "tags: [scifi, classics]", with: "tags: [scifi]\nstatus: read")
        try fixture.write("Books/Shelf A/Dune - Frank Herbert.md", edited)
        try fixture.write("Notes/Loose thought.md", "A longer thought now.\n")
        let third = try Importer().importFile(fixture.source, into: fixture.store)
        #expect(third.updated == 2 && third.added == 0)
        let dune = try #require(try fixture.store.record(id: ItemID("dune-1")))
        #expect(dune.text == edited)
        guard case .book(let book) = dune.item else { Issue.record("Dune is not a book"); return }
        #expect(book.status == .read && book.tags == ["scifi"])
        #expect(try fixture.store.summaries(kind: .note).count == 1)
    }

    @Test func aFolderWithoutItemFoldersIsRefused() throws {
        let testLibrary = try TestLibrary()
        let (folder, store) = (testLibrary.scratch, testLibrary.store)
        let empty = folder.url.appendingPathComponent("empty", isDirectory: true)
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        #expect(throws: ImportError.notAMarkdownFolder(path: empty.path)) {
            try Importer().importFile(empty, into: store)
        }
        #expect(throws: ImportError.self) {
            try Importer(format: .markdown).importFile(fixture("goodreads_library_export.csv"), into: store)
        }
    }
}
