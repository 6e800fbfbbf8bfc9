import ShelfModel

/// How a frontmatter string is written as a YAML scalar, and what a plain (unquoted) scalar means.
///
/// Both directions follow YAML 1.2's core schema — what Obsidian reads — so `no` is the text
/// "no", not `false`. Writing is more careful than reading: a string is quoted whenever a YAML 1.1
/// reader (Yams' defaults, many scripts) *or* a 1.2 reader could take it for something else, so
/// every rendered file means the same thing to both. Quotes are always double quotes, the only
/// style that can escape every character.
enum YAMLScalar {
    /// `text` as a plain scalar when YAML reads that back as this very string, else double-quoted.
    static func string(_ text: String) -> String {
        needsQuotes(text) ? doubleQuoted(text) : text
    }

    /// `text` in double quotes with `\` escapes for `"`, `\`, line breaks, tabs and every character
    /// YAML does not allow raw (controls, U+FEFF, U+FFFE/U+FFFF), so the result is one line.
    static func doubleQuoted(_ text: String) -> String {
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\0": out += "\\0"
            case "\u{07}": out += "\\a"
            case "\u{08}": out += "\\b"
            case "\t": out += "\\t"
            case "\n": out += "\\n"
            case "\u{0B}": out += "\\v"
            case "\u{0C}": out += "\\f"
            case "\r": out += "\\r"
            case "\u{1B}": out += "\\e"
            case "\u{85}": out += "\\N"
            case "\u{2028}": out += "\\L"
            case "\u{2029}": out += "\\P"
            default:
                if isRawAllowed(scalar) {
                    out.unicodeScalars.append(scalar)
                } else if scalar.value <= 0xFF {
                    out += "\\x" + hex(scalar.value, width: 2)
                } else {
                    out += "\\u" + hex(scalar.value, width: 4)
                }
            }
        }
        out += "\""
        return out
    }

    /// What a plain scalar stands for under the core schema, with `YYYY-MM-DD` read as a date and a
    /// date-time at exactly midnight UTC (`2025-12-29T00:00:00`, what some tools write for a date)
    /// read as that date too. Any other date-time stays text.
    static func plainValue(_ text: String) -> PropertyValue {
        if isNull(text) { return .null }
        switch text {
        case "true", "True", "TRUE": return .bool(true)
        case "false", "False", "FALSE": return .bool(false)
        default: break
        }
        if let number = coreInteger(text) { return .int(number) }
        if let number = coreFloat(text) { return .double(number) }
        if let day = Timestamp.midnightDate(text) { return .date(day) }
        return .string(text)
    }

    /// The plain scalars YAML reads as null: empty, `~`, `null`.
    static func isNull(_ text: String) -> Bool {
        switch text {
        case "", "~", "null", "Null", "NULL": true
        default: false
        }
    }

    // MARK: - Writing

    /// Whether `text` must be quoted to be read back as this string by YAML 1.1 and 1.2 readers
    /// in a block mapping value, a block list item or a mapping key.
    static func needsQuotes(_ text: String) -> Bool {
        let bytes = text.utf8
        guard let first = bytes.first, let last = bytes.last else { return true }
        if first == UInt8(ascii: " ") || last == UInt8(ascii: " ") || last == UInt8(ascii: ":") { return true }
        if indicatorBytes.contains(first) { return true }
        // `...` at the start of a line ends the YAML document (a key sits at the line start).
        if bytes.starts(with: "...".utf8) { return true }
        if mayReadAsNonString(text) { return true }
        var previous: UInt8 = 0
        for byte in bytes {
            // ": " starts a value and " #" a comment; both would cut the scalar short.
            if (previous == UInt8(ascii: ":") && byte == UInt8(ascii: " "))
                || (previous == UInt8(ascii: " ") && byte == UInt8(ascii: "#")) { return true }
            previous = byte
        }
        for scalar in text.unicodeScalars where !isPlainSafe(scalar) { return true }
        if let firstScalar = text.unicodeScalars.first, firstScalar.properties.isWhitespace { return true }
        if let lastScalar = text.unicodeScalars.last, lastScalar.properties.isWhitespace { return true }
        return false
    }

    /// Characters that start YAML syntax when they open a plain scalar.
    private static let indicatorBytes: Set<UInt8> = Set("-?:,[]{}#&*!|>'\"%@`".utf8)

    /// Whether some YAML reader (1.1 or 1.2) takes the plain scalar `text` for a null, bool, number,
    /// date or merge key. Errs on the side of quoting where the grammars are intricate: a text made
    /// only of the characters of a decimal number or timestamp counts (`2025-12`), while a UUID
    /// such as `8d2c1f3e-…`, with letters no number holds, stays plain.
    private static func mayReadAsNonString(_ text: String) -> Bool {
        if isNull(text) { return true }
        switch text {
        case "y", "Y", "n", "N", "yes", "Yes", "YES", "no", "No", "NO",
             "true", "True", "TRUE", "false", "False", "FALSE",
             "on", "On", "ON", "off", "Off", "OFF", "<<", "=":
            return true
        default:
            break
        }
        var body = Substring(text)
        if body.first == "+" || body.first == "-" { body = body.dropFirst() }
        switch body {
        case ".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN": return true
        default: break
        }
        let bytes = body.utf8
        guard let first = bytes.first,
              (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) || first == UInt8(ascii: ".") else { return false }
        for (prefix, digits) in radixPrefixes where bytes.starts(with: prefix.utf8) {
            return bytes.dropFirst(2).allSatisfy(digits.contains)
        }
        return bytes.allSatisfy(decimalLikeBytes.contains)
    }

    /// `0x`, `0o` and `0b` numbers, with the digits (and `_` separators) each may hold.
    private static let radixPrefixes: [(String, Set<UInt8>)] = [
        ("0x", Set("0123456789abcdefABCDEF_".utf8)), ("0X", Set("0123456789abcdefABCDEF_".utf8)),
        ("0o", Set("01234567_".utf8)), ("0b", Set("01_".utf8)),
    ]

    /// Every byte of a YAML 1.1/1.2 decimal int, float or timestamp: digits, `_` separators,
    /// sexagesimal `:`, `.`, exponents, signs, and the `T`/`Z`/space of timestamps.
    private static let decimalLikeBytes: Set<UInt8> = Set("0123456789_:.eE+-tTzZ ".utf8)

    /// Characters a plain scalar may hold: printable, not a line break, tab or byte-order mark.
    private static func isPlainSafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "\t", "\n", "\r", "\u{85}", "\u{2028}", "\u{2029}", "\u{FEFF}": false
        default: isRawAllowed(scalar)
        }
    }

    /// YAML's printable set: tab, line feed, carriage return, ASCII from space to `~`, NEL, and
    /// everything from U+00A0 up except surrogates, U+FFFE and U+FFFF. U+FEFF is escaped too,
    /// because libyaml drops it at the start of a line.
    private static func isRawAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x20...0x7E: true
        case 0xA0...0xD7FF, 0xE000...0xFEFE, 0xFF00...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }

    private static func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    // MARK: - Core schema numbers

    /// `[-+]?[0-9]+`, `0o[0-7]+` or `0x[0-9a-fA-F]+`, when it fits an `Int`.
    private static func coreInteger(_ text: String) -> Int? {
        if text.hasPrefix("0x") { return hexOrOctal(text.dropFirst(2), radix: 16) }
        if text.hasPrefix("0o") { return hexOrOctal(text.dropFirst(2), radix: 8) }
        var digits = Substring(text)
        if digits.first == "+" || digits.first == "-" { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.utf8.allSatisfy(isDigit) else { return nil }
        return Int(text)
    }

    private static func hexOrOctal(_ digits: Substring, radix: Int) -> Int? {
        guard !digits.isEmpty, !digits.hasPrefix("+"), !digits.hasPrefix("-") else { return nil }
        return Int(digits, radix: radix)
    }

    /// `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`, `[-+]?.inf` or `.nan`.
    private static func coreFloat(_ text: String) -> Double? {
        var rest = Substring(text)
        var sign = 1.0
        if rest.first == "+" || rest.first == "-" {
            sign = rest.first == "-" ? -1 : 1
            rest = rest.dropFirst()
        }
        switch rest {
        case ".inf", ".Inf", ".INF": return sign * .infinity
        case ".nan", ".NaN", ".NAN": return text == rest ? .nan : nil
        default: break
        }
        let bytes = Array(rest.utf8)
        var index = 0
        func digitRun() -> Int {
            let start = index
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            return index - start
        }
        let wholeDigits = digitRun()
        var fractionDigits = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            fractionDigits = digitRun()
        }
        guard wholeDigits > 0 || fractionDigits > 0 else { return nil }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digitRun() > 0 else { return nil }
        }
        guard index == bytes.count else { return nil }
        return Double(text)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
