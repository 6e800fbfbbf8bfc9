// Public surface of the codec. Implementation: see the other files of this folder.
import ShelfModel

/// One problem found while parsing a file, with the 1-based line it is on.
public struct Diagnostic: Error, Hashable, Codable, Sendable, CustomStringConvertible {
    public var line: Int
    public var message: String
    public init(line: Int, message: String) {
        self.line = line
        self.message = message
    }
    /// `line 7: current_page: "many" is not a whole number`
    public var description: String { "line \(line): \(message)" }
}

/// Why a file could not become a record; nothing of it was applied.
public struct ParseFailure: Error, Hashable, Sendable, CustomStringConvertible {
    public var diagnostics: [Diagnostic]
    public init(diagnostics: [Diagnostic]) { self.diagnostics = diagnostics }
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}

/// A parsed file.
public struct ParsedItem: Hashable, Sendable {
    /// The record. When the file declared no `id:`, `item.id` is a fresh one and the caller
    /// decides (the item already at that path, or a new item).
    public var item: Item
    /// Whether the frontmatter carried an `id:`.
    public var declaredID: Bool
    public init(item: Item, declaredID: Bool) {
        self.item = item
        self.declaredID = declaredID
    }
}
