import Foundation
import TestSupport
import TestTraits
import Testing
import ShelfModel
import ShelfMarkdown
import ShelfStore
@testable import ShelfImport

@Suite(.scratchFolders) struct GoodreadsImportTests {
    @Test func importsEveryQuirkOfALibraryExport() throws {
        let testLibrary = try TestLibrary()
        let store = testLibrary.store
        var progress: [ImportProgress] = []
        let summary = try Importer().importFile(fixture("goodreads_library_export.csv"), into: store) { progress.append($0) }

        #expect(summary.format == .goodreads)
        #expect(summary.added == 6 && summary.updated == 0 && summary.skipped == 0)
        #expect(summary.problems.isEmpty)
        #expect(progress.map(\.done) == Array(1...6) && progress.allSatisfy { $0.total == 6 })

        let books = try store.booksByTitle()
        let dune = try #require(books["Dune (Dune Chronicles #1)"])
        #expect(dune.author == "Frank Herbert")
        #expect(dune.isbn == "0441013597")
        #expect(dune.extraProperties["isbn13"] == .string("9780441013593"))
        #expect(dune.rating == 5)
        #expect(dune.status == .read)
        #expect(dune.totalPages == 658)
        #expect(dune.dateFinished == CalendarDate(year: 2024, month: 3, day: 14))
        #expect(dune.dateAdded == CalendarDate(year: 2023, month: 12, day: 29))
        #expect(dune.tags == ["scifi", "favorites"])
        #expect(dune.sourceID == "goodreads:234225")
        #expect(dune.extraProperties["my_review"] == .string("A desert planet, a \"spice\" and politics.\r\nSecond paragraph of the review."))
        #expect(dune.extraProperties["average_rating"] == .double(4.27))
        #expect(dune.extraProperties["year_published"] == .int(2005))

        let shining = try #require(books["The Shining"])
        #expect(shining.rating == nil, "My Rating 0 is unrated")
        #expect(shining.isbn == "9780307743657", "ISBN13 when ISBN is empty")
        #expect(shining.extraProperties["isbn13"] == nil)
        #expect(shining.status == .toRead)
        #expect(shining.tags == ["horror"], "the exclusive shelf is the status, not a tag")
        #expect(shining.extraProperties["bookshelves_with_positions"] == .string("to-read (#41), horror (#2)"))

        let kings = try #require(books["The Way of Kings (The Stormlight Archive, #1)"])
        #expect(kings.status == .reading)
        #expect(kings.extraProperties["private_notes"] == .string("Reading on the train.\nTwo chapters a day."))

        let orwell = try #require(books["1984"])
        #expect(orwell.isbn == nil && orwell.totalPages == nil)
    }

    @Test func everyNonEmptyColumnIsAFieldOrAKeptProperty() throws {
        let testLibrary = try TestLibrary()
        let store = testLibrary.store
        _ = try Importer().importFile(fixture("goodreads_library_export.csv"), into: store)
        let kings = try #require(try store.booksByTitle()["The Way of Kings (The Stormlight Archive, #1)"])
        #expect(Set(kings.extraProperties.map(\.key)) == [
            "author_l_f", "isbn13", "average_rating", "publisher", "binding", "year_published",
            "original_publication_year", "bookshelves_with_positions", "private_notes", "read_count", "owned_copies",
        ])
        #expect(kings.extraProperties["author_l_f"] == .string("Sanderson, Brandon"))
    }

    @Test func reimportingTheSameFileChangesNothing() throws {
        let testLibrary = try TestLibrary()
        let store = testLibrary.store
        _ = try Importer().importFile(fixture("goodreads_library_export.csv"), into: store)
        let sequence = try store.lastSequence()
        let versions = try store.summaries().map(\.version)

        let again = try Importer().importFile(fixture("goodreads_library_export.csv"), into: store)
        #expect(again.added == 0 && again.updated == 0 && again.unchanged == 6)
        #expect(try store.lastSequence() == sequence)
        #expect(try store.summaries().map(\.version) == versions)
        #expect(try store.summaries(kind: .book).count == 6)
    }

    @Test func reimportKeepsWhatTheUserAddedInShelf() throws {
        let testLibrary = try TestLibrary()
        let (folder, store) = (testLibrary.scratch, testLibrary.store)
        _ = try Importer().importFile(fixture("goodreads_library_export.csv"), into: store)
        var dune = try #require(try store.booksByTitle()["Dune (Dune Chronicles #1)"])
        dune.passages = [Passage(page: 42, text: "I must not fear.")]
        dune.introduction = "My thoughts.\n"
        dune.appendix = "## Quotes to look up\n"
        dune.extraProperties.append(Property(key: "lent_to", value: .string("Sam")))
        dune.tags.append("reread")
        dune.currentPage = 100
        try store.update(.book(dune))

        // The next export: the rating changed on Goodreads.
        let original = try String(contentsOf: fixture("goodreads_library_export.csv"), encoding: .utf8)
        let changed = try folder.file("changed.csv", original.replacingOccurrences(of: "\",,,2,1", with: "\",,,3,1"))
        let summary = try Importer().importFile(changed, into: store)
        #expect(summary.updated == 1 && summary.unchanged == 5)

        let after = try #require(try store.booksByTitle()["Dune (Dune Chronicles #1)"])
        #expect(after.extraProperties["read_count"] == .int(3))
        #expect(after.passages == dune.passages)
        #expect(after.introduction == dune.introduction && after.appendix == dune.appendix)
        #expect(after.extraProperties["lent_to"] == .string("Sam"))
        #expect(after.tags == ["scifi", "favorites", "reread"])
        #expect(after.currentPage == 100)
        #expect(after.id == dune.id)
    }

    @Test func aBookWithAPendingInvalidEditIsNotOverwritten() throws {
        let testLibrary = try TestLibrary()
        let (folder, store) = (testLibrary.scratch, testLibrary.store)
        _ = try Importer().importFile(fixture("goodreads_library_export.csv"), into: store)
        let dune = try #require(try store.summaries(kind: .book).first { $0.title.hasPrefix("Dune") })
        let draft = "---\nid: \(dune.id)\nrating: lots\n---\n"
        try store.write { _ = try $0.saveDraft(id: dune.id, bytes: Data(draft.utf8), diagnostics: [Diagnostic(line: 3, message: "bad rating")]) }

        let original = try String(contentsOf: fixture("goodreads_library_export.csv"), encoding: .utf8)
        let changed = try folder.file("changed.csv", original.replacingOccurrences(of: "\",,,2,1", with: "\",,,3,1"))
        let summary = try Importer().importFile(changed, into: store)
        #expect(summary.skipped == 1 && summary.unchanged == 5)
        #expect(summary.problems.map(\.line) == [2])
        #expect(summary.problems.first?.message.contains(dune.path) == true)
        #expect(try store.record(id: dune.id)?.text == draft)
    }

    @Test func badRowsAreSkippedWithTheLineTheyStartOn() throws {
        let testLibrary = try TestLibrary()
        let store = testLibrary.store
        let summary = try Importer().importFile(fixture("goodreads_bad_rows.csv"), into: store)
        #expect(summary.added == 3 && summary.skipped == 3)
        #expect(summary.problems.map(\.line) == [4, 5, 9])
        #expect(summary.problems[0].message.contains("2025/13/45"))
        #expect(summary.problems[1].message.contains("title"))
        #expect(summary.problems[2].message.contains("five"))
        #expect(Set(try store.booksByTitle().keys) == ["Good One", "Good Two", "Good Three"])
    }
}
