import Foundation

/// What a person typed into `shelf search`, as FTS5 sees it and as a passage is checked
/// against it.
///
/// Each whitespace-separated word is a quoted FTS5 string (inner `"` doubled), so operators,
/// column filters and stray quotes in user text are searched for, never parsed; a word ending
/// in `*` (`desperat*`) finds every word starting so. Control characters separate words too:
/// SQLite would cut the query at a NUL, mid-string. `matches` folds text the way the index's
/// `unicode61 remove_diacritics 2` tokenizer does, so the passages it names are the ones the
/// index found the book by.
public struct SearchQuery: Hashable, Sendable {
    /// One word of the query: its tokens (`mind-killer` is two, matched as a phrase) and
    /// whether the last one is a prefix.
    struct Term: Hashable, Sendable {
        var written: String
        var tokens: [String]
        var isPrefix: Bool
    }

    var terms: [Term]

    /// Nil when `text` holds no word to look for.
    public init?(_ text: String) {
        let words = text.split { $0.isWhitespace || $0.unicodeScalars.allSatisfy { $0.properties.generalCategory == .control } }
        terms = words.compactMap { word in
            var written = word
            while written.hasSuffix("*") { written = written.dropLast() }
            guard !written.isEmpty else { return nil }
            return Term(written: String(written), tokens: Self.tokens(String(written)), isPrefix: written.count < word.count)
        }
        guard !terms.isEmpty else { return nil }
    }

    /// The FTS5 MATCH expression: every term, quoted; `"desperat"*` for a prefix.
    var matchExpression: String {
        terms.map { "\"" + $0.written.replacingOccurrences(of: "\"", with: "\"\"") + "\"" + ($0.isPrefix ? "*" : "") }
            .joined(separator: " ")
    }

    /// Whether `text` holds any term of the query (a passage matches when one of its words
    /// does; the book as a whole matched every term).
    public func matchesAnyTerm(_ text: String) -> Bool {
        let words = Self.tokens(text)
        return terms.contains { term in
            guard !term.tokens.isEmpty, words.count >= term.tokens.count else { return false }
            return (0...(words.count - term.tokens.count)).contains { start in
                term.tokens.indices.allSatisfy { offset in
                    let word = words[start + offset]
                    let token = term.tokens[offset]
                    return term.isPrefix && offset == term.tokens.count - 1 ? word.hasPrefix(token) : word == token
                }
            }
        }
    }

    /// Lower-cased, diacritic-free runs of letters and digits, as unicode61 splits text.
    static func tokens(_ text: String) -> [String] {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            .split { !($0.isLetter || $0.isNumber) }.map(String.init)
    }
}
