import Foundation
import ShelfModel

/// A Kindle location or location range (`1234-1240`, or `1234` for a note or bookmark).
struct KindleLocation: Hashable, Sendable, CustomStringConvertible {
    var start: Int
    var end: Int

    /// `1234-1240`, `1234`, and the abbreviated ranges older Kindles write (`1234-40`).
    init?(parsing text: String) {
        let bounds = text.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...2).contains(bounds.count), let start = Int(bounds[0]) else { return nil }
        var end = start
        if bounds.count == 2 {
            guard let written = Int(bounds[1]), !bounds[1].isEmpty else { return nil }
            let digits = bounds[1].count
            end = written >= start ? written : Int(String(bounds[0].dropLast(digits)) + bounds[1]) ?? written
        }
        guard start >= 0, end >= start else { return nil }
        self.start = start
        self.end = end
    }

    func contains(_ other: KindleLocation) -> Bool { start <= other.start && other.end <= end }
    func contains(_ position: Int) -> Bool { (start...end).contains(position) }

    var description: String { start == end ? "\(start)" : "\(start)-\(end)" }
}

/// One entry of a Kindle's `My Clippings.txt`.
struct KindleClipping: Hashable, Sendable {
    enum Kind: Hashable, Sendable { case highlight, note, bookmark }

    /// The line of the file where the entry's title line is.
    var line: Int
    var title: String
    var author: String?
    var kind: Kind
    var page: Int?
    var location: KindleLocation?
    var dateAdded: CalendarDate?
    /// The highlighted text or the note; empty for a bookmark.
    var text: String
}

/// Reads `My Clippings.txt`: entries separated by `==========`, each a `Title (Author)` line,
/// a `- Your Highlight on page 42 | Location 1234-1240 | Added on …` line, a blank line and
/// the text. Kindles write a byte order mark before many titles and CRLF line ends; both are
/// tolerated anywhere.
enum KindleClippings {
    static let separator = "=========="

    /// Whether `text` looks like clippings rather than some other text file.
    static func looksLikeClippings(_ text: String) -> Bool {
        let lines = text.prefix(64 * 1024).split(whereSeparator: \.isNewline).map(cleanLine)
        return lines.contains(separator) && lines.contains { $0.hasPrefix("- Your ") || $0.hasPrefix("- Highlight") }
    }

    /// The entries of `text` in file order, and the entries that could not be read. An entry
    /// touching one of `garbledLines` (bytes that were not UTF-8) is one of those.
    static func parse(_ text: String, garbledLines: Set<Int> = []) -> (clippings: [KindleClipping], problems: [ImportProblem]) {
        var clippings: [KindleClipping] = []
        var problems: [ImportProblem] = []
        var entry: [(line: Int, text: String)] = []
        func finishEntry() {
            defer { entry = [] }
            guard let first = entry.firstIndex(where: { !$0.text.isEmpty }) else { return }
            if let garbled = entry.first(where: { garbledLines.contains($0.line) }) {
                problems.append(ImportProblem(line: entry[first].line, message: "this clipping is garbled (line \(garbled.line) is not UTF-8 text) and was skipped; the other clippings were imported. Fix or delete it in the file to import it"))
                return
            }
            do {
                clippings.append(try clipping(from: Array(entry[first...])))
            } catch {
                problems.append(ImportProblem(line: entry[first].line, message: (error as? CellProblem)?.message ?? "\(error)"))
            }
        }
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = cleanLine(rawLine)
            if line == separator {
                finishEntry()
            } else {
                entry.append((index + 1, line))
            }
        }
        finishEntry()
        return (clippings, problems)
    }

    /// A line without byte order marks, NUL bytes and trailing spaces (a damaged entry's
    /// separator line still ends it).
    private static func cleanLine(_ line: Substring) -> String {
        String(String.UnicodeScalarView(line.unicodeScalars.filter { $0 != "\u{FEFF}" && $0 != "\u{0}" }))
            .trimmed()
    }

    private static func clipping(from lines: [(line: Int, text: String)]) throws -> KindleClipping {
        guard lines.count >= 2, lines[1].text.hasPrefix("- ") else {
            throw CellProblem(message: "not a Kindle clipping: expected a \"Title (Author)\" line, then a line like \"- Your Highlight on page 42 | Location 1234-1240 | Added on …\"")
        }
        let (title, author) = titleAndAuthor(lines[0].text)
        let details = lines[1].text.dropFirst(2).split(separator: "|").map { $0.trimmed() }
        let head = details[0].lowercased()
        let kind: KindleClipping.Kind
        if head.contains("highlight") {
            kind = .highlight
        } else if head.contains("note") {
            kind = .note
        } else if head.contains("bookmark") {
            kind = .bookmark
        } else {
            throw CellProblem(message: "\"\(lines[1].text)\" is neither a highlight, a note nor a bookmark")
        }
        var clipping = KindleClipping(line: lines[0].line, title: title, author: author, kind: kind,
                                      text: lines[2...].map(\.text).joined(separator: "\n")
                                          .trimmed())
        for detail in details {
            let lowered = detail.lowercased()
            if let page = value(after: "page ", in: lowered) {
                clipping.page = Int(page)
            }
            if let location = value(after: "location ", in: lowered) ?? value(after: "loc. ", in: lowered) {
                clipping.location = KindleLocation(parsing: location)
            }
            if let range = detail.range(of: "Added on ", options: .caseInsensitive) {
                clipping.dateAdded = CellValues.spelledOutDate(String(detail[range.upperBound...]))
            }
        }
        if kind != .bookmark, clipping.text.isEmpty {
            throw CellProblem(message: "the \(kind == .note ? "note" : "highlight") of \"\(title)\" has no text")
        }
        return clipping
    }

    /// The word following `marker` in `text` (`page 42` → `42`).
    private static func value(after marker: String, in text: String) -> String? {
        guard let range = text.range(of: marker) else { return nil }
        let word = text[range.upperBound...].prefix { !$0.isWhitespace }
        return word.isEmpty ? nil : String(word)
    }

    /// `Dune (Dune Chronicles, Book 1) (Frank Herbert)` → title `Dune (Dune Chronicles,
    /// Book 1)`, author `Frank Herbert`: the author is the last parenthesised group, since
    /// titles carry series names in parentheses too.
    static func titleAndAuthor(_ line: String) -> (title: String, author: String?) {
        guard line.hasSuffix(")") else { return (line, nil) }
        var depth = 0
        var index = line.endIndex
        while index > line.startIndex {
            index = line.index(before: index)
            switch line[index] {
            case ")": depth += 1
            case "(": depth -= 1
            default: break
            }
            if depth == 0 {
                let author = line[line.index(after: index)..<line.index(before: line.endIndex)]
                    .trimmed()
                let title = line[..<index].trimmed()
                guard !title.isEmpty else { return (line, nil) }
                return (title, author.isEmpty ? nil : author)
            }
        }
        return (line, nil)
    }
}
