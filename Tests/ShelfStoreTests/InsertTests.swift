import Foundation
import Testing
import ShelfModel
import ShelfMarkdown
@testable import ShelfStore
import TestSupport
import TestTraits

@Suite("Inserting items", .scratchFolders)
struct InsertTests {
    @Test func aNewItemGetsVersionOneTheRenderAndItsKindFolder() throws {
        let library = try TestLibrary()
        let book = Item.book(Sample.book())
        let before = Date()
        let record = try library.store.insert(book)

        #expect(record.item == book)
        #expect(record.version == 1)
        #expect(record.text == MarkdownCodec.render(book))
        #expect(record.path == "Books/" + FileNaming.fileName(for: book))
        #expect(record.draftDiagnostics == nil)
        #expect(record.modified >= before)
        #expect(try library.store.record(id: book.id) == record)
        #expect(try library.store.record(atPath: record.path) == record)
        #expect(try library.store.changeEntries(after: 0) == [ChangeEntry(.added, book.id, record.path)])
    }

    @Test func theSummaryCarriesTheContentSizeInBytes() throws {
        let library = try TestLibrary()
        let note = Item.note(Sample.note("Café", favorite: true))
        let source = "---\nid: \(note.id)\ntitle: Café\nfavorite: true\n---\nÜnïcödé — 📚\n"
        let record = try library.store.insert(note, path: "Notes/Café.md", source: Data(source.utf8))
        let summary = try #require(try library.store.summary(id: note.id))

        #expect(record.text == source)
        #expect(summary == ItemSummary(id: note.id, kind: .note, title: "Café", path: "Notes/Café.md",
                                       version: 1, modified: record.modified, size: source.utf8.count,
                                       favorite: true, hasDraft: false))
        #expect(summary.size != source.count, "the fixture must make bytes and characters differ")
    }

    @Test func summariesListLiveItemsByPathAndFilterByKind() throws {
        let library = try TestLibrary()
        let books = try ["Zen", "Anathem", "Middlemarch"].map { try library.store.insert(.book(Sample.book($0))) }
        let note = try library.store.insert(.note(Sample.note()))

        #expect(try library.store.summaries().map(\.path) == (books.map(\.path) + [note.path]).sorted())
        #expect(try library.store.summaries(kind: .book).map(\.path) == books.map(\.path).sorted())
        #expect(try library.store.summaries(kind: .note).map(\.id) == [note.item.id])
    }

    @Test func anExplicitPathAndSourceTextAreKept() throws {
        let library = try TestLibrary()
        let book = Item.book(Sample.book())
        let source = "exactly the bytes the editor wrote\n"
        let record = try library.store.insert(book, path: "Books/Shelf/My Dune.md", source: Data(source.utf8))
        #expect(record.path == "Books/Shelf/My Dune.md")
        #expect(record.text == source)
    }

    @Test func sameTitlesGetDistinctDefaultPathsInTheirFolder() throws {
        let library = try TestLibrary()
        let first = try library.store.insert(.book(Sample.book()))
        let second = try library.store.insert(.book(Sample.book()))
        let expected = "Books/" + FileNaming.uniqued(FileNaming.fileName(for: second.item)) { "Books/" + $0 == first.path }
        #expect(second.path == expected)
        #expect(second.path != first.path)
    }

    @Test func aTakenExplicitPathIsRefused() throws {
        let library = try TestLibrary()
        let first = try library.store.insert(.book(Sample.book()))
        let other = Item.book(Sample.book("Other"))
        #expect(throws: StoreError.pathTaken(first.path)) { try library.store.insert(other, path: first.path) }
        #expect(try library.store.record(id: other.id) == nil)
        #expect(try library.store.changes(after: 0).count == 1)
    }

    @Test func aLiveIDCannotBeInsertedTwice() throws {
        let library = try TestLibrary()
        let first = try library.store.insert(.book(Sample.book()))
        var twin = Sample.book("Another title")
        twin.id = first.item.id
        #expect(throws: StoreError.itemExists(id: first.item.id, path: first.path)) {
            try library.store.insert(.book(twin))
        }
        #expect(try library.store.record(id: first.item.id) == first)
    }

    @Test(arguments: [
        ("/Books/Dune.md", ItemKind.book),
        ("Notes/Dune.md", .book),
        ("Books/Dune.md", .note),
        ("Dune.md", .book),
        ("Books/Dune.txt", .book),
        ("Books/.md", .book),
        ("Books/.hidden.md", .book),
        ("Books/.trash/Dune.md", .book),
        ("Notes/Ideas/.obsidian/Plan.md", .note),
        ("Books//Dune.md", .book),
        ("Books/./Dune.md", .book),
        ("Books/../Notes/Dune.md", .book),
        ("Books/Shelf/", .book),
        ("", .book),
        ("Books/Du\0ne.md", .book),
    ])
    func invalidPathsAreRefused(path: String, kind: ItemKind) throws {
        let library = try TestLibrary()
        let item: Item = kind == .book ? .book(Sample.book()) : .note(Sample.note())
        let error = #expect(throws: StoreError.self) { try library.store.insert(item, path: path) }
        guard case .invalidPath(let refused, let reason)? = error else {
            Issue.record("expected invalidPath, got \(String(describing: error))")
            return
        }
        #expect(refused == path)
        #expect(!reason.isEmpty)
        #expect(try library.store.summaries().isEmpty)
    }

    @Test func bookIDFindsTheLiveBookOfAnImportSource() throws {
        let library = try TestLibrary()
        let book = try library.store.insert(.book(Sample.book(sourceID: "goodreads:42")))
        try library.store.insert(.book(Sample.book("Other", sourceID: "goodreads:43")))
        let lookups = try library.store.write { writer in
            (try writer.bookID(sourceID: "goodreads:42"), try writer.bookID(sourceID: "goodreads:44"))
        }
        #expect(lookups.0 == book.item.id)
        #expect(lookups.1 == nil)
        try library.store.trash(id: book.item.id)
        #expect(try library.store.write { try $0.bookID(sourceID: "goodreads:42") } == nil)
    }

    /// An import's shape: thousands of inserts in one transaction, same-titled books given
    /// distinct paths through the path index. (Speed is measured by scripts/bench-core.)
    @Test func tenThousandBooksInsertInOneWrite() throws {
        let library = try TestLibrary()
        let books = (0..<10_000).map { Item.book(Sample.book("Book \($0 % 5_000)", author: "Author")) }
        try library.store.write { writer in
            for book in books { _ = try writer.insert(book, path: nil, source: nil) }
        }
        let listed = try library.store.summaries()
        #expect(listed.count == 10_000)
        #expect(Set(listed.map(\.path)).count == 10_000)
        #expect(listed.contains { $0.path == "Books/Book 7 - Author (2).md" })
        #expect(try library.store.lastSequence() == 10_000)
    }
}
