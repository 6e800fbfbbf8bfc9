import Foundation

/// The text of an import file, checked to be text at all.
///
/// Exports reach users through browsers, spreadsheets and phones; a wrong file picked in a
/// hurry (the PDF next to the CSV, a JSON backup) must be refused with a clear message instead
/// of turning into a thousand "row has no title" problems.
enum SourceText {
    /// Reads `url` as UTF-8 without a leading byte order mark.
    static func load(_ url: URL) throws -> String {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder), !isFolder.boolValue else {
            throw ImportError.fileMissing(path: url.path)
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ImportError.fileUnreadable(path: url.path, reason: error.localizedDescription)
        }
        if let kind = binaryKind(of: data) {
            throw ImportError.notCSV(path: url.path, looksLike: kind)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ImportError.notCSV(path: url.path, looksLike: "text in an encoding other than UTF-8 (save it as UTF-8 CSV)")
        }
        return text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
    }

    /// What `data` is when it is clearly not text, by its magic bytes or NUL bytes.
    private static func binaryKind(of data: Data) -> String? {
        let magics: [(prefix: [UInt8], kind: String)] = [
            (Array("%PDF".utf8), "a PDF document"),
            ([0x50, 0x4B, 0x03, 0x04], "a ZIP archive (unzip it and import the .csv inside) or an .xlsx/.numbers spreadsheet"),
            ([0xD0, 0xCF, 0x11, 0xE0], "an Excel .xls workbook"),
            (Array("SQLite format 3".utf8), "an SQLite database"),
        ]
        if let match = magics.first(where: { data.starts(with: $0.prefix) }) { return match.kind }
        if data.isEmpty { return "an empty file" }
        if data.prefix(8192).contains(0) { return "a binary file" }
        return nil
    }

    /// What `text` is when it is text but clearly not a CSV table (JSON, XML, HTML).
    static func nonCSVKind(of text: String) -> String? {
        switch text.trimmingCharacters(in: .whitespacesAndNewlines).first {
        case "{", "[": "a JSON file"
        case "<": "an XML or HTML file"
        case nil: "an empty file"
        default: nil
        }
    }
}
