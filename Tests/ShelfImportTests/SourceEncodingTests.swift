import Foundation
import TestSupport
import TestTraits
import Testing
import ShelfModel
import ShelfStore
@testable import ShelfImport

/// Files as people really have them: re-saved by Excel, or damaged on the way off a Kindle.
@Suite(.scratchFolders) struct SourceEncodingTests {
    private func importBytes(_ bytes: [UInt8], named name: String, format: ImportFormat? = nil)
        throws -> (ImportSummary, [String: Book]) {
        let testLibrary = try TestLibrary()
        let (folder, store) = (testLibrary.scratch, testLibrary.store)
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
        let testLibrary = try TestLibrary()
        let (folder, store) = (testLibrary.scratch, testLibrary.store)
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

    /// Issue #22: one entry holding a stray UTF-16 byte order mark and NUL bytes made the whole
    /// file "a binary file", even with --format kindle.
    @Test func aClippingWithAUTF16MarkAndNULBytesIsSkippedAndTheOthersImport() throws {
        let good = { (title: String, text: String, location: Int) in
            Array("\u{FEFF}\(title)\r\n- Your Highlight on page 1 | Location \(location)-\(location + 2) | Added on Monday, January 5, 2026 9:00:00 AM\r\n\r\n\(text)\r\n==========\r\n".utf8)
        }
        let bookmark = Array("Walden (Henry David Thoreau)\r\n- Your Bookmark on page 3 | Location 30 | Added on Monday, January 5, 2026 9:00:00 AM\r\n\r\n\r\n==========\r\n".utf8)
        let garbled = Array("Dune (Frank Herbert)\r\n- Your Highlight on page 2 | Location 20-22 | Added on Monday, January 5, 2026 9:00:00 AM\r\n\r\n".utf8)
            + [0xFF, 0xFE] + "Fear".utf16.flatMap { [UInt8($0 & 0xFF), 0] } + Array("\r\n==========\r\n".utf8)
        let bytes = good("Meditations (Marcus Aurelius)", "You have power over your mind.", 10) + garbled
            + good("Walden (Henry David Thoreau)", "Simplify, simplify.", 10) + bookmark
            + good("Walden (Henry David Thoreau)", "Our life is frittered away by detail.", 40)
        for format in [nil, ImportFormat.kindle] {
            let (summary, books) = try importBytes(bytes, named: "My Clippings.txt", format: format)
            #expect(summary.format == .kindle && summary.added == 3 && summary.skipped == 2)
            #expect(summary.problems.map(\.line) == [6])
            #expect(summary.problems.first?.message.contains("line 9 is not UTF-8") == true)
            #expect(summary.description.contains("1 bookmark skipped (line 16): a bookmark marks a place without text"))
            #expect(books["Meditations"]?.passages.map(\.text) == ["You have power over your mind."])
            #expect(books["Walden"]?.passages.map(\.text) == ["Simplify, simplify.", "Our life is frittered away by detail."])
            #expect(books["Dune"] == nil)
        }
    }

    @Test func aBinaryFileIsStillRefusedAsClippings() throws {
        let testLibrary = try TestLibrary()
        let (folder, store) = (testLibrary.scratch, testLibrary.store)
        let file = folder.url.appendingPathComponent("My Clippings.txt")
        try Data([0x00, 0x01, 0x02, 0x00, 0x41]).write(to: file)
        let error = #expect(throws: ImportError.self) { try Importer(format: .kindle).importFile(file, into: store) }
        #expect(error == .notKindleClippings(path: file.path))
        let pdf = #expect(throws: ImportError.self) { try Importer().importFile(fixture("not-a-csv.pdf"), into: store) }
        #expect(pdf?.description.contains("it looks like a PDF document") == true)
    }
}
