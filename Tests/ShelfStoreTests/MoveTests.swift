import Foundation
import Testing
import ShelfModel
@testable import ShelfStore
import TestSupport
import TestTraits

@Suite("Renaming items and folders", .scratchFolders)
struct MoveTests {
    @Test func aMoveChangesThePathOnly() throws {
        let library = try TestLibrary()
        let original = try library.store.insert(.book(Sample.book()))
        let moved = try library.store.move(id: original.item.id, to: "Books/Favourites/Dune.md")

        var expected = original
        expected.path = "Books/Favourites/Dune.md"
        #expect(moved == expected)
        #expect(try library.store.record(id: original.item.id) == expected)
        #expect(try library.store.record(atPath: original.path) == nil)
        #expect(try library.store.changeEntries(after: 1)
                == [ChangeEntry(.updated, original.item.id, moved.path, previousPath: original.path)])
    }

    @Test func aMoveToItsOwnPathIsANoOp() throws {
        let library = try TestLibrary()
        let original = try library.store.insert(.note(Sample.note()))
        #expect(try library.store.move(id: original.item.id, to: original.path) == original)
        #expect(try library.store.lastSequence() == 1)
    }

    @Test func aMoveOntoAnotherItemOrOutOfItsKindFolderIsRefused() throws {
        let library = try TestLibrary()
        let dune = try library.store.insert(.book(Sample.book()))
        let emma = try library.store.insert(.book(Sample.book("Emma", author: "Jane Austen")))

        #expect(throws: StoreError.pathTaken(emma.path)) { try library.store.move(id: dune.item.id, to: emma.path) }
        let error = #expect(throws: StoreError.self) { try library.store.move(id: dune.item.id, to: "Notes/Dune.md") }
        #expect(error.map { if case .invalidPath = $0 { true } else { false } } == true)
        #expect(throws: StoreError.itemNotFound(ItemID("nobody"))) {
            try library.store.move(id: ItemID("nobody"), to: "Books/X.md")
        }
        #expect(try library.store.record(id: dune.item.id) == dune)
        #expect(try library.store.lastSequence() == 2)
    }

    @Test func aFolderMoveTakesEverythingUnderItAndNothingElse() throws {
        let library = try TestLibrary()
        let inside = try library.store.insert(.book(Sample.book()), path: "Books/Fantasy/Dune.md")
        let deeper = try library.store.insert(.book(Sample.book("Emma")), path: "Books/Fantasy/Old/Emma.md")
        let sibling = try library.store.insert(.book(Sample.book("Zen")), path: "Books/Fantasy2/Zen.md")
        let outside = try library.store.insert(.book(Sample.book("Ulysses")), path: "Books/Ulysses.md")
        let sequence = try library.store.lastSequence()

        try library.store.moveFolder(from: "Books/Fantasy", to: "Books/Shelves/Fiction")

        #expect(try library.store.summaries().map(\.path).sorted() == [
            "Books/Fantasy2/Zen.md", "Books/Shelves/Fiction/Dune.md", "Books/Shelves/Fiction/Old/Emma.md",
            "Books/Ulysses.md",
        ])
        for unchanged in [sibling, outside] {
            #expect(try library.store.record(id: unchanged.item.id) == unchanged)
        }
        var movedDune = inside
        movedDune.path = "Books/Shelves/Fiction/Dune.md"
        #expect(try library.store.record(id: inside.item.id) == movedDune)
        #expect(Set(try library.store.changeEntries(after: sequence)) == [
            ChangeEntry(.updated, inside.item.id, "Books/Shelves/Fiction/Dune.md", previousPath: inside.path),
            ChangeEntry(.updated, deeper.item.id, "Books/Shelves/Fiction/Old/Emma.md", previousPath: deeper.path),
        ])
    }

    @Test func aFolderMoveOntoATakenPathMovesNothing() throws {
        let library = try TestLibrary()
        let first = try library.store.insert(.book(Sample.book("A")), path: "Books/From/A.md")
        let second = try library.store.insert(.book(Sample.book("B")), path: "Books/From/B.md")
        let blocker = try library.store.insert(.book(Sample.book("B")), path: "Books/To/B.md")
        let sequence = try library.store.lastSequence()

        // Inside one transaction, as an import would: the error is caught and the work goes on.
        let attempt = try library.store.write { writer in
            Result { try writer.moveFolder(from: "Books/From", to: "Books/To") }
        }
        #expect(throws: StoreError.pathTaken(blocker.path)) { try attempt.get() }
        for record in [first, second, blocker] {
            #expect(try library.store.record(id: record.item.id) == record)
        }
        #expect(try library.store.lastSequence() == sequence)
    }

    @Test(arguments: [
        ("Books/A", "Books/A/B"),
        ("Books/A/B", "Books/A"),
        ("Books", "Books2"),
        ("Books/A", "Notes/A"),
        ("Books/A", "/Books/B"),
        ("Books/A", "Books/../B"),
    ])
    func impossibleFolderMovesAreRefused(from: String, to: String) throws {
        let library = try TestLibrary()
        let record = try library.store.insert(.book(Sample.book()), path: "Books/A/Dune.md")
        let error = #expect(throws: StoreError.self) { try library.store.moveFolder(from: from, to: to) }
        #expect(error.map { if case .invalidPath = $0 { true } else { false } } == true)
        #expect(try library.store.record(id: record.item.id) == record)
    }
}

@Suite("Renaming to link-safe names", .scratchFolders)
struct SafeNameTests {
    @Test func onlyOnRequestUnsafeNamesMoveAndLinksFollow() throws {
        let library = try TestLibrary()
        let old = "Books/Dune (Dune, #1) - Frank Herbert.md"
        let book = try library.store.insert(.book(Sample.book("Dune (Dune, #1)")), path: old)
        let link = "See [[Dune (Dune, #1) - Frank Herbert]] and [[Dune (Dune, #1) - Frank Herbert|Dune]].\n"
        let note = try library.store.insert(.note(Sample.note("Links", content: link)))
        let safe = try library.store.insert(.note(Sample.note("Plain")))

        let planned = try library.store.write { try SafeNames.rename(in: $0, dryRun: true) }
        let expected = SafeRename(from: old, to: "Books/Dune (Dune, 1) - Frank Herbert.md", rewrittenLinks: [note.path])
        #expect(planned == [expected])
        #expect(try library.store.record(id: book.item.id)?.path == old, "a dry run moves nothing")

        #expect(try library.store.write { try SafeNames.rename(in: $0, dryRun: false) } == [expected])
        #expect(try library.store.record(id: book.item.id)?.path == expected.to, "the same item, at its safe name")
        let rewritten = try #require(try library.store.record(id: note.item.id))
        #expect(String(decoding: rewritten.content, as: UTF8.self).contains("[[Dune (Dune, 1) - Frank Herbert]] and [[Dune (Dune, 1) - Frank Herbert|Dune]]"))
        #expect(try library.store.record(id: safe.item.id)?.path == safe.path, "safe names stay")
        #expect(try library.store.write { try SafeNames.rename(in: $0, dryRun: false) }.isEmpty, "a second run has nothing to do")
    }

    /// A name of characters longer than a byte each moves within its own folder.
    @Test func unsafeNamesWithAccentsStayInTheirFolder() throws {
        let library = try TestLibrary()
        let note = try library.store.insert(.note(Sample.note("Café #1 – Crème")), path: "Notes/Café #1 – Crème.md")
        let renames = try library.store.write { try SafeNames.rename(in: $0, dryRun: false) }
        #expect(renames.map(\.to) == ["Notes/Café 1 – Crème.md"])
        #expect(try library.store.record(id: note.item.id)?.path == "Notes/Café 1 – Crème.md")
    }
}
