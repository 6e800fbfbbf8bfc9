import Foundation

/// The identity of a book or note. It lives in the file's frontmatter (`id:`), so an item keeps
/// its identity across editor saves that replace the file, renames and restores from the trash.
public struct ItemID: RawRepresentable, Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// A fresh random identity (a lowercase UUID).
    public static func generate() -> ItemID { ItemID(UUID().uuidString.lowercased()) }

    public var description: String { rawValue }
    /// Identities are opaque tokens: they order, compare and hash by their bytes. (Unicode-aware
    /// string hashing costs every index lookup of a mount's listings; an id that differs only
    /// in its Unicode normalization is another id.)
    public static func == (a: ItemID, b: ItemID) -> Bool { a.rawValue.hasSameBytes(as: b.rawValue) }
    public func hash(into hasher: inout Hasher) { rawValue.hashBytes(into: &hasher) }
    public static func < (a: ItemID, b: ItemID) -> Bool { a.rawValue.utf8.lexicographicallyPrecedes(b.rawValue.utf8) }

    public init(from decoder: Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// What an item is; decides its top-level folder and its Markdown form.
public enum ItemKind: String, Codable, Sendable, CaseIterable {
    case book
    case note

    /// The top-level folder that holds items of this kind in the mount and in exports.
    public var folderName: String {
        switch self {
        case .book: "Books"
        case .note: "Notes"
        }
    }

    /// The kind whose top-level folder is `name`, if any.
    public init?(folderName name: String) {
        guard let kind = ItemKind.allCases.first(where: { $0.folderName == name }) else { return nil }
        self = kind
    }
}

extension String {
    /// Whether the two strings are the same UTF-8 bytes (one `memcmp`; `==` would compare them
    /// as Unicode, which canonical equivalence makes slower and different).
    public func hasSameBytes(as other: String) -> Bool {
        var a = self, b = other
        return a.withUTF8 { a in
            b.withUTF8 { b in a.count == b.count && (a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0) }
        }
    }

    /// Feeds the string's UTF-8 bytes to `hasher`, for types that compare strings by their bytes.
    public func hashBytes(into hasher: inout Hasher) {
        var bytes = self
        bytes.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(utf8.count)
    }
}

extension StringProtocol {
    /// Whether the UTF-8 bytes begin with those of `prefix`: names compared as the kernel
    /// compares them (`hasPrefix` compares Unicode, which is slower and different).
    @inlinable
    public func hasBytePrefix(_ prefix: String) -> Bool {
        utf8.starts(with: prefix.utf8)
    }

    /// Whether the UTF-8 bytes end with those of `suffix` (see ``hasBytePrefix(_:)``).
    @inlinable
    public func hasByteSuffix(_ suffix: String) -> Bool {
        let count = suffix.utf8.count
        return utf8.count >= count && utf8.dropFirst(utf8.count - count).elementsEqual(suffix.utf8)
    }
}
