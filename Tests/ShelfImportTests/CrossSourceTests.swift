import Foundation
import TestSupport
import TestTraits
import Testing
import ShelfMarkdown
import ShelfModel
import ShelfStore
@testable import ShelfImport

/// Several apps' highlights of one book end in one file, each passage once.
@Suite(.scratchFolders) struct CrossSourceTests {
    @Test func theSameHighlightFromThreeSourcesLandsOnce() throws {
        let testLibrary = try TestLibrary()
        let store = testLibrary.store
        _ = try Importer().importFile(fixture("readwise_export.csv"), into: store)
        let fromSidecars = try Importer().importFile(fixture("koreader"), into: store)
        #expect(fromSidecars.updated >= 1)
        let fromJSON = try Importer().importFile(fixture("koreader_export.json"), into: store)
        #expect(fromJSON.added == 3, "only Meditations and its two highlights are new")

        #expect(try store.summaries(kind: .book).count == 6)
        let dune = try #require(try store.booksByTitle()["Dune"])
        let litanies = dune.passages.filter { HighlightText.normalized($0.text) == "I must not fear. Fear is the mind-killer." }
        #expect(litanies.count == 1)
        let litany = try #require(litanies.first)
        #expect(litany.text == "I must not fear. Fear is the mind-killer.", "the first source's text stays")
        #expect(litany.sources.count == 3)
        #expect(litany.chapter == "Book One: Dune" && litany.page == 42 && litany.note == "The litany.")
        #expect(dune.passages.count == 4, "two from Readwise, two more from KOReader")
    }

    @Test func aCatalogueAndFourHighlightSourcesGiveOneFilePerBookThatPythonFrontmatterReads() throws {
        let testLibrary = try TestLibrary()
        let (temporary, store) = (testLibrary.scratch, testLibrary.store)
        let kobo = try koboWithDune(in: temporary, highlight: "I must not fear.\nFear is the mind-killer.")
        for source in [fixture("goodreads_library_export.csv"), fixture("readwise_export.csv"), fixture("koreader"),
                       fixture("calibre"), kobo.folder] {
            _ = try Importer().importFile(source, into: store)
        }
        let dunes = try store.booksByTitle().values.filter { $0.title.hasPrefix("Dune") }
        #expect(dunes.map(\.title) == ["Dune (Dune Chronicles #1)"], "one file for Dune")
        let dune = try #require(dunes.first)
        let litany = dune.passages.filter { HighlightText.normalized($0.text) == "I must not fear. Fear is the mind-killer." }
        #expect(litany.count == 1)
        #expect(litany.first?.sources.map { String($0.key.prefix { $0 != ":" }) } == ["readwise", "koreader", "calibre", "kobo"])

        let export = temporary.url.appendingPathComponent("export")
        _ = try Exporter.export(store, to: export)
        let script = """
            import frontmatter, pathlib, sys
            books = sorted(pathlib.Path("Books").rglob("*.md"))
            for path in books:
                post = frontmatter.load(path)
                assert post.metadata.get("title"), path
                assert "## Passages" in post.content, path
            print(len(books))
            """
        let result = try CommandRunner.run("python3", ["-c", script], in: export.path, timeout: .seconds(60))
        #expect(result.succeeded, "\(result)")
        #expect(Int(result.stdout.trimmed()) == (try store.summaries(kind: .book).count))
    }

    @Test func aCatalogueImportedAfterTheHighlightsJoinsTheirBooksByISBN() throws {
        let testLibrary = try TestLibrary()
        let (temporary, store) = (testLibrary.scratch, testLibrary.store)
        let kobo = try koboWithDune(in: temporary, highlight: "I must not fear.")
        _ = try Importer().importFile(kobo.folder, into: store)
        _ = try Importer().importFile(fixture("goodreads_library_export.csv"), into: store)
        let dunes = try store.booksByTitle().values.filter { $0.title.hasPrefix("Dune") }
        #expect(dunes.count == 1, "\(dunes.map(\.title))")
        #expect(dunes.first?.passages.count == 1)
        let again = try Importer().importFile(fixture("goodreads_library_export.csv"), into: store)
        #expect(again.added == 0 && again.updated == 0, "\(again)")
    }

    /// A Kobo holding Dune (by its ISBN-10) with one highlight.
    func koboWithDune(in temporary: TemporaryFolder, highlight: String) throws -> KoboDevice {
        let kobo = try KoboDevice(in: temporary)
        try kobo.addBook("file:///mnt/onboard/Dune.epub", title: "Dune", author: "Frank Herbert", isbn: "0441013597")
        try kobo.addBookmark("b1", book: "file:///mnt/onboard/Dune.epub", text: highlight)
        return kobo
    }

    @Test func normalisedTextIgnoresQuotesAndSpacing() {
        #expect(HighlightText.normalized("“The spice”  must\nflow.") == HighlightText.normalized("\"The spice\" must flow."))
        #expect(HighlightText.normalized("it’s café") == HighlightText.normalized("it's cafe\u{301}"))
        #expect(HighlightText.normalized("The spice") != HighlightText.normalized("The Spice"))
    }

    @Test func storeOnlyFieldsSurviveASaveOfTheRenderedFile() throws {
        let testLibrary = try TestLibrary()
        let store = testLibrary.store
        _ = try Importer().importFile(fixture("readwise_export.csv"), into: store)
        let dune = try #require(try store.booksByTitle()["Dune"])
        let record = try #require(try store.record(id: dune.id))
        let edited = Data(record.text.replacingOccurrences(of: "**Note**: The litany.", with: "**Note**: Mine now.").utf8)
        _ = try store.write { try $0.saveFile(edited, of: dune.id, kind: .book, at: record.path, basedOn: record.version, modified: Date()) }
        let saved = try #require(try store.booksByTitle()["Dune"])
        #expect(saved.passages[0].note == "Mine now.")
        #expect(saved.passages[0].sources == dune.passages[0].sources && saved.passages[0].color == "yellow")
        let again = try Importer().importFile(fixture("readwise_export.csv"), into: store)
        #expect(again.added == 0 && again.updated == 0)
        #expect(try store.booksByTitle()["Dune"]?.passages[0].note == "Mine now.")
    }
}
