import Foundation
import TestSupport
import TestTraits
import Testing
import ShelfStore
@testable import ShelfImport

@Suite(.scratchFolders) struct ImportErrorTests {
    private func importError(_ file: URL, format: ImportFormat? = nil,
                             map: [String] = []) throws -> ImportError? {
        let testLibrary = try TestLibrary()
        let store = testLibrary.store
        let error = #expect(throws: ImportError.self) {
            try Importer(format: format, columnMap: ColumnMap(arguments: map)).importFile(file, into: store)
        }
        #expect(try store.summaries().isEmpty, "nothing is written when the import is refused")
        return error
    }

    @Test func aPDFIsNotCSV() throws {
        let error = try importError(fixture("not-a-csv.pdf"))
        #expect(error == .notCSV(path: fixture("not-a-csv.pdf").path, looksLike: "a PDF document"))
        #expect(error?.description.contains("Export Library") == true)
    }

    @Test func aJSONFileIsNotCSV() throws {
        let error = try importError(fixture("library.json"))
        #expect(error == .notCSV(path: fixture("library.json").path, looksLike: "a JSON file"))
    }

    @Test func aMissingFile() throws {
        let missing = fixture("nowhere.csv")
        #expect(try importError(missing) == .fileMissing(path: missing.path))
    }

    @Test func anUnknownFormatNamesTheChoices() {
        let error = #expect(throws: ImportError.self) { try ImportFormat(argument: "librarything") }
        #expect(error?.description == "unknown import format \"librarything\"; use one of goodreads, storygraph, notion, csv, kindle, markdown, kobo, koreader, readwise, calibre.")
        #expect((try? ImportFormat(argument: "Goodreads")) == .goodreads)
    }

    @Test func aCSVWithoutATitleColumn() throws {
        let folder = try TemporaryFolder()
        let file = try folder.file("no-title.csv", "Author,Pages\nFrank Herbert,412\n")
        let error = try importError(file)
        #expect(error == .missingColumn(field: "title", available: ["Author", "Pages"]))
        #expect(error?.description.contains("--map 'COLUMN=title'") == true)
    }

    @Test func aMapNamingAnAbsentColumn() throws {
        let error = try importError(fixture("storygraph_export.csv"), map: ["Rating=rating"])
        guard case .unknownColumn("Rating", let available)? = error else {
            Issue.record("expected unknownColumn, got \(String(describing: error))")
            return
        }
        #expect(available.contains("Star Rating"))
    }

    @Test func kindleFormatOnACSV() throws {
        let file = fixture("notion_books.csv")
        #expect(try importError(file, format: .kindle) == .notKindleClippings(path: file.path))
    }

    @Test func aColumnMapOnKindleClippings() throws {
        let error = try importError(fixture("My Clippings.txt"), map: ["Title=title"])
        #expect(error == .badMap(argument: "Title=…", reason: "Kindle clippings have no columns to map"))
    }
}
