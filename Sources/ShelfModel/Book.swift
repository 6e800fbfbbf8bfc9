import Foundation

/// Where a reader is with a book.
public enum ReadingStatus: String, Codable, Sendable, CaseIterable {
    case toRead = "to-read"
    case reading
    case read
    case abandoned
}

/// The stable identity of a passage inside its book, written as an Obsidian block id
/// (`^p-7f3a`) so passages survive reordering and edits and can be linked to.
public struct PassageID: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// A fresh short id: `p-` and 8 hex digits.
    public static func generate() -> PassageID {
        PassageID("p-" + String(UInt32.random(in: .min ... .max), radix: 16).leftPadded(to: 8))
    }
    public var description: String { rawValue }

    public init(from decoder: Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// A highlighted passage of a book, with what the reader and an AI said about it.
public struct Passage: Hashable, Codable, Sendable {
    public var id: PassageID
    public var page: Int?
    /// A Kindle location or other position marker (`1234-1240`), kept as written.
    public var location: String?
    /// The quoted text; may span several lines.
    public var text: String
    /// The reader's own note on the passage.
    public var note: String?
    public var aiSummary: String?
    public var dateAdded: CalendarDate?

    public init(id: PassageID = .generate(), page: Int? = nil, location: String? = nil, text: String,
                note: String? = nil, aiSummary: String? = nil, dateAdded: CalendarDate? = nil) {
        self.id = id
        self.page = page
        self.location = location
        self.text = text
        self.note = note
        self.aiSummary = aiSummary
        self.dateAdded = dateAdded
    }
}

/// A book in the library.
public struct Book: Hashable, Codable, Sendable {
    public var id: ItemID
    public var title: String
    public var author: String?
    /// Kept as text: ISBNs have leading zeros and an `X` check digit.
    public var isbn: String?
    public var status: ReadingStatus?
    public var currentPage: Int?
    public var totalPages: Int?
    /// 0.5 to 5; nil is unrated (imports map a rating of 0 to nil).
    public var rating: Double?
    public var dateAdded: CalendarDate?
    public var dateFinished: CalendarDate?
    public var tags: [String]
    /// The id of the row this book came from in an import (`goodreads:12345`), so a re-import
    /// updates the book instead of adding it again.
    public var sourceID: String?
    public var passages: [Passage]
    /// Frontmatter keys Shelf does not interpret, in file order.
    public var extraProperties: [Property]
    /// Free Markdown between the `# Title` heading and `## Passages`, kept verbatim.
    public var introduction: String
    /// Free Markdown after the passages section (from the next `## ` heading on), kept verbatim.
    public var appendix: String

    public init(id: ItemID = .generate(), title: String, author: String? = nil, isbn: String? = nil,
                status: ReadingStatus? = nil, currentPage: Int? = nil, totalPages: Int? = nil,
                rating: Double? = nil, dateAdded: CalendarDate? = nil, dateFinished: CalendarDate? = nil,
                tags: [String] = [], sourceID: String? = nil, passages: [Passage] = [],
                extraProperties: [Property] = [], introduction: String = "", appendix: String = "") {
        self.id = id
        self.title = title
        self.author = author
        self.isbn = isbn
        self.status = status
        self.currentPage = currentPage
        self.totalPages = totalPages
        self.rating = rating
        self.dateAdded = dateAdded
        self.dateFinished = dateFinished
        self.tags = tags
        self.sourceID = sourceID
        self.passages = passages
        self.extraProperties = extraProperties
        self.introduction = introduction
        self.appendix = appendix
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
