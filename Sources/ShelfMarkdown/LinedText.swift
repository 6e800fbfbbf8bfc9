import Foundation  // memchr and memcmp, from the C library

/// A file's text as the parsers see it: UTF-8 bytes cut into numbered lines.
///
/// A UTF-8 byte-order mark is dropped and every `\r\n` or lone `\r` becomes `\n`, so CRLF files
/// parse like LF files and line numbers match what an editor shows.
///
/// The parsers work on bytes, never on `Character`s: every boundary they cut at is an ASCII byte
/// (`\n`, `> `, ` ^`), so a combining mark after `> ` or a prepended mark before ` ^id` cannot
/// shift a cut, and a 500-passage book parses in a single cheap pass.
struct LinedText {
    let bytes: [UInt8]
    let lines: [TextLine]

    init(_ raw: String) {
        bytes = Self.normalized(raw)
        lines = Self.lines(of: bytes)
    }

    /// The exact text of the lines in `range` (indices into `lines`), line breaks included.
    func slice(lines range: Range<Int>) -> String {
        guard !range.isEmpty else { return "" }
        let end = range.upperBound < lines.count ? lines[range.upperBound].bytes.startIndex : bytes.count
        return String(decoding: bytes[lines[range.lowerBound].bytes.startIndex..<end], as: UTF8.self)
    }

    private static func normalized(_ raw: String) -> [UInt8] {
        var bytes = Array(raw.utf8)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        guard bytes.withUnsafeBufferPointer({ $0.index(of: UInt8(ascii: "\r"), from: 0) < $0.count }) else { return bytes }
        var normalized: [UInt8] = []
        normalized.reserveCapacity(bytes.count)
        var previousWasCR = false
        for byte in bytes {
            if byte == UInt8(ascii: "\r") {
                normalized.append(UInt8(ascii: "\n"))
            } else if !(byte == UInt8(ascii: "\n") && previousWasCR) {
                normalized.append(byte)
            }
            previousWasCR = byte == UInt8(ascii: "\r")
        }
        return normalized
    }

    private static func lines(of bytes: [UInt8]) -> [TextLine] {
        var lines: [TextLine] = []
        var start = 0
        bytes.withUnsafeBufferPointer { buffer in
            var lineBreak = buffer.index(of: UInt8(ascii: "\n"), from: 0)
            while lineBreak < buffer.count {
                lines.append(TextLine(number: lines.count + 1, bytes: bytes[start..<lineBreak]))
                start = lineBreak + 1
                lineBreak = buffer.index(of: UInt8(ascii: "\n"), from: start)
            }
        }
        if start < bytes.count {
            lines.append(TextLine(number: lines.count + 1, bytes: bytes[start...]))
        }
        return lines
    }
}

/// One line without its `\n`, numbered from 1 in the whole file.
struct TextLine {
    let number: Int
    /// The line's bytes; their indices are offsets into `LinedText.bytes`.
    let bytes: ArraySlice<UInt8>

    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Empty or only spaces and tabs.
    var isBlank: Bool { bytes.allSatisfy(\.isSpaceOrTab) }

    var isEmpty: Bool { bytes.isEmpty }

    /// Whether the line starts with `prefix`, compared byte for byte.
    func starts(with prefix: StaticString) -> Bool { bytes.starts(with: prefix) }

    /// The line is `marker` followed by nothing but spaces or tabs (`---`, `## Passages`).
    func isMarker(_ marker: StaticString) -> Bool {
        starts(with: marker) && bytes.dropFirst(marker.utf8CodeUnitCount).allSatisfy(\.isSpaceOrTab)
    }

    /// The bytes after the first `count`.
    func dropping(bytes count: Int) -> ArraySlice<UInt8> { bytes.dropFirst(count) }
}

extension ArraySlice<UInt8> {
    /// Whether the bytes start with `prefix`. A `memcmp`: the parsers ask this of every line
    /// several times (`>`, `### `, each field label), and a byte loop through `withUTF8Buffer`
    /// was a twentieth of parsing a book.
    func starts(with prefix: StaticString) -> Bool {
        let prefixCount = prefix.utf8CodeUnitCount
        guard prefixCount > 0 else { return true }
        guard count >= prefixCount else { return false }
        return withUnsafeBufferPointer { bytes in
            prefix.withUTF8Buffer { memcmp(bytes.baseAddress!, $0.baseAddress!, prefixCount) == 0 }
        }
    }

    /// Whether the bytes are exactly `text`.
    func isEqual(to text: StaticString) -> Bool {
        count == text.utf8CodeUnitCount && starts(with: text)
    }

    /// The number written by these ASCII digits; nil when there are none or it overflows `Int`
    /// (as `Int(String)` answers, without making a `String` first).
    var decimalValue: Int? {
        guard !isEmpty else { return nil }
        var value = 0
        for byte in self {
            guard byte.isASCIIDigit else { return nil }
            let (shifted, overflowed) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowedAdding) = shifted.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            guard !overflowed, !overflowedAdding else { return nil }
            value = sum
        }
        return value
    }

    /// Without spaces and tabs at either end.
    func trimmingSpacesAndTabs() -> ArraySlice<UInt8> {
        guard let first = firstIndex(where: { !$0.isSpaceOrTab }), let last = lastIndex(where: { !$0.isSpaceOrTab }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }

    var string: String { String(decoding: self, as: UTF8.self) }
}

extension UnsafeBufferPointer<UInt8> {
    /// The index of the first `byte` at or after `start`, or `count` when there is none.
    ///
    /// `memchr` scans a whole book for line breaks in a few microseconds, where a Swift loop
    /// byte by byte takes ten times longer; the parsers' first pass is exactly this search.
    func index(of byte: UInt8, from start: Int) -> Int {
        guard let base = baseAddress, start < count, let found = memchr(base + start, Int32(byte), count - start) else {
            return count
        }
        return UnsafeRawPointer(found) - UnsafeRawPointer(base)
    }
}

extension UInt8 {
    var isSpaceOrTab: Bool { self == UInt8(ascii: " ") || self == UInt8(ascii: "\t") }
    var isASCIIDigit: Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) }
}
