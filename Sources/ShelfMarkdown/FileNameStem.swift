import Foundation

/// The steps `FileNaming` builds a name from.
enum FileNameStem {
    static let fileExtension = ".md"
    static let untitled = "Untitled"

    /// `text` as a name part: NFC, control characters → space, `/` and the characters that
    /// break Obsidian links or other systems' names replaced (``linkSafe(_:next:)``), no spaces
    /// at the ends, no leading dots. May be empty.
    static func sanitized(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        let source = Array(text.precomposedStringWithCanonicalMapping.unicodeScalars)
        for (offset, scalar) in source.enumerated() {
            if scalar.properties.generalCategory == .control {
                scalars.append(" ")
            } else {
                scalars.append(contentsOf: linkSafe(scalar, next: offset + 1 < source.count ? source[offset + 1] : nil).unicodeScalars)
            }
        }
        // NFC again: a dropped `#` may bring a combining mark next to a letter it composes with.
        let composed = String(scalars).precomposedStringWithCanonicalMapping.unicodeScalars
        let withoutLeading = composed.drop { $0 == "." || $0.properties.isWhitespace }
        return String(String.UnicodeScalarView(withoutLeading.reversed().drop(while: \.properties.isWhitespace).reversed()))
    }

    /// What `scalar` becomes in a name. Obsidian cuts a link target at `#`, `^` and `|` and
    /// refuses `[`, `]` in names; Windows and macOS refuse `\ : * ? " < >`. Each becomes what
    /// keeps the title readable: `Dune (Dune, #1)` → `Dune (Dune, 1)`, `AC/DC: Live` →
    /// `AC-DC - Live`, `[Draft]` → `(Draft)`.
    static func linkSafe(_ scalar: Unicode.Scalar, next: Unicode.Scalar?) -> String {
        switch scalar {
        case "/", "\\", "|": "-"
        case ":": next?.properties.isWhitespace == true ? " -" : "-"
        case "[", "<": "("
        case "]", ">": ")"
        case "\"": "'"
        case "#", "^", "*", "?": ""
        default: String(scalar)
        }
    }

    /// `stem` cut at a character boundary so that `stem + suffix + ".md"` fits the name limit, with
    /// spaces left at the cut dropped; `Untitled` when not even one character fits (a single
    /// character of hundreds of combining marks).
    static func fitted(_ stem: String, suffix: String) -> String {
        let budget = FileNaming.maximumNameBytes - fileExtension.utf8.count - suffix.utf8.count
        guard stem.utf8.count > budget else { return stem }
        var used = 0
        let kept = stem.prefix { character in
            used += character.utf8.count
            return used <= budget
        }
        let trimmed = String(String.UnicodeScalarView(kept.unicodeScalars.reversed().drop(while: \.properties.isWhitespace).reversed()))
        return trimmed.isEmpty ? untitled : trimmed
    }

    /// `name` without its `.md`, or nil when it has none. Compared on bytes: a name ending in a
    /// prepended mark would fuse with `.` into one `Character` and fail `hasSuffix`.
    static func withoutExtension(_ name: String) -> String? {
        guard name.utf8.count >= 3, name.utf8.reversed().starts(with: fileExtension.utf8.reversed()) else { return nil }
        return String(decoding: name.utf8.dropLast(fileExtension.utf8.count), as: UTF8.self)
    }
}
