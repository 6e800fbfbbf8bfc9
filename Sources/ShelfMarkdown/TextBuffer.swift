import ShelfModel

/// Builds a file's text as UTF-8 bytes: appending to a byte array is the cheapest way to render
/// a long book, and the text is validated once, at the end.
struct TextBuffer {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func append(_ part: ArraySlice<UInt8>) { bytes.append(contentsOf: part) }

    mutating func append(_ part: Slice<UnsafeBufferPointer<UInt8>>) { bytes.append(contentsOf: part) }

    mutating func appendLine(_ text: String) {
        append(text)
        bytes.append(UInt8(ascii: "\n"))
    }

    mutating func appendNewline() { bytes.append(UInt8(ascii: "\n")) }

    /// `2025-12-29`, written digit by digit.
    mutating func append(_ day: CalendarDate) {
        appendDate(year: day.year, month: day.month, day: day.day)
    }

    /// `YYYY-MM-DD`.
    mutating func appendDate(year: Int, month: Int, day: Int) {
        append(year, digits: 4)
        bytes.append(UInt8(ascii: "-"))
        append(month, digits: 2)
        bytes.append(UInt8(ascii: "-"))
        append(day, digits: 2)
    }

    /// `value` zero-padded to at least `digits` digits (after a `-` when negative).
    mutating func append(_ value: Int, digits: Int) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var width = 1
        var power: UInt = 10
        while width < 20, value.magnitude >= power {
            width += 1
            power = power.multipliedReportingOverflow(by: 10).partialValue
        }
        for _ in width..<max(digits, width) { bytes.append(UInt8(ascii: "0")) }
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: width))
        var rest = value.magnitude
        for index in stride(from: start + width - 1, through: start, by: -1) {
            bytes[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
    }

    var string: String { String(decoding: bytes, as: UTF8.self) }
}
