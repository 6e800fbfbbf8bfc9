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

extension PropertyValue {
    /// Stored as the plain JSON value where JSON has one (`"Ace"`, `4`, `true`, `null`, arrays),
    /// and as a one-key object where it does not (`{"double": 4.0}`, `{"date": "2025-12-29"}`,
    /// `{"map": [...]}`): compact, and several times cheaper to encode and decode than the
    /// synthesized form, which matters when an import writes 10,000 books with a dozen kept
    /// columns each.
    private enum TaggedKey: String, CodingKey { case double, date, map }

    public init(from decoder: Decoder) throws {
        if let tagged = try? decoder.container(keyedBy: TaggedKey.self), let key = tagged.allKeys.first {
            switch key {
            case .double: self = .double(try tagged.decode(Double.self, forKey: .double))
            case .date: self = .date(try tagged.decode(CalendarDate.self, forKey: .date))
            case .map: self = .map(try tagged.decode([Property].self, forKey: .map))
            }
            return
        }
        if var list = try? decoder.unkeyedContainer() {
            var values: [PropertyValue] = []
            while !list.isAtEnd { values.append(try list.decode(PropertyValue.self)) }
            self = .list(values)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let bool = try? single.decode(Bool.self) {
            self = .bool(bool)
        } else if let int = try? single.decode(Int.self) {
            self = .int(int)
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    public func encode(to encoder: Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .int(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .string(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .list(let values):
            var list = encoder.unkeyedContainer()
            try list.encode(contentsOf: values)
        case .double(let value):
            var tagged = encoder.container(keyedBy: TaggedKey.self)
            try tagged.encode(value, forKey: .double)
        case .date(let value):
            var tagged = encoder.container(keyedBy: TaggedKey.self)
            try tagged.encode(value, forKey: .date)
        case .map(let properties):
            var tagged = encoder.container(keyedBy: TaggedKey.self)
            try tagged.encode(properties, forKey: .map)
        }
    }
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
