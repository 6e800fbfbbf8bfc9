import ShelfModel

/// How one passage is written under `## Passages`:
///
/// ```
/// ### Page 42 · Location 1234-1240
/// > The quoted text, one `> ` line per line
/// >
/// > (an empty line is a bare `>`), the block id ending the last line. ^p-7f3a
///
/// **Note**: the reader's note
/// **AI Summary**:
/// > a value with line breaks is written
/// > as quote lines under its label
/// **Added**: 2025-12-29
/// ```
///
/// The heading is `### Page N`, `### Location L`, `### Page N · Location L`, or `### Passage`
/// when neither is known. The quote follows the heading directly; the field lines, when there are
/// any, follow after one blank line, in the order Note, AI Summary, Added.
enum PassageMarkdown {
    static let separator = " · "

    /// The labels of a passage's field lines, in canonical order.
    enum Field: String, CaseIterable {
        case note = "Note"
        case aiSummary = "AI Summary"
        case added = "Added"

        /// `**Note**:`
        var label: String { "**\(rawValue)**:" }
    }

    /// The block text of `passage`, ending in `\n`.
    static func render(_ passage: Passage) -> String {
        var text = "### " + heading(page: passage.page, location: passage.location) + "\n"
        appendQuote(passage.text + " ^" + passage.id.rawValue, to: &text)
        let fields: [(Field, String?)] = [
            (.note, passage.note), (.aiSummary, passage.aiSummary), (.added, passage.dateAdded?.isoString),
        ]
        var wroteField = false
        for case let (field, value?) in fields {
            if !wroteField { text += "\n" }
            wroteField = true
            if value.utf8.contains(UInt8(ascii: "\n")) {
                text += field.label + "\n"
                appendQuote(value, to: &text)
            } else {
                text += value.isEmpty ? field.label + "\n" : field.label + " " + value + "\n"
            }
        }
        return text
    }

    /// `Page 42 · Location 1234-1240`, `Page 42`, `Location 1234-1240` or `Passage`.
    static func heading(page: Int?, location: String?) -> String {
        switch (page, location) {
        case let (page?, location?): "Page \(page)\(separator)Location \(location)"
        case let (page?, nil): "Page \(page)"
        case let (nil, location?): "Location \(location)"
        case (nil, nil): "Passage"
        }
    }

    /// The page and location of a heading's text (after `### `), or nil for another heading.
    static func parseHeading(_ text: Substring) -> (page: Int?, location: String?)? {
        let trimmed = text.trimmingSpacesAndTabs()
        if trimmed == "Passage" { return (nil, nil) }
        if let location = trimmed.dropping(prefix: "Location "), !location.isEmpty {
            return (nil, String(location))
        }
        guard let afterPage = trimmed.dropping(prefix: "Page ") else { return nil }
        let digits = afterPage.utf8.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        guard !digits.isEmpty, let page = Int(String(decoding: digits, as: UTF8.self)) else { return nil }
        let rest = Substring(afterPage.unicodeScalars.dropFirst(digits.count))
        if rest.isEmpty { return (page, nil) }
        guard let location = rest.dropping(prefix: separator + "Location "), !location.isEmpty else { return nil }
        return (page, String(location))
    }

    /// The passage text and block id of a quote's lines (each without its `>` prefix). The id is
    /// the ` ^id` ending the last line, made of letters, digits and `-` as Obsidian requires.
    static func splitBlockID(_ lastLine: Substring) -> (text: Substring, id: PassageID?) {
        let bytes = lastLine.utf8
        guard let caret = bytes.lastIndex(of: UInt8(ascii: "^")), caret != bytes.startIndex,
              bytes[bytes.index(before: caret)] == UInt8(ascii: " ") else { return (lastLine, nil) }
        let idBytes = bytes[bytes.index(after: caret)...]
        guard !idBytes.isEmpty, idBytes.allSatisfy(isBlockIDByte) else { return (lastLine, nil) }
        let text = Substring(lastLine.unicodeScalars[..<bytes.index(before: caret)])
        return (text, PassageID(String(decoding: idBytes, as: UTF8.self)))
    }

    /// The text of one quote line: after `> `, or after `>` when no space follows.
    static func quoteContent(_ line: SourceLine) -> Substring {
        line.dropping(bytes: line.starts(with: "> ") ? 2 : 1)
    }

    static func isBlockIDByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"): true
        default: false
        }
    }

    /// `> line` for each line of `text` (`>` for an empty one).
    private static func appendQuote(_ text: String, to out: inout String) {
        for line in text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            if line.isEmpty {
                out += ">\n"
            } else {
                out += "> "
                out += Substring(line)
                out += "\n"
            }
        }
    }
}

extension Substring {
    /// The rest after `prefix`, compared byte for byte, or nil.
    func dropping(prefix: String) -> Substring? {
        guard utf8.starts(with: prefix.utf8) else { return nil }
        return Substring(unicodeScalars.dropFirst(prefix.unicodeScalars.count))
    }

    /// Without spaces and tabs at either end.
    func trimmingSpacesAndTabs() -> Substring {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }),
              let last = scalars.lastIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
        return Substring(scalars[first...last])
    }
}
