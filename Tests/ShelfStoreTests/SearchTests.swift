import Foundation
import Testing
import ShelfModel
@testable import ShelfStore
import TestSupport
import TestTraits

@Suite("Full-text search", .scratchFolders)
struct SearchTests {
    private static func library() throws -> (TestLibrary, dune: ItemRecord, note: ItemRecord) {
        let library = try TestLibrary()
        let passage = Passage(page: 42, text: "Fear is the mind-killer.", note: "Litany against fear",
                              aiSummary: "Courage through acceptance")
        var book = Sample.book(passages: [passage])
        book.introduction = "Set on the desert planet Arrakis."
        let dune = try library.store.insert(.book(book))
        let note = try library.store.insert(.note(Sample.note("Garden", content: "Plant tomatoes in spring.")))
        try library.store.insert(.book(Sample.book("Emma", author: "Jane Austen")))
        return (library, dune, note)
    }

    @Test(arguments: [
        ("Dune", "title"), ("Herbert", "author"), ("killer", "passage text"),
        ("litany", "passage note"), ("acceptance", "AI summary"), ("arrakis", "introduction"),
    ])
    func everySearchableFieldOfABookIsFound(word: String, field: String) throws {
        let (library, dune, _) = try Self.library()
        let hits = try library.store.search(word)
        #expect(hits.map(\.id) == [dune.item.id], "searching the \(field)")
        #expect(hits.first?.path == dune.path)
        #expect(hits.first?.kind == .book)
        #expect(hits.first?.title == "Dune")
    }

    @Test func noteContentIsFoundWithAMarkedSnippet() throws {
        let (library, _, note) = try Self.library()
        let hits = try library.store.search("TOMATOES")
        #expect(hits.map(\.id) == [note.item.id])
        #expect(hits.first?.snippet.contains("[tomatoes]") == true, "snippet: \(hits.first?.snippet ?? "none")")
    }

    @Test func everyWordMustMatch() throws {
        let (library, dune, _) = try Self.library()
        #expect(try library.store.search("fear mind").map(\.id) == [dune.item.id])
        #expect(try library.store.search("fear tomatoes").isEmpty)
    }

    @Test func theIndexFollowsUpdatesAndEmptiedTrash() throws {
        let (library, dune, note) = try Self.library()
        try library.store.update(Item.note(Sample.note("Garden", content: "Plant beans.")).withID(note.item.id))
        #expect(try library.store.search("tomatoes").isEmpty)
        #expect(try library.store.search("beans").map(\.id) == [note.item.id])
        // A save that changes no searchable text keeps the item found.
        let book = try #require({ if case .book(let book) = dune.item { book } else { nil } }())
        var paged = book
        paged.currentPage = 77
        try library.store.update(.book(paged), basedOn: dune.version)
        #expect(try library.store.search("fear").map(\.id) == [dune.item.id])

        try library.store.trash(id: dune.item.id)
        try library.store.emptyTrash()
        #expect(try library.store.search("fear").isEmpty)
    }

    /// FTS5 syntax in user text is searched as words: a query finds Dune exactly when its words
    /// (letters and digits) are in it, whatever quotes, operators or punctuation surround them,
    /// and a query of punctuation alone finds nothing (rather than everything, or an error).
    @Test(arguments: [
        ("\"unbalanced", false), ("fear\"", true), ("AND", false), ("fear OR", false), ("NEAR(fear", false),
        ("title:Dune", false), ("*", false), ("-fear", true), ("^fear", true), ("(", false), (")", false),
        ("'", false), ("\"\"", false), ("fear*", true), ("{title}: x", false), ("Dune \u{0}", true), ("💥", false),
    ])
    func anyUserTextIsSearchedAsWords(query: String, findsDune: Bool) throws {
        let (library, dune, _) = try Self.library()
        #expect(try library.store.search(query).map(\.id) == (findsDune ? [dune.item.id] : []))
    }

    @Test func quotedAndOperatorLikeWordsAreSearchedLiterally() throws {
        let (library, dune, _) = try Self.library()
        #expect(try library.store.search("\"fear").map(\.id) == [dune.item.id])
        #expect(try library.store.search("Dune:").map(\.id) == [dune.item.id], "a colon is no column filter")
        #expect(try library.store.search("Dune OR Emma").isEmpty, "OR is a word, not an operator")
    }

    /// Issue #22: `desperat*` found nothing.
    @Test func aWordEndingInAStarFindsEveryWordStartingSo() throws {
        let (library, dune, note) = try Self.library()
        #expect(try library.store.search("kill*").map(\.id) == [dune.item.id])
        #expect(try library.store.search("tomat*").map(\.id) == [note.item.id])
        #expect(try library.store.search("kill").isEmpty, "without the star a word is whole")
        #expect(try library.store.search("**").isEmpty)
    }

    @Test func aQueryTellsWhichPassagesHoldItsWords() throws {
        let query = try #require(SearchQuery("MIND-killer desperat*"))
        #expect(query.matchesAnyTerm("Fear is the mind-killer."))
        #expect(query.matchesAnyTerm("Lives of quiet désperation"))
        #expect(!query.matchesAnyTerm("the mind of a killer"), "a hyphenated word is a phrase")
        #expect(!query.matchesAnyTerm("desperate" .replacingOccurrences(of: "desp", with: "")))
    }

    @Test func blankQueriesFindNothing() throws {
        let (library, _, _) = try Self.library()
        #expect(try library.store.search("").isEmpty)
        #expect(try library.store.search("  \n\t ").isEmpty)
    }
}
