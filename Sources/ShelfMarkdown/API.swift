// Public surface of the codec. Implementation: see the other files of this folder.
import Foundation
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

extension ParseFailure {
    /// A failure listing `diagnostics` from the top of the file down, whichever part found them.
    init(inFileOrder diagnostics: [Diagnostic]) {
        self.init(diagnostics: diagnostics.sorted { $0.line < $1.line })
    }
}

/// A parsed file.
public struct ParsedItem: Hashable, Sendable {
    /// The record. When the file declared no `id:`, `item.id` is a fresh one and the caller
    /// decides (the item already at that path, or a new item).
    public var item: Item
    /// Whether the frontmatter carried an `id:`.
    public var declaredID: Bool
}

/// Record ⇄ Markdown file bytes.
///
/// # Canonical form
/// `---`, the frontmatter (see `FrontmatterWriter`: what Obsidian's Properties panel writes),
/// `---`, then the body: a note's content verbatim, or a book's title heading, introduction,
/// `## Passages` and appendix (see `BookBody` and `PassageMarkdown` for the exact lines).
///
/// # Representable domain
/// `parse(render(r)) == r` holds for every record within these limits, which are what Markdown
/// line structure and YAML keys impose; everything else (any Unicode in any field, quotes,
/// colons, `#`, `---`, `>` or `###` lines inside text, tabs, emoji, right-to-left text, empty
/// strings) round-trips as is.
/// - No body text (introduction, appendix, passage text and fields, note content) holds `\r`: the
///   parser reads `\r\n` and `\r` as `\n`. Frontmatter texts may hold anything, `\r` included,
///   except a leading U+FEFF, which Yams drops while decoding a scalar.
/// - A book's `introduction` and `appendix` are empty or end with `\n`; no introduction line is
///   `## Passages`; a non-empty appendix starts with a level-1 or level-2 heading line (`## …`).
/// - A passage id is letters, digits and `-` (an Obsidian block id), unique within its book; a
///   page is 0 or more; a location is one non-empty line without spaces or tabs at its ends.
/// - `current_page`/`total_pages` are 0 or more; `rating` is within 0.5…5; note dates are whole
///   seconds in years 1–9999; an item id is not empty.
/// - Extra property names are at most 150 Unicode scalars, unique as Swift compares strings (also
///   within nested mappings), and not one of the kind's own keys; their doubles are not NaN.
public enum MarkdownCodec {
    /// The canonical file text of `item` (frontmatter as Obsidian's Properties panel writes it,
    /// then the body). Deterministic: the same record always renders the same bytes.
    public static func render(_ item: Item) -> String {
        switch item {
        case .book(let book): BookMarkdown.render(book)
        case .note(let note): NoteMarkdown.render(note)
        }
    }

    /// Parses a file of `kind`. `fileTitle` (the file name without `.md`) is the title of a
    /// note whose frontmatter has none. Never crashes, never returns a half-parsed record.
    ///
    /// Accepts more than `render` writes: a UTF-8 BOM, CRLF line endings, no frontmatter at all,
    /// flow or block lists, any quoting, comments, keys in any order, `tags` as a single text,
    /// dates written as date-times. Unknown keys become `extraProperties`. A file without `id:`
    /// gets a fresh id and `declaredID == false`; a book without `title:` takes the `# ` heading,
    /// then `fileTitle`.
    public static func parse(_ text: String, kind: ItemKind, fileTitle: String?) -> Result<ParsedItem, ParseFailure> {
        SplitDocument.split(text).flatMap { document in
            switch kind {
            case .book: BookMarkdown.parse(document, fileTitle: fileTitle)
            case .note: NoteMarkdown.parse(document, fileTitle: fileTitle)
            }
        }
    }
}

extension MarkdownCodec {
    /// Parses a file's bytes as ``parse(_:kind:fileTitle:)`` does its text; bytes that are not
    /// UTF-8 fail with a diagnostic on the first line that breaks.
    public static func parse(bytes: some Collection<UInt8>, kind: ItemKind,
                             fileTitle: String?) -> Result<ParsedItem, ParseFailure> {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return .failure(ParseFailure(diagnostics: [
                Diagnostic(line: firstLineNotUTF8(Array(bytes)), message: "the file is not UTF-8 text; save it as UTF-8"),
            ]))
        }
        return parse(text, kind: kind, fileTitle: fileTitle)
    }

    /// The 1-based line of the first byte sequence that is not UTF-8.
    private static func firstLineNotUTF8(_ bytes: [UInt8]) -> Int {
        var line = 1
        var start = 0
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") {
            if String(validating: bytes[start..<index], as: UTF8.self) == nil { return line }
            line += 1
            start = index + 1
        }
        return line
    }
}

/// File names from titles: NFC, no `/`, NUL or control characters, none of the characters that
/// break Obsidian links (`# ^ [ ] |`) or other systems' names (`\ : * ? " < >`), no leading dot,
/// at most ``maximumNameBytes`` with `.md`, stable across renders.
///
/// `/` becomes `-` (so `AC/DC` stays readable as `AC-DC`), `: ` becomes ` - `, brackets become
/// parentheses, `#` `^` `*` `?` go (`Dune (Dune, #1)` → `Dune (Dune, 1)`); NUL, tabs, line breaks and other
/// control characters become spaces. Spaces at either end and leading dots are dropped (a name
/// starting with `.` would be hidden); a title with nothing left is `Untitled`. Longer names are
/// cut at a character boundary, leaving room for `.md` and any ` (2)` suffix.
public enum FileNaming {
    /// NAME_MAX (255) less room for the longest name an editor makes beside a file
    /// (`NAME___jb_tmp___`; also `.NAME.swp`, `.#NAME`, `NAME~`), so editing never meets a
    /// "File name too long".
    public static let maximumNameBytes = 255 - 16

    /// `Dune - Frank Herbert.md` for a book, `Title.md` for a note.
    public static func fileName(for item: Item) -> String {
        var stem = FileNameStem.sanitized(item.title)
        if stem.isEmpty { stem = FileNameStem.untitled }
        if case .book(let book) = item, let author = book.author.map(FileNameStem.sanitized), !author.isEmpty {
            stem += " - " + author
        }
        return FileNameStem.fitted(stem, suffix: "") + FileNameStem.fileExtension
    }

    /// The name an existing item file `name` (`….md`) gets when asked to (`shelf rename
    /// --safe-names`): its stem with the characters that break links replaced as in
    /// ``fileName(for:)``. Equal to `name` when it is safe already.
    public static func safeName(of name: String) -> String {
        guard let stem = FileNameStem.withoutExtension(name) else { return name }
        let safe = FileNameStem.sanitized(stem)
        return FileNameStem.fitted(safe.isEmpty ? FileNameStem.untitled : safe, suffix: "") + FileNameStem.fileExtension
    }

    /// `name`, or the first of `name (2).md`, `name (3).md`, … for which `isTaken` is false.
    public static func uniqued(_ name: String, isTaken: (String) -> Bool) -> String {
        guard isTaken(name) else { return name }
        let stem = FileNameStem.withoutExtension(name)
        let fileExtension = stem == nil ? "" : FileNameStem.fileExtension
        var number = 2
        while true {
            let suffix = " (\(number))"
            let candidate = FileNameStem.fitted(stem ?? name, suffix: suffix) + suffix + fileExtension
            if !isTaken(candidate) { return candidate }
            number += 1
        }
    }

    /// `stem + suffix + ".md"`, the stem cut at a character boundary so the name fits the
    /// length rule (conflict copies: `Dune (conflict 2026-11-24 101500 laptop).md`).
    public static func fileName(stem: String, suffix: String) -> String {
        FileNameStem.fitted(stem, suffix: suffix) + suffix + FileNameStem.fileExtension
    }

    /// `Stem (conflict YYYY-MM-DD HHMMSS device).md` for a conflict copy of the file `name`,
    /// made at `time` (UTC) on `device`; with a `tag`, `(conflict … device tag)`. The stem of a
    /// conflict copy is its original's, so names never nest.
    public static func conflictCopyName(of name: String, time: Date, device: String, tag: String? = nil) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HHmmss"
        let tagged = tag.map { " " + $0 } ?? ""
        return fileName(stem: conflictStem(of: name), suffix: " (conflict \(formatter.string(from: time)) \(device)\(tagged))")
    }

    /// The stem of `name` without any conflict suffix.
    private static func conflictStem(of name: String) -> String {
        var stem = Substring(FileNameStem.withoutExtension(name) ?? name)
        if let range = stem.range(of: " (conflict ", options: .backwards), stem.hasSuffix(")") {
            stem = stem[..<range.lowerBound]
        }
        return String(stem)
    }

    /// How the names of the conflict copies of the file `name` begin (`Stem (conflict `); the
    /// copies of a name too long to keep whole beside the suffix begin otherwise.
    public static func conflictCopyPrefix(of name: String) -> String {
        conflictStem(of: name) + " (conflict "
    }

    /// Whether the file at `path` is a conflict copy (see ``conflictCopyName(of:time:device:)``).
    public static func isConflictCopy(_ path: String) -> Bool {
        let name = path.split(separator: "/").last ?? ""
        return name.contains(" (conflict ") && name.hasSuffix(").md")
    }

    /// The title a file name stands for: `Dune.md` → `Dune`.
    public static func title(fromFileName name: String) -> String {
        FileNameStem.withoutExtension(name) ?? name
    }
}
