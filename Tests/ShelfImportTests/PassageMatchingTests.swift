import Foundation
import TestSupport
import TestTraits
import Testing
import ShelfModel
import ShelfStore
@testable import ShelfImport

/// Which highlights are one passage, whichever import brings them: a refrain highlighted twice
/// stays two passages, two highlights sharing a location stay two, an extended highlight
/// replaces its shorter version, and one highlight from two apps lands once.
@Suite(.scratchFolders) struct PassageMatchingTests {
    @Test func identicalKindleHighlightsAtTwoLocationsStayTwo() throws {
        let testLibrary = try TestLibrary()
        let (folder, store) = (testLibrary.scratch, testLibrary.store)
        let refrain = "Fear is the mind-killer."
        let clippings = try folder.file("My Clippings.txt", kindleClippings([("100-101", refrain), ("900-901", refrain)]))
        let first = try Importer(format: .kindle).importFile(clippings, into: store)
        #expect(first.added == 2)
        let again = try Importer(format: .kindle).importFile(clippings, into: store)
        #expect(again.added == 0 && again.updated == 0 && again.unchanged == 2)
        #expect(try duneOnly(in: store).passages.map(\.location) == ["100-101", "900-901"])

        let readwise = try folder.file("readwise.csv", readwiseExport([(refrain, "location", "900")]))
        _ = try Importer().importFile(readwise, into: store)
        let dune = try duneOnly(in: store)
        #expect(dune.passages.map(\.location) == ["100-101", "900-901"])
        #expect(dune.passages.map(\.sources.count) == [1, 2], "Readwise's highlight at 900 joins the passage at 900-901")
    }

    @Test func highlightsSharingALocationWithDifferentTextsStayTwo() throws {
        let testLibrary = try TestLibrary()
        let (folder, store) = (testLibrary.scratch, testLibrary.store)
        let readwise = try folder.file("readwise.csv", readwiseExport([
            ("I must not fear.", "location", "1234"), ("Fear is the mind-killer.", "location", "1234"),
        ]))
        let first = try Importer().importFile(readwise, into: store)
        #expect(first.added == 3, "the book and its two passages")
        let again = try Importer().importFile(readwise, into: store)
        #expect(again.added == 0 && again.updated == 0)
        #expect(try duneOnly(in: store).passages.map(\.text) == ["I must not fear.", "Fear is the mind-killer."])

        let kindle = try folder.file("My Clippings.txt", kindleClippings([("1234", "Fear is the mind-killer.")]))
        let fromKindle = try Importer(format: .kindle).importFile(kindle, into: store)
        #expect(fromKindle.added == 0)
        #expect(try duneOnly(in: store).passages.map(\.page) == [nil, 42], "the Kindle's highlight is the second of the two")
    }

    @Test func twoKindleHighlightsInOneLocationStayTwo() throws {
        let testLibrary = try TestLibrary()
        let (folder, store) = (testLibrary.scratch, testLibrary.store)
        let clippings = try folder.file("My Clippings.txt", kindleClippings([("1234", "Fear."), ("1234", "Mind-killer.")]))
        let summary = try Importer(format: .kindle).importFile(clippings, into: store)
        #expect(summary.added == 2)
        #expect(try duneOnly(in: store).passages.map(\.text) == ["Fear.", "Mind-killer."])
    }

    @Test func aKindleHighlightTheReaderEditedIsFoundAgainByItsKeyAndKeepsTheEdit() throws {
        let testLibrary = try TestLibrary()
        let (folder, store) = (testLibrary.scratch, testLibrary.store)
        let clippings = try folder.file("My Clippings.txt", kindleClippings([("1234", "I must nto fear."), ("1234", "Fear is the mind-killer.")]))
        _ = try Importer(format: .kindle).importFile(clippings, into: store)
        var dune = try duneOnly(in: store)
        dune.passages[0].text = "I must not fear."
        dune.passages[0].note = "Typo fixed."
        try store.update(.book(dune))

        let again = try Importer(format: .kindle).importFile(clippings, into: store)
        #expect(again.added == 0 && again.updated == 0 && again.unchanged == 2)
        let passages = try duneOnly(in: store).passages
        #expect(passages.map(\.text) == ["I must not fear.", "Fear is the mind-killer."])
        #expect(passages.first?.note == "Typo fixed.")
        #expect(Set(passages.flatMap(\.sources).map(\.key)).count == 2, "two highlights sharing a location, two keys")
    }

    @Test func aPassageAnOlderShelfImportedFromAKindleTakesItsKeyOnTheFirstReimport() throws {
        let testLibrary = try TestLibrary()
        let (folder, store) = (testLibrary.scratch, testLibrary.store)
        let stored = Passage(page: 42, location: "1234-1236", text: "I must not fear.")
        try store.insert(.book(Book(title: "Dune", author: "Frank Herbert", passages: [stored])))
        let clippings = try folder.file("My Clippings.txt", kindleClippings([("1234-1236", "I must not fear.")]))
        let first = try Importer(format: .kindle).importFile(clippings, into: store)
        #expect(first.added == 0 && first.updated == 1)
        var dune = try duneOnly(in: store)
        #expect(dune.passages.map(\.id) == [stored.id])
        // FNV-1a of "dune␟frank herbert␟1234-1236␟I must not fear."; a changed key would duplicate every Kindle passage.
        #expect(dune.passages.first?.sources.map(\.key) == ["kindle:371e228de4ebe766"])

        dune.passages[0].text = "I must not fear!"
        try store.update(.book(dune))
        let again = try Importer(format: .kindle).importFile(clippings, into: store)
        #expect(again.added == 0 && again.updated == 0)
        #expect(try duneOnly(in: store).passages.map(\.text) == ["I must not fear!"])
    }

    @Test func anExtendedKindleHighlightInALaterFileExtendsThePassageWhichThenCarriesBothKeys() throws {
        let testLibrary = try TestLibrary()
        let (folder, store) = (testLibrary.scratch, testLibrary.store)
        let shorter = try folder.file("My Clippings.txt", kindleClippings([("1234-1236", "I must not fear.")]))
        _ = try Importer(format: .kindle).importFile(shorter, into: store)
        let longer = "I must not fear. Fear is the mind-killer."
        let later = try folder.file("My Clippings later.txt", kindleClippings([("1234-1236", "I must not fear."), ("1234-1240", longer)]))
        let extended = try Importer(format: .kindle).importFile(later, into: store)
        #expect(extended.added == 0 && extended.updated == 1)
        let passages = try duneOnly(in: store).passages
        #expect(passages.map(\.text) == [longer])
        #expect(Set(passages.flatMap(\.sources).map(\.key)).count == 2)
        let again = try Importer(format: .kindle).importFile(later, into: store)
        #expect(again.added == 0 && again.updated == 0 && again.unchanged == 1)
    }

    @Test func onAPDFAnExtendedKindleHighlightInALaterFileExtendsThePassageOnTheSamePage() throws {
        let testLibrary = try TestLibrary()
        let (folder, store) = (testLibrary.scratch, testLibrary.store)
        let shorter = try folder.file("My Clippings.txt", kindleClippings([(nil, "I must not fear.")]))
        _ = try Importer(format: .kindle).importFile(shorter, into: store)
        let longer = "I must not fear. Fear is the mind-killer."
        let later = try folder.file("My Clippings later.txt", kindleClippings([(nil, "I must not fear."), (nil, longer)]))
        let extended = try Importer(format: .kindle).importFile(later, into: store)
        #expect(extended.added == 0 && extended.updated == 1)
        #expect(try duneOnly(in: store).passages.map(\.text) == [longer])
    }

    @Test func anExtendedKindleHighlightReplacesItsShorterVersionAndKeepsTheReadersNote() throws {
        let testLibrary = try TestLibrary()
        let stored = Passage(page: 42, location: "1234-1236", text: "I must not fear.", note: "Mine.")
        try testLibrary.store.insert(.book(Book(title: "Dune", author: "Frank Herbert", passages: [stored])))
        let passage = try importTheLongerLitany(into: testLibrary)
        #expect(passage.id == stored.id && passage.location == "1234-1240")
        #expect(passage.note == "Mine." && passage.page == 42)
    }

    @Test func aKindleHighlightExtendsTheShorterOneAnotherAppGave() throws {
        let testLibrary = try TestLibrary()
        let (folder, store) = (testLibrary.scratch, testLibrary.store)
        let readwise = try folder.file("readwise.csv", readwiseExport([("I must not fear.", "location", "1234")]))
        _ = try Importer().importFile(readwise, into: store)
        let passage = try importTheLongerLitany(into: testLibrary)
        #expect(passage.location == "1234-1240" && passage.sources.count == 2, "Readwise's key and the Kindle's")
        let again = try Importer().importFile(readwise, into: store)
        #expect(again.added == 0 && again.updated == 0, "Readwise finds its highlight by key")
    }

    @Test func onAPDFWithoutLocationsAnExtendedKindleHighlightReplacesItsShorterVersionOnTheSamePage() throws {
        let testLibrary = try TestLibrary()
        let (folder, store) = (testLibrary.scratch, testLibrary.store)
        let longer = "I must not fear. Fear is the mind-killer."
        let clippings = try folder.file("My Clippings.txt", kindleClippings([(nil, "I must not fear."), (nil, longer)]))
        let summary = try Importer(format: .kindle).importFile(clippings, into: store)
        #expect(summary.added == 1)
        #expect(try duneOnly(in: store).passages.map(\.text) == [longer])

        let readwise = try folder.file("readwise.csv", readwiseExport([("Fear is the mind-killer.", "page", "42")]))
        _ = try Importer().importFile(readwise, into: store)
        #expect(try duneOnly(in: store).passages.count == 2, "an app that names its highlights is not guessed to extend one")
    }

    @Test func theSameHighlightFromAKoboAndAKindleLandsOnce() throws {
        let testLibrary = try TestLibrary()
        let (folder, store) = (testLibrary.scratch, testLibrary.store)
        let kobo = try KoboDevice(in: folder)
        try kobo.addBook("file:///mnt/onboard/Dune.epub", title: "Dune", author: "Frank Herbert")
        try kobo.addBookmark("b1", book: "file:///mnt/onboard/Dune.epub", text: "“I must not fear.”", progress: 0.45)
        _ = try Importer().importFile(kobo.folder, into: store)
        #expect(try duneOnly(in: store).passages.map(\.location) == ["45% of chapter"])

        let clippings = try folder.file("My Clippings.txt", kindleClippings([("1234-1236", "\"I must not fear.\"")]))
        let summary = try Importer(format: .kindle).importFile(clippings, into: store)
        #expect(summary.added == 0 && summary.updated == 1)
        let passages = try duneOnly(in: store).passages
        #expect(passages.count == 1)
        #expect(passages.first?.location == "45% of chapter" && passages.first?.page == 42, "gaps filled, nothing overwritten")
        let again = try Importer().importFile(kobo.folder, into: store)
        #expect(again.added == 0 && again.updated == 0)
    }

    @Test func theSameHighlightFromAKindleAndAnAppWithoutALocationLandsOnce() throws {
        let testLibrary = try TestLibrary()
        let (folder, store) = (testLibrary.scratch, testLibrary.store)
        let clippings = try folder.file("My Clippings.txt", kindleClippings([("1234-1236", "\"I must not fear.\"")]))
        _ = try Importer(format: .kindle).importFile(clippings, into: store)
        let readwise = try folder.file("readwise.csv", readwiseExport([("“I must not fear.”", "order", "3")]))
        let summary = try Importer().importFile(readwise, into: store)
        #expect(summary.added == 0)
        let passages = try duneOnly(in: store).passages
        #expect(passages.count == 1)
        #expect(passages.first?.location == "1234-1236" && passages.first?.sources.count == 2)
    }

    /// Imports a Kindle's litany at 1234-1240 over the library's shorter "I must not fear.", and
    /// returns the one passage that must leave, with the longer text.
    private func importTheLongerLitany(into testLibrary: TestLibrary) throws -> Passage {
        let longer = "I must not fear. Fear is the mind-killer."
        let clippings = try testLibrary.scratch.file("My Clippings.txt", kindleClippings([("1234-1240", longer)]))
        let summary = try Importer(format: .kindle).importFile(clippings, into: testLibrary.store)
        #expect(summary.added == 0 && summary.updated == 1)
        let passages = try duneOnly(in: testLibrary.store).passages
        #expect(passages.map(\.text) == [longer])
        return try #require(passages.first)
    }

    /// The library's one book, which must be Dune.
    private func duneOnly(in store: LibraryStore) throws -> Book {
        let books = try store.booksByTitle()
        #expect(books.count == 1, "\(books.keys.sorted())")
        return try #require(books["Dune"])
    }

    /// A Kindle's `My Clippings.txt` with one highlight of Dune, on page 42, per (location, text);
    /// without a location, as in a PDF.
    private func kindleClippings(_ highlights: [(location: String?, text: String)]) -> String {
        var file = ""
        for highlight in highlights {
            let location = highlight.location.map { " | Location " + $0 } ?? ""
            file += "Dune (Frank Herbert)\n"
            file += "- Your Highlight on page 42\(location) | Added on Monday, December 29, 2025 10:15:00 PM\n\n"
            file += highlight.text + "\n==========\n"
        }
        return file
    }

    /// A Readwise export with one highlight of Dune per (text, location type, location).
    private func readwiseExport(_ highlights: [(text: String, type: String, location: String)]) -> String {
        var file = "Highlight,Book Title,Book Author,Note,Location Type,Location,Highlighted at\n"
        for highlight in highlights {
            file += "\"\(highlight.text.replacingOccurrences(of: "\"", with: "\"\""))\",Dune,Frank Herbert,,"
            file += "\(highlight.type),\(highlight.location),2025-11-03 21:14:05+00:00\n"
        }
        return file
    }
}
