import Foundation
import TestSupport
import TestTraits
import Testing
import ShelfModel
import ShelfStore
@testable import ShelfImport

@Suite(.scratchFolders) struct OtherFormatsTests {
    @Test func storyGraphExport() throws {
        let testLibrary = try TestLibrary()
        let store = testLibrary.store
        let summary = try Importer().importFile(fixture("storygraph_export.csv"), into: store)
        #expect(summary.format == .storygraph && summary.added == 3 && summary.problems.isEmpty)

        let books = try store.booksByTitle()
        let bloom = try #require(books["Bloom into You, Vol. 3"])
        #expect(bloom.author == "Nio Nakatani, Jenny McKeon")
        #expect(bloom.isbn == "9781626928275")
        #expect(bloom.rating == 4.25)
        #expect(bloom.status == .read)
        #expect(bloom.dateFinished == CalendarDate(year: 2020, month: 1, day: 20))
        #expect(bloom.tags == ["romance", "manga"])
        #expect(bloom.extraProperties["moods"] == .string("emotional, hopeful"))
        #expect(bloom.extraProperties["character_or_plot_driven"] == .string("Character"))
        #expect(bloom.extraProperties["dates_read"] == .string("2020/01/12-2020/01/20"))
        #expect(bloom.sourceID?.hasPrefix("title-author:") == true)

        let notes = try #require(books["Notes from Underground"])
        #expect(notes.status == .abandoned)
        #expect(notes.isbn == nil)
        #expect(notes.extraProperties["isbn_uid"] == .string("a81c3e7f-0b2d-4c55-9e1a-5d3f2b7c9e10"))
        #expect(notes.extraProperties["contributors"] == .string("Richard Pevear (Translator), Larissa Volokhonsky (Translator)"))

        let again = try Importer().importFile(fixture("storygraph_export.csv"), into: store)
        #expect(again.unchanged == 3 && again.added == 0)
    }

    @Test func notionDatabaseExport() throws {
        let testLibrary = try TestLibrary()
        let store = testLibrary.store
        let summary = try Importer().importFile(fixture("notion_books.csv"), into: store)
        #expect(summary.format == .notion && summary.added == 4 && summary.problems.isEmpty)

        let books = try store.booksByTitle()
        let dune = try #require(books["Dune"])
        #expect(dune.author == "Frank Herbert")
        #expect(dune.rating == 5)
        #expect(dune.status == .read)
        #expect(dune.tags == ["Sci-Fi", "Classics"])
        #expect(dune.dateFinished == CalendarDate(year: 2025, month: 12, day: 29))
        #expect(dune.dateAdded == CalendarDate(year: 2025, month: 12, day: 1))
        #expect(dune.totalPages == 658)
        #expect(dune.extraProperties["url"] == .string("https://www.goodreads.com/book/show/234225"))
        #expect(dune.extraProperties["notes"] == .string("Re-read for the film."))
        #expect(books["The Hobbit"]?.rating == 4)
        #expect(books["The Hobbit"]?.status == .reading)
        #expect(books["Circe"]?.dateFinished == CalendarDate(year: 2026, month: 1, day: 9))
        #expect(books["Circe"]?.rating == 4.5)
        #expect(books["Project Hail Mary"]?.status == .toRead)
    }

    @Test func genericCSVWithAColumnMap() throws {
        let testLibrary = try TestLibrary()
        let (folder, store) = (testLibrary.scratch, testLibrary.store)
        let file = try folder.file("mine.csv", """
            Book,Writer,Stars,Shelf,Finished On,Where
            Dune,Frank Herbert,4,scifi,2025-12-29,Home
            Emma,Jane Austen,,classics,,Office

            """)
        let map = try ColumnMap(arguments: ["Writer=author", "Stars=rating", "Where=location_shelf"])
        let summary = try Importer(columnMap: map).importFile(file, into: store)
        #expect(summary.format == .csv && summary.added == 2)
        let dune = try #require(try store.booksByTitle()["Dune"])
        #expect(dune.author == "Frank Herbert" && dune.rating == 4)
        #expect(dune.dateFinished == CalendarDate(year: 2025, month: 12, day: 29))
        #expect(dune.tags == ["scifi"])
        #expect(dune.extraProperties["location_shelf"] == .string("Home"))
    }

    @Test func keptColumnsNeverTakeAFieldsKey() throws {
        let testLibrary = try TestLibrary()
        let (folder, store) = (testLibrary.scratch, testLibrary.store)
        let file = try folder.file("two-titles.csv", "Name,Title,ID\nDune,Dune (1965),17\n")
        _ = try Importer().importFile(file, into: store)
        let dune = try #require(try store.booksByTitle()["Dune"])
        #expect(dune.extraProperties["notion_title"] == .string("Dune (1965)"))
        #expect(dune.extraProperties["notion_id"] == .int(17))
        #expect(dune.extraProperties["title"] == nil && dune.extraProperties["id"] == nil)
    }

    @Test func detectsFormatsFromTheirHeaders() throws {
        for (name, format) in [("goodreads_library_export.csv", ImportFormat.goodreads),
                               ("storygraph_export.csv", .storygraph), ("notion_books.csv", .notion)] {
            let text = try String(contentsOf: fixture(name), encoding: .utf8)
            let table = try #require(CSVTable(text: text))
            #expect(ImportFormat.detect(header: table.header, rows: table.records.map(\.cells)) == format)
        }
        #expect(ImportFormat.detect(header: ["Title", "Author"], rows: [["Dune", "Frank Herbert"]]) == .csv)
        #expect(ImportFormat.detect(header: ["Book", "Author"],
                                    rows: [["Dune", "Frank Herbert (https://www.notion.so/Frank-Herbert-8d2c)"]]) == .notion)
    }
}
