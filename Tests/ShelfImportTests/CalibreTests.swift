import Foundation
import GRDB
import TestSupport
import TestTraits
import Testing
import ShelfModel
import ShelfStore
@testable import ShelfImport

/// Reads `Fixtures/calibre/metadata.db`, made by the real Calibre with scripts/make-calibre-fixture.
@Suite(.scratchFolders) struct CalibreTests {
    @Test func importsBooksWithTheirMetadataAndViewerHighlights() throws {
        let testLibrary = try TestLibrary()
        let store = testLibrary.store
        let before = try Data(contentsOf: fixture("calibre/metadata.db"))
        let summary = try Importer().importFile(fixture("calibre"), into: store)
        #expect(summary.format == .calibre)
        #expect(summary.added == 7 && summary.skipped == 1, "three books, four highlights; a bookmark skipped, a removed highlight left out")
        #expect(try Data(contentsOf: fixture("calibre/metadata.db")) == before)

        let books = try store.booksByTitle()
        let pragmatic = try #require(books["The Pragmatic Programmer"])
        #expect(pragmatic.author == "Andrew Hunt, David Thomas" && pragmatic.isbn == "9780201616224")
        #expect(pragmatic.rating == 5 && pragmatic.tags == ["programming", "craft"])
        #expect(pragmatic.extraProperties["identifiers"] == .map([Property(key: "amazon", value: .string("020161622X")),
                                                                  Property(key: "goodreads", value: .string("4099"))]))
        #expect(pragmatic.extraProperties["publisher"] == .string("Addison-Wesley"))
        #expect(pragmatic.extraProperties["published"] == .date(CalendarDate(year: 1999, month: 10, day: 20)!))
        #expect(pragmatic.extraProperties["languages"] == .list([.string("eng")]))
        #expect(pragmatic.extraProperties["shelfmark"] == .string("A3") && pragmatic.extraProperties["read_count"] == .int(2))
        #expect(pragmatic.extraProperties["calibre_path"] == .string("Andrew Hunt/The Pragmatic Programmer (1)"))
        #expect(pragmatic.introduction == "A **classic** on the craft. See [the publisher](https://pragprog.com/).\n\n- Tips\n- Stories\n\n")
        #expect(pragmatic.passages.map(\.text) == ["Don't live with broken windows.", "Use tracer bullets to find the target."])
        #expect(pragmatic.passages[0].note == "Fix each one\nas soon as it is discovered." && pragmatic.passages[1].note == nil)
        #expect(pragmatic.passages[0].chapter == "A Pragmatic Philosophy" && pragmatic.passages[0].color == "yellow")
        #expect(pragmatic.passages[0].sources.map(\.key) == ["calibre:pp-broken-windows"])

        let dune = try #require(books["Dune"])
        #expect(dune.rating == 4 && dune.isbn == "0441013597")
        #expect(dune.extraProperties["series"] == .string("Dune Chronicles") && dune.extraProperties["series_index"] == .int(1))
        #expect(dune.extraProperties["published"] == nil, "Calibre's year-101 placeholder is no date")
        let iliad = try #require(books["Ἰλιάς"])
        #expect(iliad.author == "Ὅμηρος" && iliad.isbn == nil)
        #expect(iliad.extraProperties["identifiers"] == .map([Property(key: "wikidata", value: .string("Q8275"))]))
        #expect(iliad.passages.first?.text == "Μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος")

        let again = try Importer(format: .calibre).importFile(fixture("calibre/metadata.db"), into: store)
        #expect(again.added == 0 && again.updated == 0 && again.unchanged == 7)
    }

    @Test func aCalibreHighlightAndAKoboHighlightOfTheSameBookLandOnce() throws {
        let testLibrary = try TestLibrary()
        let store = testLibrary.store
        _ = try Importer().importFile(fixture("calibre"), into: store)
        _ = try Importer().importFile(fixture("koreader_export.json"), into: store)
        let dune = try #require(try store.booksByTitle()["Dune"])
        #expect(dune.passages.count == 1)
        #expect(dune.passages.first?.sources.map { $0.key.prefix(while: { $0 != ":" }) } == ["calibre", "koreader"])
        #expect(dune.passages.first?.page == 42, "what the first source lacked, the second fills")
    }

    @Test func aLibraryWithoutSomeTablesImportsWhatItHas() throws {
        let testLibrary = try TestLibrary()
        let (temporary, store) = (testLibrary.scratch, testLibrary.store)
        let library = temporary.url.appendingPathComponent("Old Calibre Library")
        try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
        try DatabaseQueue(path: library.appendingPathComponent("metadata.db").path).write { db in
            try db.execute(sql: """
                CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT, uuid TEXT, path TEXT, pubdate TIMESTAMP, series_index REAL);
                CREATE TABLE authors (id INTEGER PRIMARY KEY, name TEXT);
                CREATE TABLE books_authors_link (id INTEGER PRIMARY KEY, book INTEGER, author INTEGER);
                INSERT INTO books VALUES (1, 'Walden', 'u-1', 'Henry David Thoreau/Walden (1)', NULL, 1.0);
                INSERT INTO authors VALUES (1, 'Henry David Thoreau');
                INSERT INTO books_authors_link VALUES (1, 1, 1);
                """)
        }
        let summary = try Importer().importFile(library, into: store)
        #expect(summary.format == .calibre && summary.added == 1)
        #expect(summary.omissions.contains("calibre: the library has no annotations table (Calibre before 5.0), so no highlights were imported"))
        #expect(summary.omissions.contains("calibre: the library has no books_tags_link table (another Calibre version?), so tags were not imported"))
        #expect(try store.booksByTitle()["Walden"]?.author == "Henry David Thoreau")
    }

    @Test func aDatabaseUnderAnotherNameNeedsItsFormat() throws {
        let testLibrary = try TestLibrary()
        let (temporary, store) = (testLibrary.scratch, testLibrary.store)
        let copy = temporary.url.appendingPathComponent("library-backup.db")
        try FileManager.default.copyItem(at: fixture("calibre/metadata.db"), to: copy)
        let error = #expect(throws: ImportError.self) { try Importer().importFile(copy, into: store) }
        #expect(error?.description.contains("add --format kobo or --format calibre") == true)
        #expect(try Importer(format: .calibre).importFile(copy, into: store).added == 7)
    }

    @Test func anotherDatabaseIsRefused() throws {
        let testLibrary = try TestLibrary()
        let (temporary, store) = (testLibrary.scratch, testLibrary.store)
        let text = try temporary.file("metadata.db", "not a database at all, just text\n")
        let error = #expect(throws: ImportError.self) { try Importer().importFile(text, into: store) }
        #expect(error == .notFormat(path: text.path, format: .calibre, reason: "it is not an SQLite database"))
        #expect(error?.description.contains("import the Calibre library folder (the one holding metadata.db)") == true)
        #expect(try store.summaries().isEmpty)
    }
}

@Suite(.scratchFolders) struct HTMLToMarkdownTests {
    @Test func paragraphsEmphasisLinksListsAndEntities() {
        #expect(HTMLToMarkdown.convert("<div><p>One &amp; <i>two</i>&nbsp;&#233;&#xE9;</p><p>Three<br/>four</p></div>")
                == "One & *two*\u{A0}éé\n\nThree\nfour")
        #expect(HTMLToMarkdown.convert("<h2>About</h2><ol><li>a <a href='x.html'>link</a></li><li>b<ul><li>c</li></ul></li></ol>end")
                == "**About**\n\n1. a [link](x.html)\n2. b\n  - c\n\nend")
        #expect(HTMLToMarkdown.convert("plain   text\n with  spaces") == "plain text with spaces")
    }
}
