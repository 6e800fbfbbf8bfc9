import Foundation

/// A day without a time or time zone, as written in frontmatter (`2025-12-29`).
///
/// Books record the day they were added or finished; a time of day would only invite time-zone
/// drift between devices.
public struct CalendarDate: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// A valid Gregorian date, or nil (`2025-02-30` is nil).
    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month),
              (1...CalendarDate.daysIn(month: month, year: year)).contains(day) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses `YYYY-MM-DD`; also `YYYY/MM/DD` (Goodreads) and a leading date of an ISO date-time
    /// such as `2025-12-29T00:00:00` (what some tools write back).
    public init?(parsing text: String) {
        let trimmed = text.trimmed()
        let datePart = trimmed.prefix { $0 != "T" && $0 != " " }
        let fields = datePart.split(omittingEmptySubsequences: false) { $0 == "-" || $0 == "/" }
        guard fields.count == 3, fields[0].count == 4, (1...2).contains(fields[1].count),
              (1...2).contains(fields[2].count),
              let y = Int(fields[0]), let m = Int(fields[1]), let d = Int(fields[2]) else { return nil }
        self.init(year: y, month: m, day: d)
    }

    /// The day `date` falls on in UTC.
    public init(_ date: Date) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        self.year = parts.year!
        self.month = parts.month!
        self.day = parts.day!
    }

    public static func today() -> CalendarDate { CalendarDate(Date()) }

    /// `YYYY-MM-DD`, zero padded.
    public var isoString: String {
        String(format: "%04d-%02d-%02d", year, month, day)
    }
    public var description: String { isoString }

    public static func < (a: CalendarDate, b: CalendarDate) -> Bool {
        (a.year, a.month, a.day) < (b.year, b.month, b.day)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    public init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let date = CalendarDate(parsing: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "not a date: \(text)"))
        }
        self = date
    }
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(isoString)
    }
}
