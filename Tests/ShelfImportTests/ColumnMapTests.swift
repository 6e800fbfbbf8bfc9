import Testing
@testable import ShelfImport
import TestTraits

@Suite(.scratchFolders) struct ColumnMapTests {
    @Test func parsesFieldsAndKeptProperties() throws {
        let map = try ColumnMap(arguments: ["Book Title=title", "Writer = author", "Shelf=shelf_name", "a=b=rating"])
        #expect(map.assignments == [
            ColumnAssignment(column: "Book Title", target: .field(.title)),
            ColumnAssignment(column: "Writer", target: .field(.author)),
            ColumnAssignment(column: "Shelf", target: .property("shelf_name")),
            ColumnAssignment(column: "a=b", target: .field(.rating)),
        ])
    }

    @Test(arguments: ["Title", "=title", "Title=", "Title=Book Title", "Title=9lives", "Title=id"])
    func rejectsMalformedArguments(_ argument: String) {
        #expect(throws: ImportError.self) { try ColumnMap(arguments: [argument]) }
    }

    @Test func badMapMessageShowsTheExpectedForm() {
        let error = #expect(throws: ImportError.self) { try ColumnMap(arguments: ["Title"]) }
        #expect(error?.description.contains("--map 'Column Name=field'") == true)
    }

    @Test func userMapOverridesDefaultsColumnByColumn() {
        let user = ColumnMap([ColumnAssignment(column: "isbn13", target: .field(.isbn))])
        let defaults = ColumnMap.fields(["ISBN": .isbn, "ISBN13": .isbn, "Title": .title])
        #expect(user.overriding(defaults).assignments.map(\.column) == ["isbn13", "ISBN", "Title"])
    }

    @Test func mapNamingAnAbsentColumnListsTheColumns() throws {
        let map = try ColumnMap(arguments: ["Book Name=title"])
        let error = #expect(throws: ImportError.self) {
            try BookRowDecoder(format: .csv, header: ["Name", "Writer"], userMap: map)
        }
        #expect(error == .unknownColumn("Book Name", available: ["Name", "Writer"]))
        #expect(error?.description.contains("its columns are: Name, Writer") == true)
    }

    @Test func aTableWithoutATitleColumnIsRefused() {
        let error = #expect(throws: ImportError.self) {
            try BookRowDecoder(format: .csv, header: ["Writer", "Pages"], userMap: ColumnMap())
        }
        #expect(error == .missingColumn(field: "title", available: ["Writer", "Pages"]))
    }
}
