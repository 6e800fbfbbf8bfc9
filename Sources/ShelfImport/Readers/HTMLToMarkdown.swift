import Foundation

/// Turns the small HTML of book descriptions (Calibre's comments: paragraphs, emphasis,
/// links, lists, line breaks) into Markdown for the book's free text. Tags it does not know
/// are dropped and their text kept; headings become bold lines, so a description can never
/// start a section of the book file.
enum HTMLToMarkdown {
    static func convert(_ html: String) -> String {
        var out = ""
        var lists: [(ordered: Bool, count: Int)] = []
        var links: [String] = []
        var index = html.startIndex
        var pendingSpace = false

        func breakParagraph() {
            while out.hasSuffix(" ") { out.removeLast() }
            if !out.isEmpty, !out.hasSuffix("\n\n") { out += out.hasSuffix("\n") ? "\n" : "\n\n" }
            pendingSpace = false
        }
        func breakLine() {
            while out.hasSuffix(" ") { out.removeLast() }
            if !out.isEmpty, !out.hasSuffix("\n") { out += "\n" }
            pendingSpace = false
        }
        func emit(_ text: String) {
            if pendingSpace, !out.isEmpty, !out.hasSuffix("\n"), !out.hasSuffix(" ") { out += " " }
            pendingSpace = false
            out += text
        }

        while index < html.endIndex {
            if html[index] == "<", let close = html[index...].firstIndex(of: ">") {
                let tag = html[html.index(after: index)..<close]
                index = html.index(after: close)
                let isEnd = tag.hasPrefix("/")
                let name = tag.drop { $0 == "/" }.prefix { $0.isLetter || $0.isNumber }.lowercased()
                switch (name, isEnd) {
                case ("p", _), ("div", _): breakParagraph()
                case ("br", _): breakLine()
                case ("b", _), ("strong", _): emit("**")
                case ("i", _), ("em", _): emit("*")
                case ("h1", _), ("h2", _), ("h3", _), ("h4", _), ("h5", _), ("h6", _):
                    if isEnd { emit("**") }
                    breakParagraph()
                    if !isEnd { emit("**") }
                case ("a", false):
                    links.append(attribute("href", in: tag) ?? "")
                    emit("[")
                case ("a", true):
                    let href = links.popLast() ?? ""
                    out += href.isEmpty ? "]" : "](\(href))"
                case ("ul", false), ("ol", false):
                    lists.isEmpty ? breakParagraph() : breakLine()
                    lists.append((name == "ol", 0))
                case ("ul", true), ("ol", true):
                    lists.removeLast()
                    lists.isEmpty ? breakParagraph() : breakLine()
                case ("li", false):
                    breakLine()
                    guard !lists.isEmpty else { break }
                    lists[lists.count - 1].count += 1
                    let list = lists[lists.count - 1]
                    out += String(repeating: "  ", count: lists.count - 1) + (list.ordered ? "\(list.count). " : "- ")
                default: break
                }
                continue
            }
            let character = html[index]
            index = html.index(after: index)
            if character.isWhitespace {
                pendingSpace = true
            } else if character == "&", let semicolon = html[index...].prefix(10).firstIndex(of: ";"),
                      let decoded = entity(String(html[index..<semicolon])) {
                emit(decoded)
                index = html.index(after: semicolon)
            } else {
                emit(String(character))
            }
        }
        return out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The value of `name="…"` (or `'…'`) in a tag's text.
    private static func attribute(_ name: String, in tag: Substring) -> String? {
        guard let range = tag.range(of: name + "=") else { return nil }
        let rest = tag[range.upperBound...]
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        return rest.dropFirst().prefix { $0 != quote }.description
    }

    /// `amp` → `&`, `#233` → `é`, `#xE9` → `é`; nil for a name it does not know.
    private static func entity(_ name: String) -> String? {
        let named = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}",
                     "mdash": "—", "ndash": "–", "hellip": "…", "rsquo": "’", "lsquo": "‘", "rdquo": "”", "ldquo": "“"]
        if let text = named[name] { return text }
        guard name.hasPrefix("#") else { return nil }
        let number = name.dropFirst()
        let value = number.lowercased().hasPrefix("x") ? UInt32(number.dropFirst(), radix: 16) : UInt32(number)
        return value.flatMap(Unicode.Scalar.init).map { String(Character($0)) }
    }
}
