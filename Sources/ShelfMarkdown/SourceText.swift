/// A file's text as the parsers see it, cut into numbered lines.
///
/// A UTF-8 byte-order mark is dropped and every `\r\n` or lone `\r` becomes `\n`, so CRLF files
/// parse like LF files and line numbers match what an editor shows. All work happens on UTF-8
/// bytes and Unicode-scalar indices — never on `Character`s — so that a combining mark right after
/// `> ` or a prepended mark before ` ^id` cannot shift a boundary, and parsing stays linear.
struct SourceText {
    /// The normalized text; every `SourceLine` indexes into it.
    let text: String
    let lines: [SourceLine]

    init(_ raw: String) {
        text = Self.normalized(raw)
        lines = Self.lines(of: text)
    }

    /// The exact text of the lines in `range` (indices into `lines`), line breaks included.
    func slice(lines range: Range<Int>) -> String {
        guard !range.isEmpty else { return "" }
        let start = lines[range.lowerBound].text.startIndex
        let end = range.upperBound < lines.count ? lines[range.upperBound].text.startIndex : text.endIndex
        return String(text.unicodeScalars[start..<end])
    }

    private static func normalized(_ raw: String) -> String {
        var text = Substring(raw)
        if text.unicodeScalars.first == "\u{FEFF}" { text = Substring(text.unicodeScalars.dropFirst()) }
        guard text.utf8.contains(UInt8(ascii: "\r")) else { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var previousWasCR = false
        for byte in text.utf8 {
            if byte == UInt8(ascii: "\r") {
                bytes.append(UInt8(ascii: "\n"))
            } else if !(byte == UInt8(ascii: "\n") && previousWasCR) {
                bytes.append(byte)
            }
            previousWasCR = byte == UInt8(ascii: "\r")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func lines(of text: String) -> [SourceLine] {
        var lines: [SourceLine] = []
        let utf8 = text.utf8
        var start = utf8.startIndex
        var index = start
        while index != utf8.endIndex {
            if utf8[index] == UInt8(ascii: "\n") {
                lines.append(SourceLine(number: lines.count + 1, text: Substring(text.unicodeScalars[start..<index])))
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        if start != utf8.endIndex {
            lines.append(SourceLine(number: lines.count + 1, text: Substring(text.unicodeScalars[start..<utf8.endIndex])))
        }
        return lines
    }
}

/// One line without its `\n`, numbered from 1 in the whole file.
struct SourceLine {
    let number: Int
    let text: Substring

    /// Empty or only spaces and tabs.
    var isBlank: Bool { text.utf8.allSatisfy { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") } }

    /// Whether the line starts with `prefix`, compared byte for byte.
    func starts(with prefix: String) -> Bool { text.utf8.starts(with: prefix.utf8) }

    /// The line is `marker` followed by nothing but spaces or tabs (`---`, `## Passages`).
    func isMarker(_ marker: String) -> Bool {
        starts(with: marker) && text.utf8.dropFirst(marker.utf8.count)
            .allSatisfy { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
    }

    /// The text after the first `count` bytes, which must end on a scalar boundary (ASCII prefixes).
    func dropping(bytes count: Int) -> Substring {
        let index = text.utf8.index(text.startIndex, offsetBy: count)
        return Substring(text.unicodeScalars[index...])
    }
}
