import Foundation

/// `$XDG_CONFIG_HOME/shelf/config.toml` (default `~/.config/shelf/config.toml`): which library
/// commands use when neither `--library` nor `SHELF_LIBRARY` says.
///
/// The file holds one TOML key, `library = "…"`. It is read and written here by hand because
/// no TOML package resolves on this project's package mirror (TOMLKit needs a dependency that
/// is not mirrored); the subset handled is basic strings with their escapes, comments and blank
/// lines, and any other key is kept when the file is rewritten.
struct ShelfConfig {
    var library: String?

    static var fileURL: URL {
        // The XDG spec: a relative or empty value is to be ignored.
        let base = ProcessInfo.processInfo.environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (homeFolder + "/.config")
        return URL(fileURLWithPath: base).appendingPathComponent("shelf/config.toml")
    }

    /// `$HOME`, as every Unix program takes it, and the password database's home folder only
    /// when `HOME` is unset: `HOME=/tmp/h shelf init` must not touch the real user's files.
    static var homeFolder: String {
        ProcessInfo.processInfo.environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory()
    }

    static func load() throws -> ShelfConfig {
        guard let text = try? String(contentsOf: fileURL, encoding: .utf8) else { return ShelfConfig() }
        var config = ShelfConfig()
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            guard let (key, rawValue) = keyValue(line) else { continue }
            guard key == "library" else { continue }
            guard let value = basicString(rawValue) else {
                throw CLIError("\(fileURL.path) line \(number + 1): library must be a quoted string, like library = \"/home/me/Shelf\". Fix the line or run `shelf init PATH` again.")
            }
            config.library = value
        }
        return config
    }

    /// Writes the file, replacing the `library` line and keeping every other line.
    func save() throws {
        let url = Self.fileURL
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let existing = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
        var lines = existing.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            .filter { Self.keyValue(Substring($0))?.key != "library" }
        while lines.last == "" { lines.removeLast() }
        if let library { lines.insert("library = \(Self.quoted(library))", at: 0) }
        try (lines.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
    }

    private static func keyValue(_ line: Substring) -> (key: String, value: Substring)? {
        let trimmed = line.drop(while: { $0 == " " || $0 == "\t" })
        guard !trimmed.hasPrefix("#"), let equals = trimmed.firstIndex(of: "=") else { return nil }
        let key = trimmed[..<equals].trimmingCharacters(in: .whitespaces)
        return (key, trimmed[trimmed.index(after: equals)...].drop(while: { $0 == " " || $0 == "\t" }))
    }

    /// The value of a TOML basic string (`"…"` with backslash escapes) followed by an optional comment.
    private static func basicString(_ raw: Substring) -> String? {
        guard raw.first == "\"" else { return nil }
        var result = ""
        var iterator = raw.dropFirst().makeIterator()
        while let character = iterator.next() {
            switch character {
            case "\"": return result
            case "\\":
                switch iterator.next() {
                case "\"": result.append("\"")
                case "\\": result.append("\\")
                case "n": result.append("\n")
                case "t": result.append("\t")
                default: return nil
                }
            default: result.append(character)
            }
        }
        return nil
    }

    private static func quoted(_ value: String) -> String {
        var escaped = ""
        for character in value {
            switch character {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\t": escaped += "\\t"
            default: escaped.append(character)
            }
        }
        return "\"\(escaped)\""
    }
}
