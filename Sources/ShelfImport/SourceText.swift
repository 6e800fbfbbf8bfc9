import Foundation
import ShelfStore

/// The character encodings import files arrive in: UTF-8 from the apps themselves, and what
/// Excel writes when a CSV is saved again — "CSV" in the Windows code page, or "Unicode Text"
/// (UTF-16 with a byte order mark).
public enum SourceEncoding: String, Hashable, Sendable {
    case utf8 = "UTF-8"
    case utf16LittleEndian = "UTF-16 (little-endian)"
    case utf16BigEndian = "UTF-16 (big-endian)"
    case windows1252 = "Windows-1252"
}

/// The text of an import file, checked to be text at all, and decoded.
///
/// Exports reach users through browsers, spreadsheets and phones; a wrong file picked in a
/// hurry (the PDF next to the CSV, a JSON backup) must be refused with a clear message instead
/// of turning into a thousand "row has no title" problems. A file re-saved by a spreadsheet
/// must still import: the encoding is chosen by byte order mark, then UTF-8 when every byte
/// is valid UTF-8, else Windows-1252 (where every byte is a character).
struct SourceText {
    /// The decoded text, without a leading byte order mark.
    var text: String
    var encoding: SourceEncoding
    /// 1-based lines that held bytes invalid in `encoding`, decoded as U+FFFD (see `lossyUTF8`).
    var garbledLines: Set<Int> = []

    /// The bytes of the file at `url`, whatever they are.
    static func load(_ url: URL) throws -> Data {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder), !isFolder.boolValue else {
            throw ImportError.fileMissing(path: url.path)
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ImportError.fileUnreadable(path: url.path, reason: ErrorReason.of(error))
        }
        return data
    }

    /// Decodes `data` by its byte order mark, as UTF-8 when it is valid UTF-8, else as
    /// Windows-1252. Throws for UTF-16 that is cut or holds unpaired surrogates.
    init(decoding data: Data, path: String) throws {
        let bytes = [UInt8](data)
        if let order = Self.utf16ByteOrder(bytes) {
            guard bytes.count % 2 == 0,
                  let text = String(validating: Self.utf16Units(bytes.dropFirst(2), order), as: UTF16.self) else {
                throw ImportError.notCSV(path: path, looksLike: "damaged UTF-16 text (save it again as CSV UTF-8)")
            }
            self.init(text: text, encoding: order)
        } else if let text = String(validating: bytes, as: UTF8.self) {
            self.init(text: text, encoding: .utf8)
        } else {
            self.init(text: String(String.UnicodeScalarView(bytes.map(Self.windows1252Scalar))), encoding: .windows1252)
        }
    }

    /// `data` as UTF-8 line by line: each line with invalid bytes (a stray UTF-16 byte order
    /// mark among them) or NUL bytes is decoded with U+FFFD and listed in `garbledLines`, so a
    /// Kindle's clippings file with one damaged entry loses only that entry. Lines end at `\n`, `\r\n` or a lone `\r`, as `Character.isNewline` splits them.
    static func lossyUTF8(_ data: Data) -> SourceText {
        let bytes = [UInt8](data)
        var garbled = Set<Int>()
        var line = 1
        var start = 0
        var index = 0
        func checkLine(_ end: Int) {
            if bytes[start..<end].contains(0) || String(validating: bytes[start..<end], as: UTF8.self) == nil { garbled.insert(line) }
        }
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "\n") || bytes[index] == UInt8(ascii: "\r") {
                checkLine(index)
                if bytes[index] == UInt8(ascii: "\r"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "\n") { index += 1 }
                line += 1
                start = index + 1
            }
            index += 1
        }
        checkLine(bytes.count)
        var text = SourceText(text: String(decoding: bytes, as: UTF8.self), encoding: .utf8)
        text.garbledLines = garbled
        return text
    }

    private init(text: String, encoding: SourceEncoding) {
        self.text = text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
        self.encoding = encoding
    }

    private static func utf16ByteOrder(_ bytes: [UInt8]) -> SourceEncoding? {
        if bytes.starts(with: [0xFF, 0xFE]) { return .utf16LittleEndian }
        if bytes.starts(with: [0xFE, 0xFF]) { return .utf16BigEndian }
        return nil
    }

    private static func utf16Units(_ bytes: ArraySlice<UInt8>, _ order: SourceEncoding) -> [UInt16] {
        stride(from: bytes.startIndex, to: bytes.endIndex, by: 2).map { index in
            let (first, second) = (UInt16(bytes[index]), UInt16(bytes[index + 1]))
            return order == .utf16LittleEndian ? first | second << 8 : first << 8 | second
        }
    }

    /// Windows-1252 is Latin-1 except for 0x80–0x9F, which hold typographic quotes, dashes and
    /// the euro sign; its five unassigned bytes map to the C1 controls, as browsers decode them.
    private static func windows1252Scalar(_ byte: UInt8) -> Unicode.Scalar {
        guard (0x80...0x9F).contains(byte) else { return Unicode.Scalar(byte) }
        let high: [UInt32] = [
            0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
            0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
        ]
        return Unicode.Scalar(high[Int(byte) - 0x80])!
    }

    /// `binaryKind` of a file whose only sign of being binary is NUL bytes — also what a text
    /// file with a damaged stretch looks like.
    static let nulBytesKind = "a binary file"

    /// What `data` is when it is clearly not text, by its magic bytes or NUL bytes (which
    /// UTF-16 text, recognised by its byte order mark, is full of).
    static func binaryKind(of data: Data) -> String? {
        let magics: [(prefix: [UInt8], kind: String)] = [
            (Array("%PDF".utf8), "a PDF document"),
            ([0x50, 0x4B, 0x03, 0x04], "a ZIP archive (unzip it and import the .csv inside) or an .xlsx/.numbers spreadsheet"),
            ([0xD0, 0xCF, 0x11, 0xE0], "an Excel .xls workbook"),
            (Array("SQLite format 3".utf8), "an SQLite database (a Kobo's or Calibre's? add --format kobo or --format calibre)"),
        ]
        if let match = magics.first(where: { data.starts(with: $0.prefix) }) { return match.kind }
        if data.isEmpty { return "an empty file" }
        if utf16ByteOrder(Array(data.prefix(2))) == nil, data.prefix(8192).contains(0) { return nulBytesKind }
        return nil
    }

    /// What `text` is when it is text but clearly not a CSV table (JSON, XML, HTML).
    static func nonCSVKind(of text: String) -> String? {
        switch text.unicodeScalars.first(where: { !$0.properties.isWhitespace }).map(Character.init) {
        case "{", "[": "a JSON file"
        case "<": "an XML or HTML file"
        case nil: "an empty file"
        default: nil
        }
    }
}
