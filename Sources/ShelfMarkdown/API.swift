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

// SKELETON: signatures agreed between layers; the codec helper replaces the bodies.

/// Record ⇄ Markdown file bytes.
public enum MarkdownCodec {
    /// The canonical file text of `item` (frontmatter as Obsidian's Properties panel writes it,
    /// then the body). Deterministic: the same record always renders the same bytes.
    public static func render(_ item: Item) -> String {
        "---\nid: \(item.id)\ntitle: \(item.title)\n---\n"
    }

    /// Parses a file of `kind`. `fileTitle` (the file name without `.md`) is the title of a
    /// note whose frontmatter has none. Never crashes, never returns a half-parsed record.
    public static func parse(_ text: String, kind: ItemKind, fileTitle: String?) -> Result<ParsedItem, ParseFailure> {
        .failure(ParseFailure(diagnostics: [Diagnostic(line: 1, message: "codec not built yet")]))
    }
}

/// File names from titles: NFC, no `/`, NUL or control characters, no leading dot, at most 255
/// bytes with `.md`, stable across renders.
public enum FileNaming {
    /// `Dune - Frank Herbert.md` for a book, `Title.md` for a note.
    public static func fileName(for item: Item) -> String { item.title + ".md" }

    /// `name`, or the first of `name (2).md`, `name (3).md`, … for which `isTaken` is false.
    public static func uniqued(_ name: String, isTaken: (String) -> Bool) -> String { name }

    /// The title a file name stands for: `Dune.md` → `Dune`.
    public static func title(fromFileName name: String) -> String { name }
}
