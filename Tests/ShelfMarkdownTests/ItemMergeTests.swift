import Foundation
import ShelfModel
import Testing
import TestSupport
import TestTraits
@testable import ShelfMarkdown

@Suite(.scratchFolders) struct ItemMergeTests {
    func merge(_ base: String, _ older: String, _ newer: String, kind: ItemKind = .note) -> String? {
        switch ItemMerge.merge(base: Data(base.utf8), older: Data(older.utf8), newer: Data(newer.utf8), kind: kind) {
        case .merged(let bytes): String(decoding: bytes, as: UTF8.self)
        case .conflict: nil
        }
    }

    static let note = "---\ntitle: Plan\ntags:\n  - a\nfavorite: false\n---\none\ntwo\nthree\nfour\nfive\n"

    @Test func oneSideUnchangedTakesTheOther() {
        let edited = Self.note.replacingOccurrences(of: "two", with: "TWO")
        #expect(merge(Self.note, Self.note, edited) == edited)
        #expect(merge(Self.note, edited, Self.note) == edited)
        #expect(merge(Self.note, edited, edited) == edited)
    }

    @Test func differentKeysAndDifferentLinesMerge() {
        let older = Self.note.replacingOccurrences(of: "favorite: false", with: "favorite: true")
            .replacingOccurrences(of: "two", with: "two, older")
        let newer = Self.note.replacingOccurrences(of: "title: Plan", with: "title: The plan")
            .replacingOccurrences(of: "four", with: "four, newer")
        #expect(merge(Self.note, older, newer) ==
                "---\ntitle: The plan\ntags:\n  - a\nfavorite: true\n---\none\ntwo, older\nthree\nfour, newer\nfive\n")
    }

    @Test func aKeyChangedDifferentlyOnBothSidesConflicts() {
        let older = Self.note.replacingOccurrences(of: "title: Plan", with: "title: Older")
        let newer = Self.note.replacingOccurrences(of: "title: Plan", with: "title: Newer")
        #expect(merge(Self.note, older, newer) == nil)
    }

    @Test func aListValueIsOneKey() {
        let older = Self.note.replacingOccurrences(of: "  - a\n", with: "  - a\n  - b\n")
        let newer = Self.note.replacingOccurrences(of: "  - a\n", with: "  - a\n  - c\n")
        #expect(merge(Self.note, older, newer) == nil, "both changed `tags`")
        let added = Self.note.replacingOccurrences(of: "favorite: false\n", with: "favorite: false\nrating: 4\n")
        #expect(merge(Self.note, older, added) ==
                "---\ntitle: Plan\ntags:\n  - a\n  - b\nfavorite: false\nrating: 4\n---\none\ntwo\nthree\nfour\nfive\n")
        let removed = Self.note.replacingOccurrences(of: "favorite: false\n", with: "")
        #expect(merge(Self.note, removed, older) == "---\ntitle: Plan\ntags:\n  - a\n  - b\n---\none\ntwo\nthree\nfour\nfive\n")
    }

    @Test func theSameLineChangedDifferentlyConflicts() {
        let older = Self.note.replacingOccurrences(of: "three", with: "three (older)")
        let newer = Self.note.replacingOccurrences(of: "three", with: "three (newer)")
        #expect(merge(Self.note, older, newer) == nil)
        #expect(merge(Self.note, newer, older) == nil, "whichever side is older")
    }

    @Test func twoAppendsAtTheEndKeepBothOlderFirst() {
        let older = Self.note + "six (older)\n"
        let newer = Self.note + "six (newer)\n"
        #expect(merge(Self.note, older, newer) == Self.note + "six (older)\nsix (newer)\n")
        #expect(merge(Self.note, newer, older) == Self.note + "six (newer)\nsix (older)\n")
    }

    @Test func passagesAddedOnBothDevicesBothSurvive() throws {
        let book = """
            ---
            title: Dune
            ---
            # Dune

            ## Passages

            ### Page 1 ^p1
            > Fear is the mind-killer.

            """
        let older = book + "### Page 2 ^p2\n> I must not fear.\n\n"
        let newer = book.replacingOccurrences(of: "title: Dune", with: "title: Dune\nauthor: Frank Herbert")
            + "### Page 3 ^p3\n> The spice must flow.\n\n"
        let merged = try #require(merge(book, older, newer, kind: .book))
        #expect(merged.contains("author: Frank Herbert"))
        #expect(merged.contains("I must not fear."))
        #expect(merged.contains("The spice must flow."))
    }

    @Test func crlfLinesStayCRLF() {
        let base = "---\r\ntitle: A\r\n---\r\none\r\ntwo\r\nthree\r\n"
        let older = base.replacingOccurrences(of: "one", with: "ONE")
        let newer = base.replacingOccurrences(of: "three", with: "THREE")
        #expect(merge(base, older, newer) == "---\r\ntitle: A\r\n---\r\nONE\r\ntwo\r\nTHREE\r\n")
    }

    @Test func bytesThatAreNotUTF8MergeOnlyWhenOneSideIsTheBase() {
        let base = Data("one\n".utf8), broken = Data([0x66, 0xFF, 0x0A]), other = Data("two\n".utf8)
        #expect(ItemMerge.merge(base: base, older: broken, newer: base, kind: .note) == .merged(broken))
        #expect(ItemMerge.merge(base: base, older: broken, newer: other, kind: .note) == .conflict)
    }

    @Test func editsOfDisjointLinesAlwaysMergeAndKeepBoth() {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<200 {
            let count = Int.random(in: 6...30, using: &generator)
            let base = (0..<count).map { "line \($0)\n" }
            let split = Int.random(in: 2...(count - 3), using: &generator)
            var older = base, newer = base
            let olderLine = Int.random(in: 0..<(split - 1), using: &generator)
            let newerLine = Int.random(in: (split + 1)..<count, using: &generator)
            older[olderLine] = "older edit\n"
            newer[newerLine] = "newer edit\n"
            if Bool.random(using: &generator) { newer.insert("inserted\n", at: newerLine) }
            let merged = merge(base.joined(), older.joined(), newer.joined())
            #expect(merged?.contains("older edit") == true && merged?.contains("newer edit") == true,
                    "\(base) \(older) \(newer)")
            #expect(merged?.split(separator: "\n").count == newer.count)
        }
    }
}
