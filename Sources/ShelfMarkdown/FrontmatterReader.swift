import Foundation
import ShelfModel
import Yams

/// Takes Shelf's own keys out of the frontmatter as typed values and leaves the rest as
/// `extraProperties`, collecting one diagnostic per bad value instead of stopping at the first.
///
/// Shelf's text fields (`title`, `author`, `isbn`, tags…) use the value exactly as written,
/// whatever YAML would type it as: `title: 1984` is the title "1984" and `isbn: 0441013597` keeps
/// its leading zero. A null value (`author:`) counts as absent.
struct FrontmatterReader {
    private var remaining: [FrontmatterEntry]
    private let lines: YAMLLineMap
    private(set) var diagnostics: [Diagnostic] = []

    init(_ document: SplitDocument) {
        remaining = document.entries
        lines = document.yamlLines
    }

    /// The text of `key`, or nil when absent or null.
    mutating func text(_ key: String) -> String? {
        typed(key, expecting: "text") { $0 }
    }

    /// A whole number of at least zero (`current_page: 120`, also `"120"`).
    mutating func count(_ key: String) -> Int? {
        typed(key, expecting: "a whole number of 0 or more") { text in Int(text).flatMap { $0 >= 0 ? $0 : nil } }
    }

    /// A day (`2025-12-29`, also `2025-12-29T00:00:00` or `2025/12/29`).
    mutating func calendarDate(_ key: String) -> CalendarDate? {
        typed(key, expecting: "a date like 2025-12-29") { Timestamp.calendarDate($0) }
    }

    /// An instant (`2025-12-29T10:15:00Z`), truncated to whole seconds.
    mutating func timestamp(_ key: String) -> Date? {
        typed(key, expecting: "a date-time like 2025-12-29T10:15:00Z") { Timestamp.parse($0) }
    }

    /// `true` or `false`.
    mutating func bool(_ key: String) -> Bool? {
        typed(key, expecting: "true or false") { text in
            switch YAMLScalar.plainValue(text) {
            case .bool(let value): value
            default: nil
            }
        }
    }

    /// A value converted by `convert`, described as `expected` when it does not convert.
    mutating func typed<T>(_ key: String, expecting expected: String, _ convert: (String) -> T?) -> T? {
        guard let entry = take(key), let text = scalarText(entry.value, key: key, expecting: expected) else { return nil }
        guard let value = convert(text) else {
            report(at: entry.value, "\(key): \(YAMLScalar.doubleQuoted(text)) is not \(expected)")
            return nil
        }
        return value
    }

    /// A list of texts; also a single text (`tags: scifi`). Null items are skipped.
    mutating func texts(_ key: String) -> [String] {
        guard let entry = take(key) else { return [] }
        switch entry.value {
        case .sequence(let items):
            return items.compactMap { scalarText($0, key: key, expecting: "a list of texts") }
        default:
            return scalarText(entry.value, key: key, expecting: "a list of texts").map { [$0] } ?? []
        }
    }

    /// Every key not taken yet, in file order, as Shelf keeps unknown keys.
    mutating func extraProperties() -> [Property] {
        let entries = remaining
        remaining = []
        var properties: [Property] = []
        for entry in entries {
            do throws(Diagnostic) {
                try PropertyNameRule.check(entry.key, line: entry.line)
                properties.append(Property(key: entry.key, value: try propertyValue(entry.value)))
            } catch {
                diagnostics.append(error)
            }
        }
        return properties
    }

    // MARK: - Private

    private mutating func take(_ key: String) -> FrontmatterEntry? {
        guard let index = remaining.firstIndex(where: { $0.key == key }) else { return nil }
        return remaining.remove(at: index)
    }

    private mutating func report(at node: Node, _ message: String) {
        diagnostics.append(Diagnostic(line: lines.line(of: node), message: message))
    }

    /// The scalar's text; nil for null, or after reporting a list or mapping where text belongs.
    private mutating func scalarText(_ node: Node, key: String, expecting expected: String) -> String? {
        guard case .scalar(let scalar) = node else {
            report(at: node, "\(key) must be \(expected), not a \(node.kindName)")
            return nil
        }
        if !scalar.isText && YAMLScalar.isNull(scalar.string) { return nil }
        return scalar.string
    }

    /// A YAML node as Shelf keeps it: quoted or `!!str`-tagged scalars are text, plain ones are
    /// typed by the core schema, lists and mappings keep their order.
    private func propertyValue(_ node: Node) throws(Diagnostic) -> PropertyValue {
        switch node {
        case .scalar(let scalar):
            return scalar.isText ? .string(scalar.string) : YAMLScalar.plainValue(scalar.string)
        case .sequence(let sequence):
            var items: [PropertyValue] = []
            for item in sequence { items.append(try propertyValue(item)) }
            return .list(items)
        case .mapping(let mapping):
            var properties: [Property] = []
            for (key, value) in mapping {
                guard case .scalar(let name) = key else {
                    throw Diagnostic(line: lines.line(of: key), message: "a property name must be plain text, not a \(key.kindName)")
                }
                try PropertyNameRule.check(name.string, line: lines.line(of: key))
                properties.append(Property(key: name.string, value: try propertyValue(value)))
            }
            return .map(properties)
        case .alias:
            // Yams resolves aliases to the anchored node while composing; none reach here.
            throw Diagnostic(line: lines.line(of: node), message: "unresolved YAML alias")
        }
    }
}

/// The property names the canonical form can write: at most `maximumLength` Unicode scalars, so
/// the name fits YAML's 1024-character limit for implicit keys even when every character needs a
/// six-character escape.
enum PropertyNameRule {
    static let maximumLength = 150

    /// Throws a diagnostic on `line` for a name that is too long.
    static func check(_ name: String, line: Int) throws(Diagnostic) {
        guard name.unicodeScalars.count <= maximumLength else {
            throw Diagnostic(line: line, message: "a property name is longer than \(maximumLength) characters; shorten it")
        }
    }
}

extension Node.Scalar {
    /// Quoted, block (`|`, `>`) or tagged `!!str` / `!`: text whatever it looks like. Only an
    /// untagged plain scalar is typed by the schema.
    var isText: Bool {
        style != .plain || tag.rawValue == "tag:yaml.org,2002:str" || tag.rawValue == "!"
    }
}
