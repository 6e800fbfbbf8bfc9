import Foundation
import TestSupport
import Testing
import ShelfModel
import ShelfStore
@testable import ShelfImport

/// Files as people really have them: re-saved by Excel, or damaged on the way off a Kindle.
@Suite struct SourceEncodingTests {
    private func importBytes(_ bytes: [UInt8], named name: String, format: ImportFormat? = nil)
        throws -> (ImportSummary, [String: Book]) {
        let folder = try TemporaryFolder()
        let store = try makeLibrary(folder)
        let file = folder.url.appendingPathComponent(name)
        try Data(bytes).write(to: file)
        let summary = try Importer(format: format).importFile(file, into: store)
        return (summary, try store.booksByTitle())
    }

    @Test func aCSVSavedByExcelInWindows1252() throws {
        // "Café", "Zoë" in Latin-1 and a curly apostrophe (0x92), which ISO-8859-1 has no glyph for.
        let bytes = Array("Title,Author\nCaf".utf8) + [0xE9] + Array(" Society,Zo".utf8) + [0xEB]
            + Array(" Heller\nThe Reader".utf8) + [0x92] + Array("s Guide,Anon\n".utf8)
        let (summary, books) = try importBytes(bytes, named: "books.csv")
        #expect(summary.encoding == .windows1252)
        #expect(summary.description.hasPrefix("csv: 2 added, 0 updated, 0 unchanged, 0 skipped (read as Windows-1252)"))
        #expect(books["Café Society"]?.author == "Zoë Heller")
        #expect(books["The Reader\u{2019}s Guide"] != nil)
    }

    @Test func unicodeTextFromExcelIsUTF16WithTabs() throws {
        let text = "Title\tAuthor\tPages\r\nΟδύσσεια\tὍμηρος\t541\r\n日本語の本\t著者\t12\r\n"
        let littleEndian: [UInt8] = [0xFF, 0xFE] + text.utf16.flatMap { unit -> [UInt8] in [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        let (summary, books) = try importBytes(littleEndian, named: "books.txt", format: .csv)
        #expect(summary.encoding == .utf16LittleEndian && summary.added == 2)
        #expect(books["Οδύσσεια"]?.author == "Ὅμηρος" && books["Οδύσσεια"]?.totalPages == 541)
        #expect(summary.description.contains("(read as UTF-16 (little-endian))"))

        let bigEndian: [UInt8] = [0xFE, 0xFF] + text.utf16.flatMap { unit -> [UInt8] in [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
        let (big, bigBooks) = try importBytes(bigEndian, named: "books.txt")
        #expect(big.encoding == .utf16BigEndian && bigBooks["日本語の本"]?.author == "著者")
    }

    @Test func damagedUTF16IsRefusedInOneLine() throws {
        let folder = try TemporaryFolder()
        let store = try makeLibrary(folder)
        let file = folder.url.appendingPathComponent("cut.txt")
        try Data([0xFF, 0xFE, 0x54, 0x00, 0x69]).write(to: file)
        let error = #expect(throws: ImportError.self) { try Importer().importFile(file, into: store) }
        #expect(error == .notCSV(path: file.path, looksLike: "damaged UTF-16 text (save it again as CSV UTF-8)"))
    }

    @Test func aGarbledClippingIsSkippedByLineAndTheOthersImport() throws {
        let good = { (title: String, text: String) in
            Array("\(title)\r\n- Your Highlight on page 1 | Location 10-12 | Added on Monday, January 5, 2026 9:00:00 AM\r\n\r\n\(text)\r\n==========\r\n".utf8)
        }
        let garbled = Array("Dune (Frank Herbert)\r\n- Your Highlight on page 2 | Location 20-22 | Added on Monday, January 5, 2026 9:00:00 AM\r\n\r\nFear is the ".utf8)
            + [0xFF, 0xC3] + Array("killer.\r\n==========\r\n".utf8)
        let bytes = good("Meditations (Marcus Aurelius)", "You have power over your mind.") + garbled
            + good("Walden (Henry David Thoreau)", "Simplify, simplify.")
        let (summary, books) = try importBytes(bytes, named: "My Clippings.txt")
        #expect(summary.format == .kindle && summary.encoding == .utf8)
        #expect(summary.added == 2 && summary.skipped == 1)
        #expect(summary.problems.map(\.line) == [6])
        #expect(summary.problems.first?.message.contains("line 9 is not UTF-8") == true)
        #expect(books["Meditations"]?.passages.map(\.text) == ["You have power over your mind."])
        #expect(books["Walden"]?.passages.map(\.text) == ["Simplify, simplify."])
        #expect(books["Dune"] == nil)
    }
}
