import Foundation
import TestSupport
import TestTraits
import Testing
import ShelfModel
import ShelfStore
@testable import ShelfImport

@Suite(.scratchFolders) struct KindleTests {
    @Test func authorIsTheLastParenthesisedGroup() {
        #expect(KindleClippings.titleAndAuthor("Dune (Dune Chronicles, Book 1) (Frank Herbert)")
                == ("Dune (Dune Chronicles, Book 1)", "Frank Herbert"))
        #expect(KindleClippings.titleAndAuthor("Essays (Montaigne (Michel de))") == ("Essays", "Montaigne (Michel de)"))
        #expect(KindleClippings.titleAndAuthor("Meditations") == ("Meditations", nil))
    }

    @Test func parsesEntriesWithBOMsAndCRLF() throws {
        let text = try String(contentsOf: fixture("My Clippings.txt"), encoding: .utf8)
        let (clippings, problems) = KindleClippings.parse(text)
        #expect(clippings.map(\.kind) == [.highlight, .bookmark, .highlight, .note, .highlight, .highlight])
        #expect(clippings.map(\.line) == [1, 6, 11, 16, 21, 26])
        let first = clippings[0]
        #expect(first.title == "Dune (Dune Chronicles, Book 1)" && first.author == "Frank Herbert")
        #expect(first.page == 42 && first.location?.description == "1234-1236")
        #expect(first.dateAdded == CalendarDate(year: 2025, month: 12, day: 29))
        #expect(first.text == "I must not fear.")
        #expect(clippings[4].page == nil && clippings[4].location?.description == "502-505")
        #expect(problems.map(\.line) == [31])
    }

    @Test func abbreviatedLocationRanges() {
        #expect(KindleLocation(parsing: "1234-40")?.description == "1234-1240")
        #expect(KindleLocation(parsing: "98-102")?.description == "98-102")
        #expect(KindleLocation(parsing: "x-2") == nil)
    }

    @Test func importsHighlightsAsPassagesWithNotesAndExtensions() throws {
        let testLibrary = try TestLibrary()
        let store = testLibrary.store
        var progress: [ImportProgress] = []
        let summary = try Importer().importFile(fixture("My Clippings.txt"), into: store) { progress.append($0) }
        #expect(summary.format == .kindle)
        #expect(progress.last == ImportProgress(done: 7, total: 7))
        #expect(progress.map(\.done) == progress.map(\.done).sorted())
        #expect(summary.added == 3 && summary.skipped == 2, "one bookmark, one unreadable entry")
        #expect(summary.problems.map(\.line) == [31])

        let books = try store.booksByTitle()
        let dune = try #require(books["Dune (Dune Chronicles, Book 1)"])
        #expect(dune.author == "Frank Herbert")
        #expect(dune.passages.count == 1)
        #expect(dune.passages.first?.text == "I must not fear. Fear is the mind-killer.")
        #expect(dune.passages.first?.location == "1234-1240" && dune.passages.first?.page == 42)
        #expect(dune.passages.first?.note == "The litany against fear.")
        #expect(books["The Pragmatic Programmer"]?.author == "Hunt, Andrew; Thomas, David")
        #expect(books["Meditations"]?.author == nil)
        #expect(books["Meditations"]?.sourceID == DerivedSourceID.forBook(title: "Meditations", author: nil))
    }

    @Test func importingTwiceAddsNothingAndALongerFileAddsOnlyWhatIsNew() throws {
        let testLibrary = try TestLibrary()
        let store = testLibrary.store
        _ = try Importer().importFile(fixture("My Clippings.txt"), into: store)
        let sequence = try store.lastSequence()

        let again = try Importer().importFile(fixture("My Clippings.txt"), into: store)
        #expect(again.added == 0 && again.updated == 0 && again.unchanged == 3)
        #expect(try store.lastSequence() == sequence)

        let later = try Importer().importFile(fixture("My Clippings later.txt"), into: store)
        #expect(later.added == 1 && later.updated == 1 && later.unchanged == 2)
        let books = try store.booksByTitle()
        #expect(books["Dune (Dune Chronicles, Book 1)"]?.passages.map(\.location) == ["1234-1240", "1250-1252"])
        let pragmatic = try #require(books["The Pragmatic Programmer"]?.passages)
        #expect(pragmatic.count == 1)
        #expect(pragmatic.first?.text == "Don't live with broken windows. Fix each one as soon as it is discovered.")
        #expect(pragmatic.first?.location == "502-509")
    }

    @Test func highlightsJoinABookImportedFromElsewhereWithTheSameTitleAndAuthor() throws {
        let testLibrary = try TestLibrary()
        let store = testLibrary.store
        let existing = Book(title: "Meditations", sourceID: "goodreads:30659", passages: [Passage(text: "Mine.")])
        try store.insert(.book(existing))
        _ = try Importer(format: .kindle).importFile(fixture("My Clippings.txt"), into: store)
        let meditations = try #require(try store.record(id: existing.id)?.item)
        guard case .book(let book) = meditations else { Issue.record("not a book"); return }
        #expect(book.passages.map(\.text) == ["Mine.", "You have power over your mind - not outside events."])
        #expect(book.sourceID == "goodreads:30659")
        #expect(try store.summaries(kind: .book).count == 3)
    }

    @Test func highlightsFindAGoodreadsBookDespiteItsSeriesSuffixAndAnInvertedAuthor() throws {
        let testLibrary = try TestLibrary()
        let (folder, store) = (testLibrary.scratch, testLibrary.store)
        let goodreads = Book(title: "Dune (Dune, #1)", author: "Frank Herbert", sourceID: "goodreads:234225")
        try store.insert(.book(goodreads))
        let clippings = try folder.file("clippings.txt", """
            Dune (Herbert, Frank)
            - Your Highlight on page 8 | Location 120-121 | Added on Saturday, March 2, 2024 9:14:03 PM

            I must not fear.
            ==========

            """)
        _ = try Importer(format: .kindle).importFile(clippings, into: store)
        #expect(try store.summaries(kind: .book).count == 1)
        guard case .book(let book)? = try store.record(id: goodreads.id)?.item else { Issue.record("not a book"); return }
        #expect(book.passages.map(\.text) == ["I must not fear."])
        #expect(BookMatchKey(title: "Essays (Penguin Classics)", author: nil) != BookMatchKey(title: "Essays", author: nil))
    }

    @Test func aNoteWithoutAHighlightIsFoundAgainByItsKeyAfterTheReaderEditedIt() throws {
        let testLibrary = try TestLibrary()
        let (folder, store) = (testLibrary.scratch, testLibrary.store)
        let clippings = try folder.file("My Clippings.txt", """
            Meditations
            - Your Note on page 3 | Location 77 | Added on Wednesday, December 31, 2025 7:00:00 AM

            remember this
            ==========

            """)
        _ = try Importer(format: .kindle).importFile(clippings, into: store)
        var meditations = try #require(try store.booksByTitle()["Meditations"])
        #expect(meditations.passages.first?.sources.first?.key.hasPrefix("kindle:") == true)
        meditations.passages[0].note = "Remember this."
        try store.update(.book(meditations))
        let again = try Importer(format: .kindle).importFile(clippings, into: store)
        #expect(again.added == 0 && again.updated == 0)
        #expect(try store.booksByTitle()["Meditations"]?.passages.map(\.note) == ["Remember this."])
    }

    @Test func aNoteWithoutAHighlightIsKeptAsItsOwnPassage() {
        let note = KindleClipping(line: 1, title: "T", author: nil, kind: .note, page: 3,
                                  location: KindleLocation(parsing: "77"), text: "remember this")
        let passages = KindlePassages.passages(from: [note])
        #expect(passages.count == 1)
        #expect(passages.first?.note == "remember this" && passages.first?.location == "77")
    }
}
