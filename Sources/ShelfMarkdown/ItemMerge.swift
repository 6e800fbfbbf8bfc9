import Foundation
import ShelfModel

/// Three-way merge of an item file's bytes: what sync does when two devices edited one item
/// concurrently, and what a save does when its bytes were read before a change from elsewhere.
/// Frontmatter merges per top-level key, the body by lines (diff3), and two sides that each
/// added lines at the same place — two passages appended to a book — keep both, older side
/// first. Untouched parts keep their exact bytes: nothing is re-rendered.
///
/// Anything it cannot decide (both sides changed one key or one stretch of lines differently,
/// bytes that are not UTF-8, a result that would not parse) is a `.conflict`, which sync turns
/// into newest-wins plus a conflict copy: never a guess.
public enum ItemMerge {
    /// The outcome of merging two concurrent edits of one item file against their common base.
    public enum Result: Equatable, Sendable { case merged(Data), conflict }

    /// `older` and `newer` are the two sides ordered by the time of their change (ties broken
    /// by the caller), so every device that merges the same pair computes the same bytes.
    public static func merge(base: Data, older: Data, newer: Data, kind: ItemKind) -> Result {
        if older == newer || older == base { return .merged(newer) }
        if newer == base { return .merged(older) }
        guard let baseText = String(validating: base, as: UTF8.self),
              let olderText = String(validating: older, as: UTF8.self),
              let newerText = String(validating: newer, as: UTF8.self) else { return .conflict }
        let (baseFile, olderFile, newerFile) = (SplitFile(baseText), SplitFile(olderText), SplitFile(newerText))
        var merged = ""
        switch (baseFile.frontmatter, olderFile.frontmatter, newerFile.frontmatter) {
        case let (base?, older?, newer?):
            guard let frontmatter = mergeFrontmatter(base: base, older: older, newer: newer) else { return .conflict }
            merged = olderFile.opening + frontmatter.joined() + olderFile.closing
        case (nil, nil, nil):
            break
        default:
            return .conflict  // one side added or removed the whole block
        }
        guard let body = mergeLines(base: baseFile.body, older: olderFile.body, newer: newerFile.body) else {
            return .conflict
        }
        merged += body.joined()
        guard parses(merged, kind: kind) || !(parses(olderText, kind: kind) && parses(newerText, kind: kind)) else {
            return .conflict
        }
        return .merged(Data(merged.utf8))
    }

    /// How many lines differ between `from` and `to` (replaced, added or removed); nil when
    /// either is not UTF-8 or they are too large to compare line by line.
    public static func changedLines(from: Data, to: Data) -> Int? {
        if from == to { return 0 }
        guard let fromText = String(validating: from, as: UTF8.self),
              let toText = String(validating: to, as: UTF8.self),
              let hunks = hunks(from: SplitFile.lines(fromText), to: SplitFile.lines(toText)) else { return nil }
        return hunks.reduce(0) { $0 + max($1.end - $1.start, $1.lines.count) }
    }

    private static func parses(_ text: String, kind: ItemKind) -> Bool {
        if case .success = MarkdownCodec.parse(text, kind: kind, fileTitle: nil) { return true }
        return false
    }

    // MARK: Frontmatter

    /// Per top-level key: the side that changed it from the base wins; both changing it alike
    /// is one change; both changing it differently is a conflict (nil). Keys keep the base's
    /// order, then those the older side added, then the newer side's.
    static func mergeFrontmatter(base: [Line], older: [Line], newer: [Line]) -> [Line]? {
        guard let base = Entries(base), let older = Entries(older), let newer = Entries(newer) else { return nil }
        var keys = base.keys
        for key in older.keys + newer.keys where !keys.contains(key) { keys.append(key) }
        var merged: [Line] = []
        for key in keys {
            let (b, o, n) = (base.value[key], older.value[key], newer.value[key])
            let chosen: [Line]?
            if o == n { chosen = o } else if o == b { chosen = n } else if n == b { chosen = o } else { return nil }
            merged += chosen ?? []
        }
        return merged
    }

    /// A frontmatter block as its top-level entries: each key's line with the lines that
    /// continue it (indented lines, `- ` list items, comments and blank lines below it).
    struct Entries {
        var keys: [String] = []
        var value: [String: [Line]] = [:]

        init?(_ lines: [Line]) {
            var current = ""  // lines before the first key belong to the empty key
            for line in lines {
                if let key = Self.key(of: line) {
                    guard value[key] == nil else { return nil }  // a key twice: not decidable
                    current = key
                }
                if value[current] == nil { keys.append(current) }
                value[current, default: []].append(line)
            }
        }

        private static func key(of line: Line) -> String? {
            guard let first = line.first, !" \t#-\r\n".contains(first), let colon = line.firstIndex(of: ":") else { return nil }
            return String(line[..<colon])
        }
    }

    // MARK: Lines (diff3)

    typealias Line = Substring

    /// diff3 of `older` and `newer` against `base`; nil where both changed overlapping lines
    /// differently.
    static func mergeLines(base: [Line], older: [Line], newer: [Line]) -> [Line]? {
        guard let olderHunks = hunks(from: base, to: older), let newerHunks = hunks(from: base, to: newer) else { return nil }
        var merged: [Line] = []
        var position = 0
        var (o, n) = (olderHunks[...], newerHunks[...])
        while let next = [o.first, n.first].compactMap({ $0 }).min(by: { ($0.start, $0.end) < ($1.start, $1.end) }) {
            merged += base[position..<next.start]
            if let first = o.first, let second = n.first, first.overlaps(second) {
                guard let combined = first.combined(with: second) else { return nil }
                merged += combined.lines
                position = combined.end
                o = o.dropFirst()
                n = n.dropFirst()
            } else if o.first == next {
                merged += next.lines
                position = next.end
                o = o.dropFirst()
            } else {
                merged += next.lines
                position = next.end
                n = n.dropFirst()
            }
        }
        merged += base[position...]
        return merged
    }

    /// A stretch of base lines `start..<end` replaced by `lines` (an insertion when empty).
    struct Hunk: Equatable {
        var start: Int
        var end: Int
        var lines: [Line]

        /// Touching counts: changes next to each other are not independent.
        func overlaps(_ other: Hunk) -> Bool {
            start <= other.end && other.start <= end
        }

        /// Both sides' hunks over one stretch: the same change once; two insertions at one
        /// place both (this one first); anything else is undecidable.
        func combined(with other: Hunk) -> Hunk? {
            if self == other { return self }
            if start == end && other.start == other.end && start == other.start {
                return Hunk(start: start, end: end, lines: lines + other.lines)
            }
            return nil
        }
    }

    /// The changes from `base` to `side`, in order; nil when the files are too large to compare
    /// line by line here (a conflict then keeps both whole).
    static func hunks(from base: [Line], to side: [Line]) -> [Hunk]? {
        var prefix = 0
        while prefix < base.count && prefix < side.count && base[prefix] == side[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < base.count - prefix && suffix < side.count - prefix
                && base[base.count - 1 - suffix] == side[side.count - 1 - suffix] { suffix += 1 }
        let a = Array(base[prefix..<(base.count - suffix)])
        let b = Array(side[prefix..<(side.count - suffix)])
        guard !(a.isEmpty && b.isEmpty) else { return [] }
        guard a.count * b.count <= 4_000_000 else { return nil }
        // Longest common subsequence, table from the end.
        var table = [[Int32]](repeating: [Int32](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            for j in stride(from: b.count - 1, through: 0, by: -1) {
                table[i][j] = a[i] == b[j] ? table[i + 1][j + 1] + 1 : max(table[i + 1][j], table[i][j + 1])
            }
        }
        var hunks: [Hunk] = []
        var (i, j) = (0, 0)
        var open: Hunk?
        func close() {
            if let hunk = open { hunks.append(hunk) }
            open = nil
        }
        while i < a.count || j < b.count {
            if i < a.count, j < b.count, a[i] == b[j] {
                close()
                i += 1
                j += 1
            } else if j < b.count, i == a.count || table[i][j + 1] >= table[i + 1][j] {
                if open == nil { open = Hunk(start: prefix + i, end: prefix + i, lines: []) }
                open!.lines.append(b[j])
                j += 1
            } else {
                if open == nil { open = Hunk(start: prefix + i, end: prefix + i, lines: []) }
                i += 1
                open!.end = prefix + i
            }
        }
        close()
        return hunks
    }
}

/// A file's text as lines, each with its own line ending (so CRLF stays CRLF): the opening
/// `---` line, the frontmatter lines and the closing `---` line when there is a frontmatter
/// block, then the body.
struct SplitFile {
    var opening = ""
    var frontmatter: [Substring]?
    var closing = ""
    var body: [Substring]

    init(_ text: String) {
        let lines = Self.lines(text)
        let fence: (Substring) -> Bool = { $0.trimmingCharacters(in: .whitespacesAndNewlines) == "---" }
        guard let first = lines.first, fence(first.hasPrefix("\u{FEFF}") ? first.dropFirst() : first),
              let end = lines.dropFirst().firstIndex(where: fence) else {
            body = lines
            return
        }
        opening = String(first)
        frontmatter = Array(lines[1..<end])
        closing = String(lines[end])
        body = Array(lines[(end + 1)...])
    }

    static func lines(_ text: String) -> [Substring] {
        var lines: [Substring] = []
        var start = text.startIndex
        for index in text.indices where text[index] == "\n" || text[index] == "\r\n" {
            let next = text.index(after: index)
            lines.append(text[start..<next])
            start = next
        }
        if start < text.endIndex { lines.append(text[start...]) }
        return lines
    }
}
