import ShelfModel

/// How one passage is written under `## Passages`:
///
/// ```
/// ### Page 42 · Location 1234-1240
/// > The quoted text, one `> ` line per line
/// >
/// > (an empty line is a bare `>`), the block id ending the last line. ^p-7f3a
///
/// **Chapter**: Chapter 3: The Desert
/// **Note**: the reader's note
/// **AI Summary**:
/// > a value with line breaks is written
/// > as quote lines under its bare label
/// **Tags**: favourite, fear
/// **Added**: 2025-12-29
/// ```
///
/// The heading is `### Page N`, `### Location L`, `### Page N · Location L`, or `### Passage`
/// when neither is known. The quote follows the heading directly; the field lines, when there are
/// any, follow after one blank line, in the order Chapter, Note, AI Summary, Tags, Added (tags
/// only when there are some, comma-separated on one line). A one-line value sits
/// on its label's line (`**Note**:` alone for an empty one); a value with line breaks is quoted
/// below the bare label, which keeps any text — blank lines, `### `, `>` — lossless.
enum PassageMarkdown {
    /// The labels of a passage's field lines, in canonical order.
    enum Field: CaseIterable {
        case chapter, note, aiSummary, tags, added

        /// `**Note**:`
        var label: StaticString {
            switch self {
            case .chapter: "**Chapter**:"
            case .note: "**Note**:"
            case .aiSummary: "**AI Summary**:"
            case .tags: "**Tags**:"
            case .added: "**Added**:"
            }
        }

        /// "`**Chapter**:`, `**Note**:`, … or `**Added**:`", for messages about field lines.
        static let labelList: String = {
            let labels = allCases.map { "`\($0.label)`" }
            return labels.dropLast().joined(separator: ", ") + " or " + labels.last!
        }()
    }

    /// One value per field, stored inline: the parse path reads thousands of field lines.
    struct PerField<Value> {
        private var chapter: Value?
        private var note: Value?
        private var aiSummary: Value?
        private var tags: Value?
        private var added: Value?

        subscript(field: Field) -> Value? {
            get {
                switch field {
                case .chapter: chapter
                case .note: note
                case .aiSummary: aiSummary
                case .tags: tags
                case .added: added
                }
            }
            set {
                switch field {
                case .chapter: chapter = newValue
                case .note: note = newValue
                case .aiSummary: aiSummary = newValue
                case .tags: tags = newValue
                case .added: added = newValue
                }
            }
        }
    }

    /// Appends the block of `passage`, ending in `\n`.
    static func render(_ passage: Passage, into out: inout TextBuffer) {
        out.append("### ")
        appendHeading(page: passage.page, location: passage.location, into: &out)
        out.appendNewline()
        appendQuote(passage.text, blockID: passage.id, into: &out)
        if passage.chapter != nil || passage.note != nil || passage.aiSummary != nil || !passage.tags.isEmpty
            || passage.dateAdded != nil { out.appendNewline() }
        appendField(.chapter, passage.chapter, into: &out)
        appendField(.note, passage.note, into: &out)
        appendField(.aiSummary, passage.aiSummary, into: &out)
        if !passage.tags.isEmpty { appendField(.tags, passage.tags.joined(separator: ", "), into: &out) }
        if let day = passage.dateAdded {
            out.append(Field.added.label)
            out.append(" ")
            out.append(day)
            out.appendNewline()
        }
    }

    /// `**Label**: value`, `**Label**:` for an empty value, or the bare label and the value quoted
    /// below it when it has line breaks.
    private static func appendField(_ field: Field, _ value: String?, into out: inout TextBuffer) {
        guard let value else { return }
        out.append(field.label)
        if value.containsNewline {
            out.appendNewline()
            appendQuote(value, blockID: nil, into: &out)
        } else if value.isEmpty {
            out.appendNewline()
        } else {
            out.append(" ")
            out.appendLine(value)
        }
    }

    /// `Page 42 · Location 1234-1240`, `Page 42`, `Location 1234-1240` or `Passage`.
    private static func appendHeading(page: Int?, location: String?, into out: inout TextBuffer) {
        if let page {
            out.append("Page ")
            out.append(String(page))
        }
        if let location {
            out.append(page == nil ? "Location " : " · Location ")
            out.append(location)
        }
        if page == nil && location == nil { out.append("Passage") }
    }

    /// The page and location of a heading's text (after `### `), or nil for another heading.
    static func parseHeading(_ text: ArraySlice<UInt8>) -> (page: Int?, location: String?)? {
        let trimmed = text.trimmingSpacesAndTabs()
        if trimmed.isEqual(to: "Passage") { return (nil, nil) }
        if trimmed.starts(with: "Location ") {
            let location = trimmed.dropFirst(9)
            return location.isEmpty ? nil : (nil, location.string)
        }
        guard trimmed.starts(with: "Page ") else { return nil }
        let afterPage = trimmed.dropFirst(5)
        let digits = afterPage.prefix(while: \.isASCIIDigit)
        guard let page = digits.decimalValue else { return nil }
        let rest = afterPage[digits.endIndex...]
        if rest.isEmpty { return (page, nil) }
        guard rest.starts(with: " · Location ") else { return nil }
        let location = rest.dropFirst(" · Location ".utf8.count)
        return location.isEmpty ? nil : (page, location.string)
    }

    /// The passage text and block id of a quote's last line (without its `>` prefix). The id is
    /// the ` ^id` ending the line, made of letters, digits and `-` as Obsidian requires.
    static func splitBlockID(_ lastLine: ArraySlice<UInt8>) -> (text: ArraySlice<UInt8>, id: PassageID?) {
        guard let caret = lastLine.lastIndex(of: UInt8(ascii: "^")), caret > lastLine.startIndex,
              lastLine[caret - 1] == UInt8(ascii: " ") else { return (lastLine, nil) }
        let id = lastLine[(caret + 1)...]
        guard !id.isEmpty, id.allSatisfy(isBlockIDByte) else { return (lastLine, nil) }
        return (lastLine[..<(caret - 1)], PassageID(id.string))
    }

    /// The text of one quote line: after `> `, or after `>` when no space follows.
    static func quoteContent(_ line: TextLine) -> ArraySlice<UInt8> {
        line.dropping(bytes: line.starts(with: "> ") ? 2 : 1)
    }

    private static func isBlockIDByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"): true
        default: false
        }
    }

    /// `> line` for each line of `text` (`>` for an empty one), ` ^id` ending the last.
    private static func appendQuote(_ text: String, blockID: PassageID?, into out: inout TextBuffer) {
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            while true {
                let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
                let isLast = end == bytes.endIndex
                if start == end && !(isLast && blockID != nil) {
                    out.append(">")
                } else {
                    out.append("> ")
                    out.append(bytes[start..<end])
                }
                if isLast {
                    if let blockID {
                        out.append(" ^")
                        out.append(blockID.rawValue)
                    }
                    out.appendNewline()
                    return
                }
                out.appendNewline()
                start = end + 1
            }
        }
    }
}

extension String {
    /// Whether the text has a `\n`.
    var containsNewline: Bool { utf8.firstNewline(from: utf8.startIndex) != utf8.endIndex }
}

extension String.UTF8View {
    /// The index of the first `\n` at or after `start`, or `endIndex`. Found with `memchr` on the
    /// contiguous bytes: `firstIndex(of:)` walks them one by one through the generic `Collection`
    /// path, which showed up in profiles of rendering a book.
    func firstNewline(from start: Index) -> Index {
        let startOffset = distance(from: startIndex, to: start)
        let offset = withContiguousStorageIfAvailable { $0.index(of: UInt8(ascii: "\n"), from: startOffset) }
            ?? distance(from: startIndex, to: self[start...].firstIndex(of: UInt8(ascii: "\n")) ?? endIndex)
        return index(startIndex, offsetBy: offset)
    }
}
