import Foundation

/// A value of the Lua table-literal subset KOReader writes into its sidecars.
indirect enum LuaValue: Hashable, Sendable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case table(LuaTable)

    var string: String? { if case .string(let value) = self { value } else { nil } }
    var number: Double? { if case .number(let value) = self { value } else { nil } }
    var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    var int: Int? { number.flatMap { $0 == $0.rounded() && abs($0) < 1e15 ? Int($0) : nil } }
    var table: LuaTable? { if case .table(let value) = self { value } else { nil } }
}

/// A Lua table: string keys and integer keys (`[1] = …` or positional values).
struct LuaTable: Hashable, Sendable {
    var fields: [String: LuaValue] = [:]
    var items: [Int: LuaValue] = [:]

    subscript(key: String) -> LuaValue? { fields[key] }

    /// The integer-keyed values in key order (KOReader numbers its lists from 1, and keys
    /// highlight lists by page).
    var orderedItems: [(key: Int, value: LuaValue)] { items.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } }
}

/// Why a sidecar is not the table literal KOReader writes, and on which line.
struct LuaSyntaxError: Error, Equatable {
    var line: Int
    var message: String
}

/// Parses `return { … }` with string, number, boolean and nested-table values, `--` comments,
/// and Lua's string escapes — the data KOReader's `dump()` writes. It is a data reader, not
/// an interpreter: no expression, call or variable is ever evaluated, and anything outside
/// the subset is an error naming its line.
struct LuaTableParser {
    private let bytes: [UInt8]
    private var position = 0

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    static func parse(_ data: Data) throws -> LuaTable {
        var parser = LuaTableParser([UInt8](data))
        parser.skipTrivia()
        guard parser.consumeWord("return") else { throw parser.error("expected `return {` at the start of the sidecar") }
        parser.skipTrivia()
        guard case .table(let table) = try parser.value(depth: 0) else {
            throw parser.error("expected a table `{ … }` after `return`")
        }
        parser.skipTrivia()
        guard parser.position == parser.bytes.count else { throw parser.error("unexpected text after the table") }
        return table
    }

    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    private func error(_ message: String) -> LuaSyntaxError {
        LuaSyntaxError(line: 1 + bytes[..<min(position, bytes.count)].count(where: { $0 == UInt8(ascii: "\n") }), message: message)
    }

    /// Skips whitespace and `--` line comments (KOReader starts each sidecar with one).
    private mutating func skipTrivia() {
        while let byte = current {
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                position += 1
            } else if byte == UInt8(ascii: "-"), position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "-") {
                while let next = current, next != UInt8(ascii: "\n") { position += 1 }
            } else {
                return
            }
        }
    }

    private mutating func consumeWord(_ word: String) -> Bool {
        let utf8 = Array(word.utf8)
        guard bytes[position...].starts(with: utf8) else { return false }
        let end = position + utf8.count
        if end < bytes.count, Self.isIdentifierByte(bytes[end]) { return false }
        position = end
        return true
    }

    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
    }

    private mutating func value(depth: Int) throws -> LuaValue {
        guard depth < 64 else { throw error("tables nested more than 64 deep") }
        switch current {
        case UInt8(ascii: "{"): return .table(try table(depth: depth))
        case UInt8(ascii: "\""), UInt8(ascii: "'"): return .string(try string())
        case UInt8(ascii: "[") where longBracketLevel() != nil: return .string(try longString())
        case let byte? where byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte):
            return .number(try number())
        default:
            if consumeWord("true") { return .bool(true) }
            if consumeWord("false") { return .bool(false) }
            let word = String(decoding: bytes[position...].prefix(while: Self.isIdentifierByte).prefix(20), as: UTF8.self)
            throw error(word.isEmpty ? "expected a value (a string, number, boolean or table)"
                                     : "`\(word)` is not a value KOReader writes; sidecars are read as data, never run")
        }
    }

    private mutating func table(depth: Int) throws -> LuaTable {
        position += 1
        var table = LuaTable()
        var nextIndex = 1
        while true {
            skipTrivia()
            guard current != nil else { throw error("the table is not closed: a `}` is missing at the end") }
            if current == UInt8(ascii: "}") {
                position += 1
                return table
            }
            if current == UInt8(ascii: "["), longBracketLevel() == nil {
                position += 1
                skipTrivia()
                let key = try value(depth: depth + 1)
                skipTrivia()
                guard current == UInt8(ascii: "]") else { throw error("expected `]` after a table key") }
                position += 1
                try expectEquals()
                let item = try value(depth: depth + 1)
                switch key {
                case .string(let name): table.fields[name] = item
                case .number: guard let index = key.int else { throw error("a table key must be a string or a whole number") }
                    table.items[index] = item
                default: throw error("a table key must be a string or a whole number")
                }
            } else if let byte = current, Self.isIdentifierByte(byte), !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte),
                      !bytes[position...].starts(with: Array("true".utf8)), !bytes[position...].starts(with: Array("false".utf8)) {
                let name = String(decoding: bytes[position...].prefix(while: Self.isIdentifierByte), as: UTF8.self)
                position += name.utf8.count
                try expectEquals()
                table.fields[name] = try value(depth: depth + 1)
            } else {
                table.items[nextIndex] = try value(depth: depth + 1)
                nextIndex += 1
            }
            skipTrivia()
            if current == UInt8(ascii: ",") || current == UInt8(ascii: ";") {
                position += 1
            } else if current != UInt8(ascii: "}") {
                throw error(current == nil ? "the table is not closed: a `}` is missing at the end" : "expected `,` or `}` after a table field")
            }
        }
    }

    private mutating func expectEquals() throws {
        skipTrivia()
        guard current == UInt8(ascii: "=") else { throw error("expected `=` after a table key") }
        position += 1
        skipTrivia()
    }

    private mutating func number() throws -> Double {
        let start = position
        while let byte = current, Self.isIdentifierByte(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
                || (byte == UInt8(ascii: "+") && position > start) {
            position += 1
        }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        let hex = text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16).map { Double($0) }
            : text.hasPrefix("-0x") ? UInt64(text.dropFirst(3), radix: 16).map { -Double($0) } : nil
        guard let value = hex ?? Double(text), text.lowercased() != "nan", !text.lowercased().contains("inf") else {
            position = start
            throw error("`\(text)` is not a number")
        }
        return value
    }

    /// The level of a long bracket opening at the current byte (`[[` is 0, `[==[` is 2), or nil.
    private func longBracketLevel() -> Int? {
        guard current == UInt8(ascii: "[") else { return nil }
        var index = position + 1
        while index < bytes.count, bytes[index] == UInt8(ascii: "=") { index += 1 }
        return index < bytes.count && bytes[index] == UInt8(ascii: "[") ? index - position - 1 : nil
    }

    /// A long string `[[…]]` or `[==[…]==]`: taken verbatim, no escapes, without the line
    /// break that directly follows the opening bracket (Lua's rule). KOReader's serializer
    /// writes these for text holding quotes or backslashes in some versions.
    private mutating func longString() throws -> String {
        let level = longBracketLevel()!
        position += level + 2
        if current == UInt8(ascii: "\r") { position += 1; if current == UInt8(ascii: "\n") { position += 1 } }
        else if current == UInt8(ascii: "\n") { position += 1; if current == UInt8(ascii: "\r") { position += 1 } }
        let closing = [UInt8(ascii: "]")] + Array(repeating: UInt8(ascii: "="), count: level) + [UInt8(ascii: "]")]
        let start = position
        while position < bytes.count, !bytes[position...].starts(with: closing) { position += 1 }
        guard position < bytes.count else {
            position = start
            throw error("a long string is not closed: its `\(String(decoding: closing, as: UTF8.self))` is missing")
        }
        let content = bytes[start..<position]
        position += closing.count
        guard let text = String(validating: content, as: UTF8.self) else { throw error("a string is not UTF-8 text") }
        // Lua reads any line break inside a long string as `\n`.
        return text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
    }

    /// A quoted string with Lua's escapes; the bytes must be UTF-8, as KOReader writes them.
    private mutating func string() throws -> String {
        let quote = bytes[position]
        position += 1
        var out: [UInt8] = []
        while true {
            guard let byte = current, byte != UInt8(ascii: "\n") else {
                throw error("a string is not closed: its closing quote is missing")
            }
            position += 1
            if byte == quote { break }
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                continue
            }
            guard let escaped = current else { throw error("a string ends in a lone backslash") }
            position += 1
            switch escaped {
            case UInt8(ascii: "n"), UInt8(ascii: "\n"): out.append(UInt8(ascii: "\n"))
            case UInt8(ascii: "r"): out.append(UInt8(ascii: "\r"))
            case UInt8(ascii: "t"): out.append(UInt8(ascii: "\t"))
            case UInt8(ascii: "a"): out.append(7)
            case UInt8(ascii: "b"): out.append(8)
            case UInt8(ascii: "f"): out.append(12)
            case UInt8(ascii: "v"): out.append(11)
            case UInt8(ascii: "\\"), UInt8(ascii: "\""), UInt8(ascii: "'"): out.append(escaped)
            case UInt8(ascii: "\r"):
                if current == UInt8(ascii: "\n") { position += 1 }
                out.append(UInt8(ascii: "\n"))
            case UInt8(ascii: "z"):
                // `\z` skips the whitespace (line breaks included) that follows it.
                while let next = current, next == UInt8(ascii: " ") || next == UInt8(ascii: "\t") || next == UInt8(ascii: "\n")
                        || next == UInt8(ascii: "\r") { position += 1 }
            case UInt8(ascii: "u"):
                let digits = current == UInt8(ascii: "{") ? bytes[(position + 1)...].prefix(while: { $0 != UInt8(ascii: "}") }) : []
                guard !digits.isEmpty, digits.count <= 8, position + 1 + digits.count < bytes.count,
                      let value = UInt32(String(decoding: digits, as: UTF8.self), radix: 16),
                      let scalar = Unicode.Scalar(value) else {
                    throw error("`\\u` must be followed by a code point in braces, like `\\u{20AC}`")
                }
                position += digits.count + 2
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
            case UInt8(ascii: "x"):
                let digits = bytes[position..<min(position + 2, bytes.count)]
                guard digits.count == 2, let value = UInt8(String(decoding: digits, as: UTF8.self), radix: 16) else {
                    throw error("`\\x` must be followed by two hexadecimal digits")
                }
                position += 2
                out.append(value)
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                var value = Int(escaped - UInt8(ascii: "0"))
                for _ in 0..<2 {
                    guard let digit = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { break }
                    value = value * 10 + Int(digit - UInt8(ascii: "0"))
                    position += 1
                }
                guard value <= 255 else { throw error("the escape `\\\(value)` is larger than a byte") }
                out.append(UInt8(value))
            default:
                throw error("`\\\(Character(Unicode.Scalar(escaped)))` is not a string escape KOReader writes")
            }
        }
        guard let text = String(validating: out, as: UTF8.self) else { throw error("a string is not UTF-8 text") }
        return text
    }
}
