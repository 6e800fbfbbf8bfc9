import Foundation
import PropertyBased
import ShelfMarkdown
import ShelfModel
import Testing
import TestTraits

@Suite(.scratchFolders) struct FileNamingTests {
    private func book(_ title: String, author: String? = nil) -> Item { .book(Book(title: title, author: author)) }

    @Test func namesFollowTitleAndAuthor() {
        #expect(FileNaming.fileName(for: book("Dune", author: "Frank Herbert")) == "Dune - Frank Herbert.md")
        #expect(FileNaming.fileName(for: book("Dune")) == "Dune.md")
        #expect(FileNaming.fileName(for: book("Dune", author: " ")) == "Dune.md")
        #expect(FileNaming.fileName(for: .note(Note(title: "Plans"))) == "Plans.md")
    }

    @Test func unsafeCharactersAreReplaced() {
        #expect(FileNaming.fileName(for: book("AC/DC: Live\n2024\u{0}")) == "AC-DC - Live 2024.md")
        #expect(FileNaming.fileName(for: book("..hidden")) == "hidden.md")
        #expect(FileNaming.fileName(for: book("Dune (Dune, #1)", author: "Frank Herbert")) == "Dune (Dune, 1) - Frank Herbert.md")
        #expect(FileNaming.fileName(for: book("[Draft] a|b ^x", author: "C:\\D")) == "(Draft) a-b x - C--D.md")
        #expect(FileNaming.fileName(for: book("Why? <Really> \"so\" *now*")) == "Why (Really) 'so' now.md")
        #expect(FileNaming.fileName(for: book(" . ")) == "Untitled.md")
        #expect(FileNaming.fileName(for: book("", author: "Anon")) == "Untitled - Anon.md")
        #expect(FileNaming.fileName(for: book("Cafe\u{301}")) == "Caf\u{E9}.md")
        #expect(FileNaming.fileName(for: book("Cafe\u{301}")).unicodeScalars.count == 7, "NFC, not just equivalent")
    }

    @Test func longNamesAreCutOnCharacterBoundaries() {
        let family = "👩‍👩‍👧"
        let name = FileNaming.fileName(for: book(String(repeating: family, count: 40)))
        #expect(name.utf8.count <= FileNaming.maximumNameBytes)
        #expect((name + "___jb_tmp___").utf8.count <= 255, "room for an editor's companion name")
        #expect(name.hasSuffix(".md"))
        #expect(name.dropLast(3).allSatisfy { $0 == Character(family) })
        #expect(name.dropLast(3).count == (FileNaming.maximumNameBytes - 3) / family.utf8.count)
        let oneHugeCharacter = "e" + String(repeating: "\u{301}", count: 200)
        #expect(FileNaming.fileName(for: book(oneHugeCharacter)) == "Untitled.md")
    }

    @Test func uniquedAddsTheFirstFreeNumber() {
        let taken: Set = ["Dune.md", "Dune (2).md"]
        #expect(FileNaming.uniqued("Free.md") { taken.contains($0) } == "Free.md")
        #expect(FileNaming.uniqued("Dune.md") { taken.contains($0) } == "Dune (3).md")
        let long = String(repeating: "é", count: 118) + ".md"   // 236 + 3 bytes
        let unique = FileNaming.uniqued(long) { $0 == long }
        #expect(unique.utf8.count <= FileNaming.maximumNameBytes)
        #expect(unique.hasSuffix("é (2).md"))
    }

    @Test func titleFromFileNameStripsTheExtension() {
        #expect(FileNaming.title(fromFileName: "Dune.md") == "Dune")
        #expect(FileNaming.title(fromFileName: "notes.txt") == "notes.txt")
        #expect(FileNaming.title(fromFileName: "Dune (2).md") == "Dune (2)")
    }

    @Test func everyNameIsSafeAndStable() async {
        let titles = Generator<(String, String?), Shrink.None<(String, String?)>>(run: { rng in Self.titleAndAuthor(&rng) })
        await propertyCheck(count: 300, input: titles) { title, author in
            let name = FileNaming.fileName(for: book(title, author: author))
            #expect(name == FileNaming.fileName(for: book(title, author: author)))
            #expect(name.utf8.count <= FileNaming.maximumNameBytes && name.utf8.count > 3 && name.utf8.reversed().starts(with: "dm.".utf8))
            #expect(name.utf8.first != UInt8(ascii: ".") && !name.utf8.contains(UInt8(ascii: "/")))
            #expect(!name.unicodeScalars.contains { $0.properties.generalCategory == .control })
            #expect(!name.unicodeScalars.contains { Self.obsidianUnsafe.contains($0) }, "a valid Obsidian link target on every system")
            #expect(Array(name.utf8) == Array(name.precomposedStringWithCanonicalMapping.utf8))
            let unique = FileNaming.uniqued(name) { $0 == name }
            #expect(unique != name && unique.utf8.count <= FileNaming.maximumNameBytes && unique.utf8.reversed().starts(with: "dm.)2( ".utf8))
            #expect(FileNaming.title(fromFileName: name) + ".md" == name)
        }
    }

    private static let obsidianUnsafe: Set<Unicode.Scalar> = ["#", "^", "[", "]", "|", "\\", ":", "*", "?", "\"", "<", ">"]

    /// Hostile titles, some far longer than a file name, and authors.
    private static func titleAndAuthor<R: RandomNumberGenerator>(_ rng: inout R) -> (String, String?) {
        (RecordGen.text(&rng) + (RecordGen.maybe(&rng, 0.2) ? String(repeating: "長", count: 200) : ""),
         RecordGen.optional(&rng) { RecordGen.text(&$0) })
    }
}
