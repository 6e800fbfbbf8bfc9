import Foundation
import TestSupport
import Testing
import ShelfMarkdown
import ShelfModel
import ShelfStore
@testable import ShelfImport

/// Several apps' highlights of one book end in one file, each passage once.
@Suite struct CrossSourceTests {
    @Test func theSameHighlightFromThreeSourcesLandsOnce() throws {
        let temporary = try TemporaryFolder()
        let store = try makeLibrary(temporary)
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

    @Test func normalisedTextIgnoresQuotesAndSpacing() {
        #expect(HighlightText.normalized("“The spice”  must\nflow.") == HighlightText.normalized("\"The spice\" must flow."))
        #expect(HighlightText.normalized("it’s café") == HighlightText.normalized("it's cafe\u{301}"))
        #expect(HighlightText.normalized("The spice") != HighlightText.normalized("The Spice"))
    }

    @Test func storeOnlyFieldsSurviveASaveOfTheRenderedFile() throws {
        let temporary = try TemporaryFolder()
        let store = try makeLibrary(temporary)
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
