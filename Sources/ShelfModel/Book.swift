import Foundation

/// Where a reader is with a book.
public enum ReadingStatus: String, Codable, Sendable, CaseIterable {
    case toRead = "to-read"
    case reading
    case read
    case abandoned

    /// The status `text` names: Shelf's own words, or what other apps and people write for
    /// them (Goodreads' `currently-reading`, `finished`, `want to read`, `DNF`), in any case,
    /// with spaces, `_` or `-`. Nil for anything else.
    public init?(naming text: String) {
        let word = text.lowercased().split(whereSeparator: { $0 == " " || $0 == "_" || $0 == "-" }).joined(separator: "-")
        if let status = ReadingStatus(rawValue: word) {
            self = status
            return
        }
        switch word {
        case "currently-reading", "in-progress", "started", "on-hold", "paused": self = .reading
        case "finished", "done", "completed", "complete": self = .read
        case "want-to-read", "toread", "tbr", "unread", "not-started", "planned": self = .toRead
        case "dnf", "did-not-finish", "gave-up", "stopped": self = .abandoned
        default: return nil
        }
    }
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
    /// The chapter the passage is in, as the reading app named it.
    public var chapter: String?
    /// The quoted text; may span several lines.
    public var text: String
    /// The reader's own note on the passage.
    public var note: String?
    public var aiSummary: String?
    /// Written as one `a, b` line, so a tag holds no comma or line break and no surrounding spaces
    /// (see `Passage.tags(from:)`).
    public var tags: [String]
    public var dateAdded: CalendarDate?
    /// The highlight colour in the reading app (`yellow`); kept in the store, not in the file.
    public var color: String?
    /// Where the passage came from in each import source, kept in the store, not in the file.
    public var sources: [PassageSource]

    public init(id: PassageID = .generate(), page: Int? = nil, location: String? = nil, chapter: String? = nil,
                text: String, note: String? = nil, aiSummary: String? = nil, tags: [String] = [],
                dateAdded: CalendarDate? = nil, color: String? = nil, sources: [PassageSource] = []) {
        self.id = id
        self.page = page
        self.location = location
        self.chapter = chapter
        self.text = text
        self.note = note
        self.aiSummary = aiSummary
        self.tags = tags
        self.dateAdded = dateAdded
        self.color = color
        self.sources = sources
    }

    /// The tags of a `a, b` list or a source's comma-separated tag cell: split at commas and
    /// line breaks, trimmed, empty ones dropped, each once. Split by scalar, not by character:
    /// a character such as U+0600 joins the comma after it into one grapheme.
    public static func tags(from list: String) -> [String] {
        var tags: [String] = []
        for piece in list.unicodeScalars.split(whereSeparator: { $0 == "," || $0 == "\n" || $0 == "\r" }) {
            let tag = String(String.UnicodeScalarView(piece)).trimmingCharacters(in: .whitespaces)
            if !tag.isEmpty, !tags.contains(tag) { tags.append(tag) }
        }
        return tags
    }

    private enum CodingKeys: String, CodingKey {
        case id, page, location, chapter, text, note, aiSummary, tags, dateAdded, color, sources
    }

    /// Records stored before tags and sources existed decode with none; empty lists are not
    /// written, so passages without them cost no bytes.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(PassageID.self, forKey: .id)
        page = try container.decodeIfPresent(Int.self, forKey: .page)
        location = try container.decodeIfPresent(String.self, forKey: .location)
        chapter = try container.decodeIfPresent(String.self, forKey: .chapter)
        text = try container.decode(String.self, forKey: .text)
        note = try container.decodeIfPresent(String.self, forKey: .note)
        aiSummary = try container.decodeIfPresent(String.self, forKey: .aiSummary)
        tags = try container.decodeIfPresent([String].self, forKey: .tags) ?? []
        dateAdded = try container.decodeIfPresent(CalendarDate.self, forKey: .dateAdded)
        color = try container.decodeIfPresent(String.self, forKey: .color)
        sources = try container.decodeIfPresent([PassageSource].self, forKey: .sources) ?? []
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encodeIfPresent(page, forKey: .page)
        try container.encodeIfPresent(location, forKey: .location)
        try container.encodeIfPresent(chapter, forKey: .chapter)
        try container.encode(text, forKey: .text)
        try container.encodeIfPresent(note, forKey: .note)
        try container.encodeIfPresent(aiSummary, forKey: .aiSummary)
        if !tags.isEmpty { try container.encode(tags, forKey: .tags) }
        try container.encodeIfPresent(dateAdded, forKey: .dateAdded)
        try container.encodeIfPresent(color, forKey: .color)
        if !sources.isEmpty { try container.encode(sources, forKey: .sources) }
    }
}

/// One import source's record of a passage: its own key for it, and the note it last gave, so
/// a re-import finds the passage again and can tell a note changed at the source from one the
/// reader edited in Shelf.
public struct PassageSource: Hashable, Codable, Sendable {
    /// The source's key, prefixed with the format: `kobo:<BookmarkID>`, `koreader:<position>`,
    /// `calibre:<annotation uuid>`, and for sources without ids a hash of what names the
    /// highlight: `readwise:<book and text>`, `kindle:<book, location and text>`.
    public var key: String
    /// The note as the source last gave it (nil: none).
    public var note: String?

    public init(key: String, note: String? = nil) {
        self.key = key
        self.note = note
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

extension Book {
    /// Takes from `stored` what the book's file does not show — each passage's colour and
    /// sources, matched by passage id — so saving the rendered file keeps them.
    public mutating func keepUnrenderedFields(of stored: Book) {
        guard stored.passages.contains(where: { $0.color != nil || !$0.sources.isEmpty }) else { return }
        let storedPassages = Dictionary(stored.passages.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for index in passages.indices {
            guard let old = storedPassages[passages[index].id] else { continue }
            passages[index].color = old.color
            passages[index].sources = old.sources
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
