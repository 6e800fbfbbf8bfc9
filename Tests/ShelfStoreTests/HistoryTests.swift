import Foundation
import Testing
import ShelfModel
import ShelfMarkdown
import GRDB
@testable import ShelfStore
import TestSupport
import TestTraits

@Suite("Keeping earlier versions", .scratchFolders)
struct HistoryTests {
    @Test func everyChangeOfTheBytesKeepsTheVersionItReplaced() throws {
        let library = try TestLibrary()
        let original = try library.store.insert(.note(Sample.note()))
        guard case .note(var note) = original.item else { throw ExpectedNote() }
        note.content = "second"
        let second = try library.store.update(.note(note), basedOn: original.version)
        let draftBytes = Data("---\ntitle: [unclosed\n---\n\u{0}\u{FF}".utf8)
        let draft = try library.store.saveDraft(id: note.id, bytes: draftBytes, diagnostics: [Diagnostic(line: 2, message: "bad")])
        note.content = "third"
        let third = try library.store.update(.note(note), basedOn: draft.version)

        let history = try library.store.history(id: note.id)
        #expect(history.map(\.version) == [draft.version, second.version, original.version])
        #expect(history.map(\.wasDraft) == [true, false, false])
        #expect(try library.store.file(id: note.id, version: original.version) == original.content)
        #expect(try library.store.file(id: note.id, version: second.version) == second.content)
        #expect(try library.store.file(id: note.id, version: draft.version) == draftBytes)
        #expect(try library.store.file(id: note.id, version: third.version) == third.content)
    }

    @Test func eachVersionSaysHowItCameToBe() throws {
        let library = try TestLibrary()
        let imported = try library.store.write(as: ChangeOrigin(.import)) { try $0.insert(.note(Sample.note()), path: nil, source: nil) }
        guard case .note(var note) = imported.item else { throw ExpectedNote() }
        note.content = "edited"
        _ = try library.store.update(.note(note))
        note.content = "from the laptop"
        _ = try library.store.write(as: ChangeOrigin(.sync, device: "laptop")) { try $0.update(.note(note), basedOn: nil, source: nil) }
        let copy = try library.store.write { writer in
            try writer.saveConflictCopy(Data("other side\n".utf8), kind: .note, beside: imported.path, time: Date(), device: "desk")
        }

        #expect(try library.store.origin(of: note.id) == ChangeOrigin(.sync, device: "laptop"))
        #expect(try library.store.history(id: note.id).map(\.origin) == [ChangeOrigin(.edit), ChangeOrigin(.import)])
        #expect(try library.store.origin(of: copy.item.id) == ChangeOrigin(.conflict, device: "desk"))
    }

    @Test func whatChangesNoBytesKeepsNoVersion() throws {
        let library = try TestLibrary()
        let original = try library.store.insert(.note(Sample.note()))
        try library.store.update(original.item, basedOn: original.version)
        try library.store.move(id: original.item.id, to: "Notes/Elsewhere.md")
        try library.store.trash(id: original.item.id)
        try library.store.restore(id: original.item.id)
        #expect(try library.store.history(id: original.item.id).isEmpty)
    }

    @Test func onlyTheNewestVersionsAreKept() throws {
        let library = try TestLibrary()
        let original = try library.store.insert(.note(Sample.note()))
        guard case .note(var note) = original.item else { throw ExpectedNote() }
        var version = original.version
        for edit in 1...(ItemHistory.depth + 5) {
            note.content = "edit \(edit)"
            version = try library.store.update(.note(note), basedOn: version).version
        }
        let kept = try library.store.history(id: note.id).map(\.version)
        #expect(kept == Array((version - Int64(ItemHistory.depth))..<version).reversed())
        #expect(try library.store.file(id: note.id, version: original.version) == nil)
    }

    @Test func emptyingTheTrashForgetsTheHistory() throws {
        let library = try TestLibrary()
        let original = try library.store.insert(.note(Sample.note()))
        guard case .note(var note) = original.item else { throw ExpectedNote() }
        note.content = "edited"
        try library.store.update(.note(note), basedOn: original.version)
        try library.store.trash(id: note.id)
        #expect(try library.store.history(id: note.id).count == 1, "the trash keeps it")
        try library.store.emptyTrash()
        #expect(try library.store.history(id: note.id).isEmpty)
    }

    /// Versions of a large file that differ by small edits (in place, inserted, cut) share their
    /// bytes: the history costs about the file once, every version reads back exactly, and the
    /// shared bytes go with the last version that uses them.
    @Test func versionsOfALargeFileShareTheirBytes() throws {
        let library = try TestLibrary()
        var generator = SystemRandomNumberGenerator()
        var body = Data((0..<(512 << 10)).map { _ in UInt8.random(in: 32...126, using: &generator) })
        let saved = try library.store.write { try $0.saveFile(body, of: .generate(), kind: .note, at: "Notes/Big.md", basedOn: nil, modified: Date()) }
        let id = saved.item.id
        var versions: [(Int64, Data)] = []
        for edit in 0..<9 {
            let before = try #require(try library.store.file(id: id))
            versions.append((before.version, before.content))
            let at = Int.random(in: 0..<body.count, using: &generator)
            switch edit % 3 {
            case 0: body.replaceSubrange(at..<min(body.count, at + 100), with: Data(repeating: UInt8(ascii: "x"), count: 100))
            case 1: body.insert(contentsOf: Data("inserted\n".utf8), at: at)
            default: body.removeSubrange(at..<min(body.count, at + 2000))
            }
            _ = try library.store.write { try $0.saveFile(body, of: id, kind: .note, at: "Notes/Big.md", basedOn: nil, modified: Date()) }
        }
        for (version, content) in versions {
            #expect(try library.store.file(id: id, version: version) == content, "version \(version)")
        }
        #expect(try library.store.history(id: id).map(\.size) == versions.reversed().map(\.1.count))
        let kept = try library.store.readDatabase { try Int.fetchOne($0, sql: "SELECT SUM(length(content)) FROM history_chunk") }
        #expect(try #require(kept) < 2 * body.count, "9 versions of \(body.count) bytes are kept in \(kept ?? 0) bytes")

        try library.store.trash(id: id)
        try library.store.emptyTrash()
        let left = try library.store.readDatabase { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM history_chunk") }
        #expect(left == 0)
    }
}
