extension StringProtocol {
    /// The text without leading and trailing white space (spaces, tabs, line breaks, and every
    /// other Unicode white space).
    ///
    /// Native, unlike Foundation's `trimmingCharacters(in:)`, which on Linux converts through
    /// UTF-16 and was a quarter of a 10,000-row import's time.
    public func trimmed() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(self[first..<scalars.index(after: last)])
    }
}
