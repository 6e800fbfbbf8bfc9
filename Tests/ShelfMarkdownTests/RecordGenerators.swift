import Foundation
import PropertyBased
import ShelfModel

/// Random records covering exactly the codec's representable domain (see `MarkdownCodec`), built
/// from hostile pieces of text: YAML and Markdown syntax, look-alikes of numbers, dates and
/// booleans, `---` and `### ` lines, tabs, controls, emoji, right-to-left text, combining and
/// prepended marks, very long runs.
enum RecordGen {
    static let book = Generator<Book, Shrink.None<Book>>(run: { rng in makeBook(&rng) })
    static let note = Generator<Note, Shrink.None<Note>>(run: { rng in makeNote(&rng) })
    static let item = Generator<Item, Shrink.None<Item>>(run: { rng in
        Bool.random(using: &rng) ? .book(makeBook(&rng)) : .note(makeNote(&rng))
    })

    // MARK: - Records

    static func makeBook<R: RandomNumberGenerator>(_ rng: inout R) -> Book {
        let passageCount = Int.random(in: 0...4, using: &rng)
        var passageIDs = Set<String>()
        var passages: [Passage] = []
        for _ in 0..<passageCount {
            var id = blockID(&rng)
            while passageIDs.contains(id) { id += "-\(passageIDs.count)" }
            passageIDs.insert(id)
            passages.append(makePassage(id: id, &rng))
        }
        return Book(
            id: ItemID(nonEmpty(&rng)),
            title: maybe(&rng, 0.1) ? "" : text(&rng),
            author: optional(&rng) { text(&$0) },
            isbn: optional(&rng) { pick(["0441013597", "978-0-441-01359-3", "044101359X", "00", "null", "1e5"], &$0) },
            status: optional(&rng) { pick(ReadingStatus.allCases, &$0) },
            currentPage: optional(&rng) { Int.random(in: 0...2000, using: &$0) },
            totalPages: optional(&rng) { maybe(&$0, 0.1) ? Int.max : Int.random(in: 0...2000, using: &$0) },
            rating: optional(&rng) { rating(&$0) },
            dateAdded: optional(&rng) { calendarDate(&$0) },
            dateFinished: optional(&rng) { calendarDate(&$0) },
            tags: list(&rng, 0...3) { text(&$0) },
            sourceID: optional(&rng) { pick(["goodreads:12345", "kindle:abc", "notion: x", "#1"], &$0) },
            passages: passages,
            extraProperties: extraProperties(&rng, reserved: Set(["id", "title", "author", "isbn", "status", "current_page",
                                                                 "total_pages", "rating", "date_added", "date_finished",
                                                                 "tags", "source_id"])),
            introduction: introduction(&rng),
            appendix: appendix(&rng))
    }

    static func makeNote<R: RandomNumberGenerator>(_ rng: inout R) -> Note {
        Note(
            id: ItemID(nonEmpty(&rng)),
            title: text(&rng),
            content: multiline(&rng),
            favorite: Bool.random(using: &rng),
            created: optional(&rng) { timestamp(&$0) },
            modified: optional(&rng) { timestamp(&$0) },
            tags: list(&rng, 0...3) { text(&$0) },
            extraProperties: extraProperties(&rng, reserved: ["id", "title", "favorite", "created", "modified", "tags"]))
    }

    static func makePassage<R: RandomNumberGenerator>(id: String, _ rng: inout R) -> Passage {
        Passage(
            id: PassageID(id),
            page: optional(&rng) { maybe(&$0, 0.1) ? Int.max : Int.random(in: 0...999, using: &$0) },
            location: optional(&rng) { location(&$0) },
            chapter: optional(&rng, 0.3) { maybe(&$0, 0.5) ? pick(["Chapter 3: The Desert", "Part One", "", "1.2 Über"], &$0) : multiline(&$0) },
            text: maybe(&rng, 0.05) ? "" : multiline(&rng),
            note: optional(&rng, 0.5) { multiline(&$0) },
            aiSummary: optional(&rng, 0.5) { multiline(&$0) },
            tags: maybe(&rng, 0.3) ? passageTags(&rng) : [],
            dateAdded: optional(&rng, 0.5) { calendarDate(&$0) })
    }

    /// Tags as a file can hold them: any text, normalised the way `**Tags**:` lines are read.
    static func passageTags<R: RandomNumberGenerator>(_ rng: inout R) -> [String] {
        Passage.tags(from: list(&rng, 1...4) { maybe(&$0, 0.5) ? pick(["fear", "to-reread", "Über", "日本", "a b", "#x"], &$0) : line(&$0) }
            .joined(separator: ","))
    }

    // MARK: - Frontmatter values

    static func extraProperties<R: RandomNumberGenerator>(_ rng: inout R, reserved: Set<String>) -> [Property] {
        properties(&rng, count: Int.random(in: 0...4, using: &rng), depth: 0, reserved: reserved)
    }

    private static func properties<R: RandomNumberGenerator>(_ rng: inout R, count: Int, depth: Int,
                                                             reserved: Set<String>) -> [Property] {
        var used = reserved
        var result: [Property] = []
        for _ in 0..<count {
            var key = maybe(&rng, 0.6) ? pick(["aliases", "cssclasses", "rating10", "publisher", "Title", "1", "yes", "a: b"], &rng)
                                       : String(text(&rng).unicodeScalars.prefix(150))
            if used.contains(key) { key = String((key + "·\(result.count)").unicodeScalars.suffix(150)) }
            guard !used.contains(key) else { continue }
            used.insert(key)
            result.append(Property(key: key, value: propertyValue(&rng, depth: depth)))
        }
        return result
    }

    static func propertyValue<R: RandomNumberGenerator>(_ rng: inout R, depth: Int) -> PropertyValue {
        let choice = Int.random(in: 0...(depth < 2 ? 8 : 6), using: &rng)
        switch choice {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2: return .int(maybe(&rng, 0.2) ? pick([Int.min, Int.max, 0, -1, 7], &rng) : Int.random(in: -100_000...100_000, using: &rng))
        case 3: return .double(double(&rng))
        case 4: return .date(calendarDate(&rng))
        case 5, 6: return .string(text(&rng))
        case 7: return .list(list(&rng, 0...3) { propertyValue(&$0, depth: depth + 1) })
        default: return .map(properties(&rng, count: Int.random(in: 0...3, using: &rng), depth: depth + 1, reserved: []))
        }
    }

    static func double<R: RandomNumberGenerator>(_ rng: inout R) -> Double {
        maybe(&rng, 0.4)
            ? pick([0.0, -0.0, 3.0, 1.5, 1e20, -2.5e-7, .leastNonzeroMagnitude, .infinity, -.infinity, 0.1, 123456789.0], &rng)
            : Double.random(in: -1e6...1e6, using: &rng)
    }

    static func rating<R: RandomNumberGenerator>(_ rng: inout R) -> Double {
        maybe(&rng, 0.7) ? pick([0.5, 1, 2.5, 3, 4, 4.5, 5], &rng) : Double.random(in: 0.5...5, using: &rng)
    }

    static func calendarDate<R: RandomNumberGenerator>(_ rng: inout R) -> CalendarDate {
        CalendarDate(year: maybe(&rng, 0.1) ? pick([1, 999, 9999], &rng) : Int.random(in: 1900...2100, using: &rng),
                     month: Int.random(in: 1...12, using: &rng), day: Int.random(in: 1...28, using: &rng))!
    }

    /// Whole seconds from 0001-01-01 to 9999-12-31T23:59:59 UTC.
    static func timestamp<R: RandomNumberGenerator>(_ rng: inout R) -> Date {
        let seconds = maybe(&rng, 0.1) ? pick([-62_135_596_800, 253_402_300_799, 0, -1], &rng)
                                       : Int.random(in: 0...4_102_444_800, using: &rng)
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    // MARK: - Text

    /// Pieces that break naive YAML or Markdown handling.
    static let hostilePieces: [String] = [
        "\"", "'", ":", ": ", " #", "#", "#tag", "- ", "-", "? ", "?", "* ", "& ", "! ", "!", "% ", "@", "`", "|", ">", "> ",
        "[", "]", "{", "}", ",", "\\", "\\n", "---", "...", "... x", "###", "### Page 1", "## Passages", "## ", "# ", "**Note**: ",
        "^p-1", " ^abc", "^", "\t", " ", "  ", "\0", "\u{7}", "\u{1B}", "\u{7F}", "\u{85}", "\u{A0}", "\u{2028}", "\u{2029}",
        "\u{FEFF}", "\u{FFFE}", "\u{301}", "\u{600}", "😀", "👩‍👩‍👧", "🇫🇷", "שלום", "مرحبا", "\u{202E}", "日本語",
        "yes", "no", "on", "null", "~", "true", "FALSE", "123", "0123", "-7", "1.5", ".5", "1e5", "0x1F", "0o17", "1_000",
        "12:30", "2025-12-29", "2025-12-29T00:00:00", ".inf", "<<", "=", "Dune", "word", "a b", "Ümlaut", "e\u{301}",
    ]

    /// Lines that mean something to the frontmatter splitter or the book body parser.
    static let wholeLines = ["---", "...", "### Page 1", "### Chapter 2", "> quoted", ">", "## Heading", "# Title",
                             "**Note**: x", "**Added**:", "**Chapter**: 2", "**Tags**: a, b", "- item", "id: 1", "", " ", "\t"]

    /// One line of text (no `\n`, no `\r`), possibly empty.
    static func line<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        if maybe(&rng, 0.03) { return String(repeating: "long ", count: Int.random(in: 200...2000, using: &rng)) }
        if maybe(&rng, 0.1) { return pick(wholeLines, &rng) }
        var out = ""
        for _ in 0..<Int.random(in: 0...6, using: &rng) {
            out += maybe(&rng, 0.7) ? pick(hostilePieces, &rng) : String(Character(randomScalar(&rng)))
        }
        return out
    }

    /// Any text for a frontmatter value or key: line breaks and `\r` included, but not a leading
    /// U+FEFF, which Yams drops while decoding a scalar.
    static func text<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        var out = line(&rng)
        if maybe(&rng, 0.2) { out += pick(["\n", "\r\n", "\r", "\n\n"], &rng) + line(&rng) }
        return out.unicodeScalars.first == "\u{FEFF}" ? "x" + out : out
    }

    static func nonEmpty<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        let value = text(&rng)
        return value.isEmpty ? "8d2c-" + String(Int.random(in: 0...9999, using: &rng)) : value
    }

    /// Body text: any lines joined by `\n` (never `\r`), possibly empty or ending in `\n`.
    static func multiline<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        list(&rng, 1...4) { line(&$0) }.joined(separator: "\n")
    }

    /// Free text before `## Passages`: empty or ending in `\n`, with no `## Passages` line.
    static func introduction<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        guard maybe(&rng, 0.7) else { return "" }
        return list(&rng, 1...4) { rng in
            var value = line(&rng)
            while isPassagesMarker(value) { value = "x" + value }
            return value + "\n"
        }.joined()
    }

    /// Free text after the passages: empty, or a `## `/`# ` heading line, then any lines, ending in `\n`.
    static func appendix<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        guard maybe(&rng, 0.6) else { return "" }
        let heading = maybe(&rng, 0.2) ? pick(["##", "#"], &rng) : pick(["## ", "# ", "## Notes "], &rng) + line(&rng)
        return heading + "\n" + list(&rng, 0...4) { line(&$0) + "\n" }.joined()
    }

    /// One non-empty line without spaces or tabs at its ends.
    static func location<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        let value = pick(["1234-1240", "42", "a · b", "Location 3", "x ^p-1", "#"], &rng) + (maybe(&rng, 0.5) ? line(&rng) : "")
        let trimmed = value.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
        return trimmed.isEmpty ? "7" : trimmed
    }

    static func blockID<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        maybe(&rng, 0.5) ? PassageID.generate().rawValue
                         : pick(["p-7f3a", "abc", "Q-1", "0", "p--", "-"], &rng) + String(Int.random(in: 0...99, using: &rng))
    }

    static func isPassagesMarker(_ line: String) -> Bool {
        line.hasPrefix("## Passages") && line.dropFirst("## Passages".count).allSatisfy { $0 == " " || $0 == "\t" }
    }

    // MARK: - Helpers

    static func maybe<R: RandomNumberGenerator>(_ rng: inout R, _ probability: Double) -> Bool {
        Double.random(in: 0..<1, using: &rng) < probability
    }

    static func pick<T, R: RandomNumberGenerator>(_ values: [T], _ rng: inout R) -> T {
        values[Int.random(in: 0..<values.count, using: &rng)]
    }

    static func optional<T, R: RandomNumberGenerator>(_ rng: inout R, _ probability: Double = 0.7,
                                                      _ make: (inout R) -> T) -> T? {
        maybe(&rng, probability) ? make(&rng) : nil
    }

    static func list<T, R: RandomNumberGenerator>(_ rng: inout R, _ count: ClosedRange<Int>,
                                                  _ make: (inout R) -> T) -> [T] {
        (0..<Int.random(in: count, using: &rng)).map { _ in make(&rng) }
    }

    /// Any Unicode scalar but surrogates (which a `String` cannot hold) and `\r`, `\n` (added by
    /// the line-level generators only).
    private static func randomScalar<R: RandomNumberGenerator>(_ rng: inout R) -> Unicode.Scalar {
        while true {
            let range: ClosedRange<UInt32> = pick([0...0x7F, 0x80...0x7FF, 0x800...0xFFFF, 0x10000...0x10FFFF], &rng)
            if let scalar = Unicode.Scalar(UInt32.random(in: range, using: &rng)), scalar != "\r", scalar != "\n" {
                return scalar
            }
        }
    }
}
