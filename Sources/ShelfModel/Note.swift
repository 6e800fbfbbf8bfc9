import Foundation

/// A free-standing note.
public struct Note: Hashable, Codable, Sendable {
    public var id: ItemID
    public var title: String
    /// The Markdown body, everything after the frontmatter, kept verbatim.
    public var content: String
    public var favorite: Bool
    /// Whole seconds; the frontmatter carries no sub-second precision.
    public var created: Date?
    public var modified: Date?
    public var tags: [String]
    /// Frontmatter keys Shelf does not interpret, in file order.
    public var extraProperties: [Property]

    public init(id: ItemID = .generate(), title: String, content: String = "", favorite: Bool = false,
                created: Date? = nil, modified: Date? = nil, tags: [String] = [],
                extraProperties: [Property] = []) {
        self.id = id
        self.title = title
        self.content = content
        self.favorite = favorite
        self.created = created
        self.modified = modified
        self.tags = tags
        self.extraProperties = extraProperties
    }
}
