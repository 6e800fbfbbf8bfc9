import Foundation
import ShelfModel

/// Date-times in frontmatter: written as ISO 8601 UTC with whole seconds (`2025-12-29T10:15:00Z`),
/// read in the forms people and tools write (`2025-12-29`, `2025-12-29T10:15`, `…:00.250`,
/// `…+01:00`, a space instead of `T`).
///
/// Hand-written arithmetic instead of `DateFormatter`: it is exact for years 1–9999, needs no
/// locale or calendar object, and costs nothing on the parse path.
enum Timestamp {
    /// `2025-12-29T10:15:00Z`; sub-second parts are dropped, and instants outside years 1–9999
    /// (which no frontmatter date can name) are held to those bounds.
    static func format(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970.rounded(.down)
        let seconds = interval.isNaN ? 0 : Int(min(max(interval, -62_135_596_800), 253_402_300_799))
        let days = seconds.floorDivided(by: 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civilDate(daysSince1970: days)
        var text = TextBuffer(capacity: 20)
        text.appendDate(year: year, month: month, day: day)
        text.append("T")
        text.append(secondOfDay / 3600, digits: 2)
        text.append(":")
        text.append(secondOfDay / 60 % 60, digits: 2)
        text.append(":")
        text.append(secondOfDay % 60, digits: 2)
        text.append("Z")
        return text.string
    }

    /// The instant `text` names, truncated to whole seconds; nil when it is not a date or date-time.
    /// A date alone is midnight UTC, and so is a date-time without an offset.
    static func parse(_ text: String) -> Date? {
        guard let parts = Parts(text) else { return nil }
        let days = daysSince1970(year: parts.date.year, month: parts.date.month, day: parts.date.day)
        let seconds = days * 86_400 + parts.secondOfDay - parts.offsetSeconds
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// `2025-12-29`: `CalendarDate.isoString` without the cost of `String(format:)`, which
    /// dominates rendering a book with hundreds of dated passages.
    static func day(_ date: CalendarDate) -> String {
        var text = TextBuffer(capacity: 10)
        text.append(date)
        return text.string
    }

    /// The day `text` names: `YYYY-MM-DD`, possibly followed by a time, read without Foundation;
    /// other spellings `CalendarDate(parsing:)` accepts (`2025/12/29`, `2025-1-5`) as a fallback.
    static func calendarDate(_ text: String) -> CalendarDate? {
        calendarDate(utf8: Array(text.utf8)[...])
    }

    /// `calendarDate(_:)` of UTF-8 still in a file's bytes: the parser reads a book's hundreds of
    /// `**Added**:` dates without making a `String` of each.
    static func calendarDate(utf8 bytes: ArraySlice<UInt8>) -> CalendarDate? {
        Parts(utf8: bytes)?.date ?? CalendarDate(parsing: String(decoding: bytes, as: UTF8.self))
    }

    /// The day of a date, or of a date-time at exactly midnight in UTC, else nil.
    static func midnightDate(_ text: String) -> CalendarDate? {
        guard let parts = Parts(text), parts.secondOfDay == 0, parts.offsetSeconds == 0, !parts.hasFraction else { return nil }
        return parts.date
    }

    /// The fields of `YYYY-MM-DD[(T|t| )HH:MM[:SS[.fff]][Z|±HH[:MM]]]`.
    private struct Parts {
        var date: CalendarDate
        var secondOfDay = 0
        var offsetSeconds = 0
        var hasFraction = false

        init?(_ text: String) { self.init(utf8: Array(text.utf8)[...]) }

        init?(utf8 bytes: ArraySlice<UInt8>) {
            var scanner = DigitScanner(bytes)
            guard let year = scanner.number(digits: 4), scanner.skip("-"),
                  let month = scanner.number(digits: 2), scanner.skip("-"),
                  let day = scanner.number(digits: 2),
                  let date = CalendarDate(year: year, month: month, day: day) else { return nil }
            self.date = date
            if scanner.atEnd { return }
            guard scanner.skip("T") || scanner.skip("t") || scanner.skip(" "),
                  let hour = scanner.number(digits: 2), hour < 24, scanner.skip(":"),
                  let minute = scanner.number(digits: 2), minute < 60 else { return nil }
            var second = 0
            if scanner.skip(":") {
                guard let value = scanner.number(digits: 2), value < 60 else { return nil }
                second = value
                if scanner.skip(".") {
                    let fraction = scanner.digitRun()
                    guard !fraction.isEmpty else { return nil }
                    hasFraction = fraction.contains { $0 != UInt8(ascii: "0") }
                }
            }
            secondOfDay = hour * 3600 + minute * 60 + second
            if scanner.skip("Z") || scanner.skip("z") || scanner.atEnd {
                guard scanner.atEnd else { return nil }
                return
            }
            let sign: Int
            if scanner.skip("+") { sign = 1 } else if scanner.skip("-") { sign = -1 } else { return nil }
            guard let offsetHours = scanner.number(digits: 2), offsetHours < 24 else { return nil }
            _ = scanner.skip(":")
            let offsetMinutes = scanner.atEnd ? 0 : scanner.number(digits: 2)
            guard let offsetMinutes, offsetMinutes < 60, scanner.atEnd else { return nil }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
        }
    }

    /// Days from 1970-01-01 to the given proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = y.floorDivided(by: 400)
        let yearOfEra = y - era * 400
        let monthIndex = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * monthIndex + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse of `daysSince1970`.
    private static func civilDate(daysSince1970 days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = z.floorDivided(by: 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}

/// Reads fixed-width ASCII numbers and separators from the front of a string.
private struct DigitScanner {
    private let bytes: ArraySlice<UInt8>
    private var index: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        index = bytes.startIndex
    }

    var atEnd: Bool { index == bytes.endIndex }

    mutating func skip(_ character: Unicode.Scalar) -> Bool {
        guard index < bytes.endIndex, bytes[index] == UInt8(ascii: character) else { return false }
        index += 1
        return true
    }

    /// Exactly `digits` decimal digits as a number.
    mutating func number(digits: Int) -> Int? {
        guard index + digits <= bytes.endIndex else { return nil }
        var value = 0
        for byte in bytes[index..<index + digits] {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        index += digits
        return value
    }

    /// The decimal digits from here on, possibly none.
    mutating func digitRun() -> ArraySlice<UInt8> {
        let start = index
        while index < bytes.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        return bytes[start..<index]
    }
}

extension Int {
    /// Division rounding toward negative infinity, for dates before 1970.
    fileprivate func floorDivided(by divisor: Int) -> Int {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
