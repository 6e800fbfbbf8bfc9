import Foundation
import Testing
import ShelfModel
import ShelfMarkdown
@testable import ShelfStore
import TestSupport
import TestTraits

@Suite("Trash, restore and revival by id", .scratchFolders)
struct TrashTests {
    @Test func aTrashedItemLeavesEveryListingAndComesBackUnchanged() throws {
        let library = try TestLibrary()
        let record = try library.store.insert(.book(Sample.book(passages: [Passage(text: "sandworm")])))
        let keeper = try library.store.insert(.note(Sample.note()))
        let before = Date()
        try library.store.trash(id: record.item.id)

        #expect(try library.store.record(id: record.item.id) == nil)
        #expect(try library.store.record(atPath: record.path) == nil)
        #expect(try library.store.summary(id: record.item.id) == nil)
        #expect(try library.store.summaries().map(\.id) == [keeper.item.id])
        #expect(try library.store.search("sandworm").isEmpty)
        let trashed = try library.store.trashedItems()
        #expect(trashed.map(\.id) == [record.item.id])
        #expect(trashed.first?.originalPath == record.path)
        #expect(trashed.first?.title == record.item.title)
        #expect(trashed.first.map { $0.trashedAt >= before } == true)

        let restored = try library.store.restore(id: record.item.id)
        #expect(restored == record)
        #expect(try library.store.record(id: record.item.id) == record)
        #expect(try library.store.trashedItems().isEmpty)
        #expect(try library.store.search("sandworm").map(\.id) == [record.item.id])
        #expect(try library.store.changeEntries(after: 2) == [
            ChangeEntry(.removed, record.item.id, record.path),
            ChangeEntry(.added, record.item.id, record.path),
        ])
    }

    @Test func aRestoreOntoATakenPathIsUniquified() throws {
        let library = try TestLibrary()
        let original = try library.store.insert(.book(Sample.book()))
        try library.store.trash(id: original.item.id)
        let newcomer = try library.store.insert(.book(Sample.book()))
        #expect(newcomer.path == original.path, "a trashed item's path is free for others")

        let restored = try library.store.restore(id: original.item.id)
        let expectedName = FileNaming.uniqued(FileNaming.fileName(for: original.item)) { "Books/" + $0 == newcomer.path }
        #expect(restored.path == "Books/" + expectedName)
        #expect(restored.path != newcomer.path)
        #expect(try library.store.record(id: newcomer.item.id) == newcomer)
    }

    @Test func insertingATrashedIDRevivesTheItemWithTheNewContent() throws {
        let library = try TestLibrary()
        let original = try library.store.insert(.note(Sample.note()))
        let edited = try library.store.update(Item.note(Sample.note("Old title", content: "one")).withID(original.item.id))
        try library.store.trash(id: original.item.id)

        let revivedNote = Item.note(Sample.note("New title", content: "two")).withID(original.item.id)
        let revived = try library.store.insert(revivedNote, path: "Notes/Back.md")
        #expect(revived.item == revivedNote)
        #expect(revived.version == edited.version + 1, "the version continues")
        #expect(revived.path == "Notes/Back.md")
        #expect(revived.text == MarkdownCodec.render(revivedNote))
        #expect(try library.store.trashedItems().isEmpty)
        #expect(try library.store.record(id: original.item.id) == revived)
        #expect(try library.store.changes(after: 0).map(\.kind) == [.added, .updated, .removed, .added])
    }

    @Test func aRevivalOntoATakenPathIsRefusedAndLeavesTheItemInTheTrash() throws {
        let library = try TestLibrary()
        let original = try library.store.insert(.note(Sample.note()))
        try library.store.trash(id: original.item.id)
        let occupant = try library.store.insert(.note(Sample.note("Occupant")))

        #expect(throws: StoreError.pathTaken(occupant.path)) {
            try library.store.insert(original.item, path: occupant.path)
        }
        #expect(try library.store.trashedItems().map(\.id) == [original.item.id])
        #expect(try library.store.record(id: occupant.item.id) == occupant)
    }

    @Test func emptyingTheTrashDeletesOnlyTrashedItemsForGood() throws {
        let library = try TestLibrary()
        let gone = try ["A", "B"].map { try library.store.insert(.note(Sample.note($0))) }
        let kept = try library.store.insert(.note(Sample.note("C")))
        for record in gone { try library.store.trash(id: record.item.id) }

        #expect(try library.store.emptyTrash() == 2)
        #expect(try library.store.trashedItems().isEmpty)
        #expect(try library.store.summaries().map(\.id) == [kept.item.id])
        #expect(throws: StoreError.itemNotFound(gone[0].item.id)) { try library.store.restore(id: gone[0].item.id) }
        #expect(try library.store.emptyTrash() == 0)

        let reborn = try library.store.insert(gone[0].item)
        #expect(reborn.version == 1, "after the trash is emptied an id is new again")
    }

    @Test func trashingAMissingItemIsNotFoundAndRestoringALiveOneChangesNothing() throws {
        let library = try TestLibrary()
        #expect(throws: StoreError.itemNotFound(ItemID("nobody"))) { try library.store.trash(id: ItemID("nobody")) }
        let live = try library.store.insert(.note(Sample.note()))
        #expect(try library.store.restore(id: live.item.id) == live)
        #expect(try library.store.lastSequence() == 1)
    }
}

extension Item {
    func withID(_ id: ItemID) -> Item {
        var copy = self
        copy.id = id
        return copy
    }
}
