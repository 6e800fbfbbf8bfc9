/// A frontmatter value Shelf does not interpret: kept as parsed, rendered back in place.
///
/// Unknown keys (an Obsidian `aliases:` list, a plugin's `cssclasses:`, an import's extra
/// column) must survive every round trip, with their order; this is their lossless form.
public indirect enum PropertyValue: Hashable, Codable, Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case date(CalendarDate)
    case list([PropertyValue])
    case map([Property])
}

/// One frontmatter key with its value, in file order.
public struct Property: Hashable, Codable, Sendable {
    public var key: String
    public var value: PropertyValue

    public init(key: String, value: PropertyValue) {
        self.key = key
        self.value = value
    }
}

extension Array where Element == Property {
    /// The value of the first property named `key`.
    public subscript(key: String) -> PropertyValue? {
        first(where: { $0.key == key })?.value
    }
}
