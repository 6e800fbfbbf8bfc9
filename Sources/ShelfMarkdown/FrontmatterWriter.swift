import ShelfModel

/// Writes frontmatter the way Obsidian's Properties panel does: one `key: value` line per
/// property, block lists indented by two spaces (`  - a`), strings plain unless YAML needs quotes
/// (`YAMLScalar.string`), absent values left out. Yams' emitter is not used because it writes
/// lists unindented and quotes differently, which Obsidian would then rewrite.
///
/// Nested values of unknown keys follow the same block style: a mapping's entries go two spaces
/// deeper, a list item that is itself a list or mapping starts on the `- ` line (`- - a`,
/// `- k: v`), and empty ones are written in flow style (`[]`, `{}`). Null is an empty value.
struct FrontmatterWriter {
    private(set) var text = "---\n"

    /// `key: text`, left out when `value` is nil.
    mutating func string(_ key: String, _ value: String?) {
        guard let value else { return }
        line(key, YAMLScalar.string(value))
    }

    /// `key: "text"`, always double-quoted (ISBNs, whose leading zeros a number would lose).
    mutating func quotedString(_ key: String, _ value: String?) {
        guard let value else { return }
        line(key, YAMLScalar.doubleQuoted(value))
    }

    /// `key: literal` for values already in their YAML form (numbers, dates, booleans).
    mutating func literal(_ key: String, _ literal: String?) {
        guard let literal else { return }
        line(key, literal)
    }

    /// A block list of texts, left out when empty.
    mutating func strings(_ key: String, _ values: [String]) {
        guard !values.isEmpty else { return }
        property(Property(key: key, value: .list(values.map(PropertyValue.string))))
    }

    /// An unknown key kept from a parse, written back with its value's type.
    mutating func property(_ property: Property) {
        for line in Self.lines(of: property, indent: "") { text += line + "\n" }
    }

    /// The finished frontmatter, with its closing fence.
    mutating func finished() -> String {
        text + "---\n"
    }

    private mutating func line(_ key: String, _ value: String) {
        text += YAMLScalar.string(key) + ": " + value + "\n"
    }

    /// The lines of one `key: value` entry at `indent`.
    private static func lines(of property: Property, indent: String) -> [String] {
        let key = indent + YAMLScalar.string(property.key) + ":"
        switch property.value {
        case .list(let items) where !items.isEmpty:
            return [key] + items.flatMap { listItemLines($0, indent: indent + "  ") }
        case .map(let entries) where !entries.isEmpty:
            return [key] + entries.flatMap { lines(of: $0, indent: indent + "  ") }
        default:
            let scalar = inlineScalar(property.value)
            return [scalar.isEmpty ? key : key + " " + scalar]
        }
    }

    /// The lines of one list item at `indent`: `- value`, or a nested list or mapping whose first
    /// line starts after the dash.
    private static func listItemLines(_ value: PropertyValue, indent: String) -> [String] {
        let nested: [String]
        switch value {
        case .list(let items) where !items.isEmpty:
            nested = items.flatMap { listItemLines($0, indent: indent + "  ") }
        case .map(let entries) where !entries.isEmpty:
            nested = entries.flatMap { lines(of: $0, indent: indent + "  ") }
        default:
            let scalar = inlineScalar(value)
            return [scalar.isEmpty ? indent + "-" : indent + "- " + scalar]
        }
        // Scalars, not Characters: a key starting with a combining mark fuses with the space before it.
        return [indent + "- " + String(nested[0].unicodeScalars.dropFirst(indent.count + 2))] + nested.dropFirst()
    }

    /// A value written on its key's or dash's line: scalars, `[]` and `{}`; null is empty.
    private static func inlineScalar(_ value: PropertyValue) -> String {
        switch value {
        case .null: ""
        case .bool(let flag): flag ? "true" : "false"
        case .int(let number): String(number)
        case .double(let number): decimal(number)
        case .string(let text): YAMLScalar.string(text)
        case .date(let day): Timestamp.day(day)
        case .list: "[]"
        case .map: "{}"
        }
    }

    /// A double that reads back as a double: `3.0` (not `3`, an int), `.inf`, `.nan`, `1e+20`.
    static func decimal(_ number: Double) -> String {
        if number.isNaN { return ".nan" }
        if number.isInfinite { return number < 0 ? "-.inf" : ".inf" }
        return number.description
    }
}
