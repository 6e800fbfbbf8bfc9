import Foundation
import PropertyBased
import ShelfMarkdown
import ShelfModel
import Testing
import TestTraits

/// Law 4: what editors do to a file without changing its meaning — reorder keys, turn block lists
/// into flow lists or a single text, drop quotes Shelf does not need, add comments, write dates
/// as date-times, unindent lists, use CRLF and a BOM — parses to the same record, and rendering
/// that record restores the canonical bytes.
@Suite(.scratchFolders) struct ObsidianRewriteTests {
    /// A canonical file and a random rewrite of it.
    static let rewrites = Generator<(Item, String), Shrink.None<(Item, String)>>(run: { rng in
        let item: Item = Bool.random(using: &rng) ? .book(RecordGen.makeBook(&rng)) : .note(RecordGen.makeNote(&rng))
        return (item, FrontmatterRewrite.random(of: MarkdownCodec.render(item), kind: item.kind, using: &rng))
    })

    @Test func rewrittenFilesParseToTheSameRecord() async {
        await propertyCheck(count: 1000, input: Self.rewrites) { item, rewritten in
            let parsed = MarkdownCodec.parse(rewritten, kind: item.kind, fileTitle: nil)
            guard case .success(let result) = parsed else {
                Issue.record("rewrite did not parse: \(parsed)\n\(rewritten)")
                return
            }
            if result.item != item {
                Issue.record("rewrite parsed differently at \(RecordDiff.differences(item, result.item))\n\(rewritten)")
            }
            let canonical = MarkdownCodec.render(item)
            if MarkdownCodec.render(result.item) != canonical {
                Issue.record("re-render differs at \(RecordDiff.firstDifferentLine(canonical, MarkdownCodec.render(result.item)))")
            }
        }
    }

    @Test func obsidianStyleBookParsesLikeItsCanonicalForm() throws {
        let canonical = """
            ---
            id: 8d2c
            title: Dune
            author: Frank Herbert
            isbn: "0441013597"
            status: reading
            current_page: 120
            date_added: 2025-12-29
            tags:
              - scifi
              - classics
            ---
            # Dune

            ## Passages

            """
        let rewritten = "\u{FEFF}" + """
            ---
            # edited in Obsidian
            tags: [scifi, 'classics']
            date_added: 2025-12-29T00:00:00
            current_page: '120'
            status: "reading"   # still going
            isbn: 0441013597
            author: 'Frank Herbert'
            title: "Dune"
            id: 8d2c
            ---
            # Dune

            ## Passages

            """.replacingOccurrences(of: "\n", with: "\r\n")
        let expected = try MarkdownCodec.parse(canonical, kind: .book, fileTitle: nil).get()
        let actual = try MarkdownCodec.parse(rewritten, kind: .book, fileTitle: nil).get()
        #expect(actual == expected)
        #expect(MarkdownCodec.render(actual.item) == canonical)
    }
}

/// Random meaning-preserving edits of a canonical file's frontmatter.
enum FrontmatterRewrite {
    static func random<R: RandomNumberGenerator>(of canonical: String, kind: ItemKind, using rng: inout R) -> String {
        let lines = canonical.components(separatedBy: "\n")
        let closing = lines.dropFirst().firstIndex(of: "---")!
        var entries = group(Array(lines[1..<closing]))
        entries = entries.map { rewriteEntry($0, using: &rng) }
        if RecordGen.maybe(&rng, 0.6) { entries = shuffledKeepingExtrasInOrder(entries, kind: kind, using: &rng) }
        var frontmatter: [String] = []
        for entry in entries {
            if RecordGen.maybe(&rng, 0.2) { frontmatter.append("# a comment line") }
            frontmatter += entry.map { RecordGen.maybe(&rng, 0.2) ? $0 + " # trailing comment" : $0 }
        }
        var text = (["---"] + frontmatter + lines[closing...]).joined(separator: "\n")
        if RecordGen.maybe(&rng, 0.3) { text = text.replacingOccurrences(of: "\n", with: "\r\n") }
        if RecordGen.maybe(&rng, 0.3) { text = "\u{FEFF}" + text }
        return text
    }

    /// Entries in random order, except that unknown keys keep their order (it is part of the record).
    private static func shuffledKeepingExtrasInOrder<R: RandomNumberGenerator>(_ entries: [[String]], kind: ItemKind,
                                                                              using rng: inout R) -> [[String]] {
        let ownKeys = kind == .book ? ["id", "title", "author", "isbn", "status", "current_page", "total_pages", "rating",
                                       "date_added", "date_finished", "tags", "source_id"]
                                    : ["id", "title", "favorite", "created", "modified", "tags"]
        let isOwn = { (entry: [String]) in ownKeys.contains { entry[0].hasPrefix($0 + ":") } }
        var extras = entries.filter { !isOwn($0) }[...]
        return entries.shuffled(using: &rng).map { entry in isOwn(entry) ? entry : extras.popFirst()! }
    }

    /// Top-level entries: a line at column 0 and the indented lines under it.
    private static func group(_ lines: [String]) -> [[String]] {
        var entries: [[String]] = []
        for line in lines {
            if line.hasPrefix(" "), !entries.isEmpty { entries[entries.count - 1].append(line) } else { entries.append([line]) }
        }
        return entries
    }

    private static func rewriteEntry<R: RandomNumberGenerator>(_ entry: [String], using rng: inout R) -> [String] {
        let first = entry[0]
        if first == "tags:" {
            let items = entry.dropFirst().map { singleQuoted(unquoted(String($0.unicodeScalars.dropFirst(4)))) }
            switch Int.random(in: 0...2, using: &rng) {
            case 0: return ["tags: [" + items.joined(separator: ", ") + "]"]
            case 1 where items.count == 1: return ["tags: " + items[0]]
            default: return [first] + entry.dropFirst().map { String($0.unicodeScalars.dropFirst(2)) }
            }
        }
        for key in ["date_added", "date_finished"] where first.hasPrefix(key + ": ") {
            return [first + pick(["T00:00:00", "T00:00:00Z", ""], &rng)]
        }
        for key in ["created", "modified"] where first.hasPrefix(key + ": ") {
            return [String(first.dropLast()) + pick(["", "Z", "+00:00", ".000Z"], &rng)]
        }
        for key in ["id", "title", "author", "isbn", "source_id"] where first.hasPrefix(key + ": \"") {
            let value = String(first.unicodeScalars.dropFirst(key.count + 2))
            let content = unquoted(value)
            if RecordGen.maybe(&rng, 0.5), isSafelyPlain(content) { return [key + ": " + content] }
        }
        return entry
    }

    /// The text of a plain or double-quoted scalar without escapes other than `\"` and `\\`.
    private static func unquoted(_ scalar: String) -> String {
        let bytes = Array(scalar.utf8)
        guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\""),
              !bytes.contains(UInt8(ascii: "\\")) else { return scalar }
        return String(decoding: bytes.dropFirst().dropLast(), as: UTF8.self)
    }

    /// A text Shelf reads verbatim from a plain scalar: letters, digits, `.`, `-`, not null-like.
    private static func isSafelyPlain(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first.properties.isAlphabetic || ("0"..."9").contains(first) else { return false }
        return !["null", "Null", "NULL"].contains(text)
            && text.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "-" }
    }

    private static func singleQuoted(_ text: String) -> String {
        // Bytes, not Characters: a `'` followed by a combining mark is one Character.
        let quote = UInt8(ascii: "'")
        let escaped = String(decoding: text.utf8.flatMap { $0 == quote ? [quote, quote] : [$0] }, as: UTF8.self)
        return text.utf8.first == UInt8(ascii: "\"") ? text : "'" + escaped + "'"
    }

    private static func pick<R: RandomNumberGenerator>(_ values: [String], _ rng: inout R) -> String {
        RecordGen.pick(values, &rng)
    }
}
