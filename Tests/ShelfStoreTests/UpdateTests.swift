import Foundation
import Testing
import ShelfModel
import ShelfMarkdown
@testable import ShelfStore
import TestSupport
import TestTraits

@Suite("Updating records and keeping drafts", .scratchFolders)
struct UpdateTests {
    @Test func anUpdateBumpsTheVersionRendersAndKeepsThePath() throws {
        let library = try TestLibrary()
        let original = try library.store.insert(.book(Sample.book()), path: "Books/Shelf/Dune.md")
        guard case .book(var book) = original.item else { throw ExpectedBook() }
        book.title = "Dune Messiah"
        book.passages = [Passage(page: 3, text: "A new passage")]
        let updated = try library.store.update(.book(book), basedOn: original.version)

        #expect(updated.item == .book(book))
        #expect(updated.version == original.version + 1)
        #expect(updated.modified > original.modified)
        #expect(updated.path == original.path, "an edit never moves the file")
        #expect(updated.text == MarkdownCodec.render(.book(book)))
        #expect(try library.store.record(id: book.id) == updated)
        let summary = try #require(try library.store.summary(id: book.id))
        #expect(summary.title == "Dune Messiah")
        #expect(summary.size == updated.text.utf8.count)
        #expect(try library.store.changeEntries(after: 1) == [ChangeEntry(.updated, book.id, original.path)])
    }

    @Test func anUpdateBasedOnAnOlderVersionConflicts() throws {
        let library = try TestLibrary()
        let original = try library.store.insert(.note(Sample.note()))
        guard case .note(var note) = original.item else { throw ExpectedNote() }
        note.content = "first edit"
        let first = try library.store.update(.note(note), basedOn: original.version)
        note.content = "second edit, from a stale editor"

        #expect(throws: StoreError.versionConflict(id: note.id, expected: original.version, actual: first.version)) {
            try library.store.update(.note(note), basedOn: original.version)
        }
        #expect(try library.store.record(id: note.id) == first)
    }

    @Test func anUpdateThatChangesNothingIsANoOp() throws {
        let library = try TestLibrary()
        let original = try library.store.insert(.note(Sample.note()))
        let sequence = try library.store.lastSequence()

        #expect(try library.store.update(original.item, basedOn: original.version) == original)
        #expect(try library.store.update(original.item, source: Data(original.text.utf8)) == original)
        #expect(try library.store.record(id: original.item.id) == original)
        #expect(try library.store.lastSequence() == sequence)
    }

    @Test func savedSourceTextIsServedUntilTheRecordChanges() throws {
        let library = try TestLibrary()
        let note = Sample.note()
        let source = "---\ntitle: \(note.title)\nid: \(note.id)\n---\n\(note.content)"
        let saved = try library.store.insert(.note(note), source: Data(source.utf8))
        // The CLI writes the same record back without source text: the editor's bytes stay.
        #expect(try library.store.update(.note(note)) == saved)

        var edited = note
        edited.favorite = true
        let rerendered = try library.store.update(.note(edited))
        #expect(rerendered.text == MarkdownCodec.render(.note(edited)))
        #expect(rerendered.version == saved.version + 1)
    }

    @Test func anUpdateOfAMissingOrTrashedItemIsNotFound() throws {
        let library = try TestLibrary()
        let stranger = Item.note(Sample.note())
        #expect(throws: StoreError.itemNotFound(stranger.id)) { try library.store.update(stranger) }

        let trashed = try library.store.insert(.note(Sample.note("Gone")))
        try library.store.trash(id: trashed.item.id)
        #expect(throws: StoreError.itemNotFound(trashed.item.id)) { try library.store.update(trashed.item) }
    }

    @Test func anUpdateCannotChangeTheKind() throws {
        let library = try TestLibrary()
        let book = try library.store.insert(.book(Sample.book()))
        var note = Sample.note()
        note.id = book.item.id
        #expect(throws: StoreError.kindMismatch(id: note.id, stored: .book, given: .note)) {
            try library.store.update(.note(note))
        }
    }

    @Test func aDraftReplacesTheTextButNotTheRecord() throws {
        let library = try TestLibrary()
        let original = try library.store.insert(.book(Sample.book()))
        let draft = "---\ncurrent_page: many\n---\n"
        let diagnostics = [Diagnostic(line: 2, message: "current_page: \"many\" is not a whole number")]
        let drafted = try library.store.saveDraft(id: original.item.id, bytes: Data(draft.utf8), diagnostics: diagnostics)

        #expect(drafted.item == original.item)
        #expect(drafted.text == draft)
        #expect(drafted.draftDiagnostics == diagnostics)
        #expect(drafted.version == original.version + 1)
        #expect(drafted.modified > original.modified)
        #expect(try library.store.record(id: original.item.id) == drafted)
        let summary = try #require(try library.store.summary(id: original.item.id))
        #expect(summary.hasDraft)
        #expect(summary.size == draft.utf8.count)
        #expect(try library.store.changeEntries(after: 1) == [ChangeEntry(.updated, original.item.id, original.path)])
    }

    @Test func aValidSaveClearsTheDraftEvenWithAnUnchangedRecord() throws {
        let library = try TestLibrary()
        let original = try library.store.insert(.book(Sample.book()))
        let drafted = try library.store.saveDraft(id: original.item.id, bytes: Data("broken".utf8),
                                                  diagnostics: [Diagnostic(line: 1, message: "no frontmatter")])
        let fixed = try library.store.update(original.item, basedOn: drafted.version)

        #expect(fixed.draftDiagnostics == nil)
        #expect(fixed.text == MarkdownCodec.render(original.item))
        #expect(fixed.version == drafted.version + 1)
        #expect(try library.store.summary(id: original.item.id)?.hasDraft == false)
    }

    @Test func aRepeatedIdenticalDraftIsANoOp() throws {
        let library = try TestLibrary()
        let original = try library.store.insert(.note(Sample.note()))
        let diagnostics = [Diagnostic(line: 1, message: "unclosed frontmatter")]
        let drafted = try library.store.saveDraft(id: original.item.id, bytes: Data("---\n".utf8), diagnostics: diagnostics)
        #expect(try library.store.saveDraft(id: original.item.id, bytes: Data("---\n".utf8), diagnostics: diagnostics) == drafted)
    }

    @Test func aFailedWriteKeepsNothingOfItsTransaction() throws {
        let library = try TestLibrary()
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try library.store.write { writer in
                _ = try writer.insert(.book(Sample.book()), path: nil, source: nil)
                throw Abort()
            }
        }
        #expect(try library.store.summaries().isEmpty)
        #expect(try library.store.lastSequence() == 0)
    }
}

struct ExpectedBook: Error {}
struct ExpectedNote: Error {}
