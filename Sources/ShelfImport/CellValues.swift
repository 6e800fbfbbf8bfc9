import Foundation
import ShelfModel

/// A cell that cannot become the value of its field; the row it is in is skipped.
struct CellProblem: Error, Hashable {
    var message: String
}

/// Turns CSV cell text into field values. Each parser accepts the spellings the supported
/// exports use and explains in its error which spellings it accepts.
enum CellValues {
    /// Goodreads wraps ISBNs as `="0441013597"` (so spreadsheets keep the leading zero) and
    /// writes `=""` for none; other exports write them bare, sometimes with hyphens.
    /// Returns nil for a cell that does not hold an ISBN-10 or ISBN-13.
    static func isbn(_ cell: String) -> String? {
        let text = textFormulaContent(cell) ?? cell
        let compact = text.filter { $0 != "-" && $0 != " " }.uppercased()
        let isISBN = (compact.count == 10 || compact.count == 13)
            && compact.dropLast().allSatisfy(\.isASCIIDigit)
            && (compact.last!.isASCIIDigit || (compact.count == 10 && compact.last == "X"))
        return isISBN ? compact : nil
    }

    /// Whether `cell` is empty once Goodreads' `=""` wrapper is removed.
    static func isBlank(_ cell: String) -> Bool {
        (textFormulaContent(cell) ?? cell).trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
    }

    /// The text inside a spreadsheet text formula `="…"`, or nil when `cell` is not one.
    private static func textFormulaContent(_ cell: String) -> String? {
        let text = cell.trimmingCharacters(in: .whitespaces)
        guard text.hasPrefix("=\""), text.hasSuffix("\""), text.count >= 3 else { return nil }
        return String(text.dropFirst(2).dropLast())
    }

    /// A whole number of pages, `0` or more.
    static func pageCount(_ cell: String) throws -> Int {
        guard let value = Int(cell.trimmingCharacters(in: .whitespaces)), value >= 0 else {
            throw CellProblem(message: "\"\(cell)\" is not a whole number of pages")
        }
        return value
    }

    /// A rating from 0 to 5: a number (`4`, `4.5`, `3.75`) or stars (`★★★★☆`, `⭐⭐⭐`, `★★★½`).
    /// 0 and no stars mean unrated (nil), as Goodreads writes `0` for books never rated.
    static func rating(_ cell: String) throws -> Double? {
        let text = cell.trimmingCharacters(in: .whitespaces)
        let value: Double
        if let number = Double(text), number.isFinite {
            value = number
        } else if let stars = starCount(text) {
            value = stars
        } else {
            throw CellProblem(message: "rating \"\(cell)\" is not a number from 0 to 5 or stars like ★★★★☆")
        }
        guard (0...5).contains(value) else {
            throw CellProblem(message: "rating \(text) is outside 0 to 5")
        }
        return value == 0 ? nil : value
    }

    private static func starCount(_ text: String) -> Double? {
        var stars = 0.0
        for scalar in text.unicodeScalars {
            switch scalar {
            case "★", "⭐": stars += 1
            case "½": stars += 0.5
            case "☆", "\u{FE0F}", " ": continue
            default: return nil
            }
        }
        return stars
    }

    /// A day: `2025-12-29`, `2025/12/29` (Goodreads, StoryGraph), `December 29, 2025` or
    /// `Dec 29, 2025` (Notion, Kindle), `29 December 2025`, each possibly followed by a time.
    /// A Notion range (`December 29, 2025 → January 3, 2026`) gives its start or its end.
    static func date(_ cell: String, end: Bool) throws -> CalendarDate {
        let parts = cell.components(separatedBy: "→")
        let text = (end ? parts.last! : parts.first!).trimmingCharacters(in: .whitespaces)
        guard let date = CalendarDate(parsing: text) ?? spelledOutDate(text) else {
            throw CellProblem(message: "\"\(cell)\" is not a date (write 2025-12-29, 2025/12/29 or December 29, 2025)")
        }
        return date
    }

    private static let monthNames = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// `December 29, 2025`, `Dec 29 2025`, `29 December 2025`, with an optional leading weekday
    /// (`Monday, December 29, 2025`) and trailing time, as Notion and Kindle write them.
    static func spelledOutDate(_ text: String) -> CalendarDate? {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        for start in words.indices {
            let rest = Array(words[start...].prefix(3))
            guard rest.count == 3 else { return nil }
            if let month = monthNumber(rest[0]), let day = Int(rest[1]), let year = Int(rest[2]), rest[2].count == 4 {
                return CalendarDate(year: year, month: month, day: day)
            }
            if let day = Int(rest[0]), let month = monthNumber(rest[1]), let year = Int(rest[2]), rest[2].count == 4 {
                return CalendarDate(year: year, month: month, day: day)
            }
            // Only a leading weekday may precede the date.
            if start > 0 { return nil }
        }
        return nil
    }

    private static func monthNumber(_ word: String) -> Int? {
        let name = word.lowercased()
        guard name.count >= 3, let index = monthNames.firstIndex(where: { name.hasPrefix($0) }) else { return nil }
        return index + 1
    }

    /// A reading status in the words the exports use (`to-read`, `currently-reading`,
    /// `did-not-finish`, `Want to Read`, `Finished`, `In progress`…); nil for any other word,
    /// since shelves and status options are user-defined in Goodreads and Notion.
    static func status(_ cell: String) -> ReadingStatus? {
        let word = cell.lowercased().filter(\.isLetter)
        switch word {
        case "toread", "wanttoread", "notstarted", "tbr", "unread", "queued", "upnext": return .toRead
        case "currentlyreading", "reading", "inprogress", "started", "paused": return .reading
        case "read", "finished", "done", "completed", "complete": return .read
        case "didnotfinish", "dnf", "abandoned", "dropped", "gaveup": return .abandoned
        default: return nil
        }
    }

    /// Comma-separated tags (Goodreads shelves, Notion multi-selects), trimmed, without
    /// empties or repeats, in the order written.
    static func tags(_ cell: String) -> [String] {
        var seen = Set<String>()
        return cell.split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { !$0.isEmpty && seen.insert($0).inserted }
    }

    /// A kept column's value: a number when the cell is clearly one (`412`, `4.29`), otherwise
    /// the text as written. Leading zeros (`0441013597`) stay text: they are identifiers.
    /// Goodreads' `="…"` wrapper marks a cell as text on purpose, so its content stays text.
    static func propertyValue(_ cell: String) -> PropertyValue {
        if let quoted = textFormulaContent(cell) { return .string(quoted) }
        let text = cell.trimmingCharacters(in: .whitespaces)
        let unsigned = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        let parts = unsigned.split(separator: ".", omittingEmptySubsequences: false)
        let digitsOnly = !unsigned.isEmpty && parts.count <= 2
            && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }
        let noLeadingZero = !(parts.first.map { $0.count > 1 && $0.hasPrefix("0") } ?? true)
        guard digitsOnly, noLeadingZero else { return .string(cell) }
        if parts.count == 1, let int = Int(text) { return .int(int) }
        if let double = Double(text) { return .double(double) }
        return .string(cell)
    }

    /// The property key for a column: snake_case ASCII (`Average Rating` → `average_rating`,
    /// `Character- or Plot-Driven?` → `character_or_plot_driven`).
    static func propertyKey(forColumn column: String) -> String {
        var key = ""
        for scalar in column.lowercased().decomposedStringWithCanonicalMapping.unicodeScalars {
            if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) {
                key.unicodeScalars.append(scalar)
            } else if scalar.properties.isDiacritic || scalar.properties.generalCategory == .nonspacingMark {
                continue
            } else if !key.isEmpty, key.last != "_" {
                key.append("_")
            }
        }
        while key.hasSuffix("_") { key.removeLast() }
        if key.isEmpty { return "column" }
        if key.first!.isASCIIDigit { key = "column_" + key }
        return key
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
