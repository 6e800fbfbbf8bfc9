import Foundation
import PropertyBased
import ShelfMarkdown
import ShelfModel
import Testing
import TestTraits

/// Any text at all — fragments of frontmatter and passages shuffled into random lines, or a
/// canonical file with lines deleted, repeated, swapped or inserted — either fails with
/// diagnostics or parses to a record inside the representable domain: rendering that record and
/// parsing it again gives the same record back.
@Suite(.scratchFolders) struct ArbitraryInputTests {
    static let linePieces = [
        "---", "---", "# Dune", "## Passages", "## Passages", "## Notes", "### Page 4", "### Location 7-9", "### Passage",
        "### Page 2 · Location x", "> quote", ">", "> end ^p-1", "> end ^p-2", "**Note**: n", "**Note**:", "**AI Summary**:", "**Chapter**: One", "**Tags**: a, b",
        "**Added**: 2025-12-29", "title: T", "id: x", "tags: [a, b]", "tags:", "  - t", "- t", "extra: {a: 1}", "status: read",
        "current_page: 3", "date_added: 2025-12-29T00:00:00", "created: 2025-12-29T10:00:00Z", "favorite: true", "", "", " ",
        "\t", "# comment", "key: 'it''s'", "k: \"q", "[", "free text", "...", "\u{FEFF}---", "\r",
    ]

    static let texts = Generator<String, Shrink.None<String>>(run: { rng in Self.text(&rng) })

    private static func text<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        RecordGen.maybe(&rng, 0.5) ? mutatedCanonicalFile(&rng) : shuffledPieces(&rng)
    }

    private static func mutatedCanonicalFile<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        let item: Item = RecordGen.maybe(&rng, 0.7) ? .book(RecordGen.makeBook(&rng)) : .note(RecordGen.makeNote(&rng))
        var lines = MarkdownCodec.render(item).components(separatedBy: "\n")
        for _ in 0..<Int.random(in: 1...3, using: &rng) {
            let index = Int.random(in: 0..<lines.count, using: &rng)
            let other = Int.random(in: 0..<lines.count, using: &rng)
            switch Int.random(in: 0...3, using: &rng) {
            case 0: lines.remove(at: index)
            case 1: lines.insert(lines[index], at: other)
            case 2: lines.swapAt(index, other)
            default: lines.insert(RecordGen.pick(linePieces, &rng), at: index)
            }
            if lines.isEmpty { lines = [""] }
        }
        return lines.joined(separator: "\n")
    }

    private static func shuffledPieces<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        RecordGen.list(&rng, 0...14) { rng in
            RecordGen.maybe(&rng, 0.8) ? RecordGen.pick(linePieces, &rng) : RecordGen.line(&rng)
        }.joined(separator: RecordGen.maybe(&rng, 0.2) ? "\r\n" : "\n")
    }

    @Test func anyTextFailsCleanlyOrParsesIntoTheDomain() async {
        await propertyCheck(count: 1500, input: Self.texts) { text in
            for kind in ItemKind.allCases {
                switch MarkdownCodec.parse(text, kind: kind, fileTitle: "File") {
                case .failure(let failure):
                    #expect(!failure.diagnostics.isEmpty)
                    let lineCount = text.replacingOccurrences(of: "\r\n", with: "\n").utf8
                        .count { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") } + 1
                    #expect(failure.diagnostics.allSatisfy { (1...max(lineCount, 1)).contains($0.line) }, "\(failure)")
                case .success(let parsed):
                    let rendered = MarkdownCodec.render(parsed.item)
                    guard case .success(let again) = MarkdownCodec.parse(rendered, kind: kind, fileTitle: "Other") else {
                        Issue.record("the rendering of a parsed file did not parse:\n\(rendered)")
                        return
                    }
                    if again.item != parsed.item {
                        Issue.record("not in the domain: \(RecordDiff.differences(parsed.item, again.item))\n\(text.debugDescription)")
                    }
                }
            }
        }
    }

    @Test func aHeadingTitleLosesALeadingByteOrderMark() {
        // Found by anyTextFailsCleanlyOrParsesIntoTheDomain: YAML readers drop a leading U+FEFF.
        guard case .success(let parsed) = MarkdownCodec.parse("# \u{FEFF}Ümlaut\n", kind: .book, fileTitle: "File"),
              case .book(let book) = parsed.item else { Issue.record("did not parse"); return }
        #expect(book.title == "Ümlaut")
    }

    @Test func deepNestingIsRefusedNotACrash() {
        let flow = "---\nk: " + String(repeating: "[", count: 100_000) + "\n---\n"
        let block = "---\nk:\n" + (1...300).map { String(repeating: " ", count: $0) + "- x:" }.joined(separator: "\n") + "\n---\n"
        for (text, line) in [(flow, 2), (block, 131)] {
            guard case .failure(let failure) = MarkdownCodec.parse(text, kind: .note, fileTitle: "N") else {
                Issue.record("expected a failure")
                continue
            }
            #expect(failure.diagnostics.map(\.line) == [line])
        }
    }
}
