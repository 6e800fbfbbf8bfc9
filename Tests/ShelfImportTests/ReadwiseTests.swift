import Foundation
import TestSupport
import TestTraits
import Testing
import ShelfModel
import ShelfStore
@testable import ShelfImport

@Suite(.scratchFolders) struct ReadwiseTests {
    @Test func highlightsAreGroupedIntoBooksByTitleAndAuthor() throws {
        let testLibrary = try TestLibrary()
        let store = testLibrary.store
        let summary = try Importer().importFile(fixture("readwise_export.csv"), into: store)
        #expect(summary.format == .readwise)
        #expect(summary.added == 9 && summary.skipped == 1, "four books, five passages; one row has no book")
        #expect(summary.problems == [ImportProblem(line: 8, message: "the row has no Book Title, so its highlight belongs to no book")])

        let books = try store.booksByTitle()
        let dune = try #require(books["Dune"])
        #expect(dune.author == "Frank Herbert" && dune.tags == ["scifi"])
        #expect(dune.extraProperties["amazon_book_id"] == .string("B00B7NPRY8"))
        #expect(dune.passages.map(\.text) == ["I must not fear. Fear is the mind-killer.", "“The spice must flow.”"])
        let litany = dune.passages[0]
        #expect(litany.note == "The litany." && litany.tags == ["fear", "favorite"] && litany.color == "yellow")
        #expect(litany.location == "1234" && litany.dateAdded == CalendarDate(year: 2025, month: 11, day: 3))
        #expect(litany.sources.first?.key.hasPrefix("readwise:") == true)
        #expect(dune.passages[1].note == nil)

        let pragmatic = try #require(books["The Pragmatic Programmer"])
        #expect(pragmatic.author == "Andrew Hunt, David Thomas")
        #expect(pragmatic.passages.first?.page == 5)
        #expect(pragmatic.passages.first?.note == "Fix each one.\nAs soon as it is discovered.", "CRLF inside a cell becomes one line break")
        #expect(books["Unicode Reader"]?.passages.first?.text == "Ἐν ἀρχῇ ἦν ὁ λόγος — 日本語も.")
        #expect(books["Unicode Reader"]?.author == "Zoë Ünal" && books["Unicode Reader"]?.passages.first?.location == "order 3")
        #expect(books["Notes Only"]?.passages.map(\.text) == [""])
        #expect(books["Notes Only"]?.passages.first?.note == "A thought without a highlight.")

        let rendered = try #require(try store.record(id: dune.id)).text
        #expect(rendered.contains("### Location 1234\n> I must not fear. Fear is the mind-killer."))
        #expect(rendered.contains("**Tags**: fear, favorite\n"))
    }

    @Test func reImportingReportsEverythingUnchangedAndWritesNothing() throws {
        let testLibrary = try TestLibrary()
        let store = testLibrary.store
        _ = try Importer().importFile(fixture("readwise_export.csv"), into: store)
        let sequence = try store.lastSequence()
        let again = try Importer(format: .readwise).importFile(fixture("readwise_export.csv"), into: store)
        #expect(again.added == 0 && again.updated == 0 && again.unchanged == 9)
        #expect(again.description.hasPrefix("readwise: 0 added, 0 updated, 9 unchanged, 1 skipped"))
        #expect(try store.lastSequence() == sequence)
    }

    @Test func missingAndUnknownColumnsAreReported() throws {
        let testLibrary = try TestLibrary()
        let (temporary, store) = (testLibrary.scratch, testLibrary.store)
        let file = try temporary.file("older.csv", """
            Highlight,Book Title,Book Author,Note,Location,Highlighted at,Readwise URL
            Simplify.,Walden,Henry David Thoreau,,12,2024-05-01 10:00:00+00:00,https://readwise.io/open/1

            """)
        let summary = try Importer().importFile(file, into: store)
        #expect(summary.format == .readwise && summary.added == 2)
        #expect(summary.omissions.contains("readwise: the file has no Color column (another export version?), so colours were not imported"))
        #expect(summary.omissions.contains("readwise: the column Readwise URL is not one Shelf reads, so it was left out"))
        #expect(!summary.omissions.contains { $0.contains("Note column") })
        #expect(try store.booksByTitle()["Walden"]?.passages.first?.location == "12")
    }

    @Test func anExplicitFormatWinsOverDetection() throws {
        let testLibrary = try TestLibrary()
        let store = testLibrary.store
        let summary = try Importer(format: .csv).importFile(fixture("readwise_export.csv"), into: store)
        #expect(summary.format == .csv)
        #expect(try store.booksByTitle()["Dune"]?.passages.isEmpty == true, "as a plain CSV, rows are books")
    }

    @Test func aCSVWithoutReadwisesColumnsIsRefused() throws {
        let testLibrary = try TestLibrary()
        let store = testLibrary.store
        let file = fixture("goodreads_library_export.csv")
        let error = #expect(throws: ImportError.self) { try Importer(format: .readwise).importFile(file, into: store) }
        #expect(error == .notFormat(path: file.path, format: .readwise,
                                    reason: "its first line lacks Readwise's columns Highlight, Book Title, Book Author and Highlighted at"))
        #expect(try store.summaries().isEmpty)
    }
}
