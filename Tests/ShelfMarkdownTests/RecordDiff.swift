/// The paths where two values differ (`book.passages[1].text: "a" ≠ "b"`), so a failed law names
/// the field instead of printing two whole records.
enum RecordDiff {
    static func differences(_ expected: Any, _ actual: Any, path: String = "") -> [String] {
        let left = Mirror(reflecting: expected)
        let right = Mirror(reflecting: actual)
        let leftChildren = Array(left.children)
        let rightChildren = Array(right.children)
        guard !leftChildren.isEmpty || !rightChildren.isEmpty else {
            let (a, b) = (String(reflecting: expected), String(reflecting: actual))
            return a == b ? [] : ["\(path): \(a) ≠ \(b)"]
        }
        guard leftChildren.count == rightChildren.count else {
            return ["\(path): \(leftChildren.count) children ≠ \(rightChildren.count)"]
        }
        return zip(leftChildren.indices, zip(leftChildren, rightChildren)).flatMap { index, pair in
            differences(pair.0.value, pair.1.value, path: path + "." + (pair.0.label ?? "[\(index)]"))
        }
    }

    /// The first line where two texts differ, both sides escaped.
    static func firstDifferentLine(_ expected: String, _ actual: String) -> String {
        let left = expected.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        let right = actual.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        for index in 0..<max(left.count, right.count) {
            let a = index < left.count ? left[index].debugDescription : "(none)"
            let b = index < right.count ? right[index].debugDescription : "(none)"
            if a != b { return "line \(index + 1): \(a) ≠ \(b)" }
        }
        return "no line differs"
    }
}
