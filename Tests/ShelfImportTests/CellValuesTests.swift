import Testing
import ShelfModel
@testable import ShelfImport
import TestTraits

@Suite(.scratchFolders) struct CellValuesTests {
    @Test func goodreadsISBNWrappersAreRemoved() {
        #expect(CellValues.isbn(#"="0441013597""#) == "0441013597")
        #expect(CellValues.isbn(#"="""#) == nil)
        #expect(CellValues.isbn("978-0-441-01359-3") == "9780441013593")
        #expect(CellValues.isbn("080442957x") == "080442957X")
        #expect(CellValues.isbn("a81c3e7f-0b2d") == nil)
        #expect(CellValues.isBlank(#"="""#))
    }

    @Test func ratingsFromNumbersAndStars() throws {
        #expect(try CellValues.rating("4") == 4)
        #expect(try CellValues.rating("4.25") == 4.25)
        #expect(try CellValues.rating("0") == nil)
        #expect(try CellValues.rating("★★★★☆") == 4)
        #expect(try CellValues.rating("⭐️⭐️⭐️") == 3)
        #expect(try CellValues.rating("★★★½") == 3.5)
        #expect(throws: CellProblem.self) { try CellValues.rating("five") }
        #expect(throws: CellProblem.self) { try CellValues.rating("7") }
    }

    @Test func datesInEveryExportSpelling() throws {
        let expected = CalendarDate(year: 2025, month: 12, day: 29)
        for text in ["2025-12-29", "2025/12/29", "December 29, 2025", "Dec 29, 2025", "29 December 2025",
                     "Monday, December 29, 2025 10:15:00 PM"] {
            #expect(try CellValues.date(text, end: false) == expected, "\(text)")
        }
        let range = "December 29, 2025 → January 3, 2026"
        #expect(try CellValues.date(range, end: false) == expected)
        #expect(try CellValues.date(range, end: true) == CalendarDate(year: 2026, month: 1, day: 3))
        #expect(throws: CellProblem.self) { try CellValues.date("2025/13/45", end: true) }
        #expect(throws: CellProblem.self) { try CellValues.date("soon", end: true) }
    }

    @Test func statusWordsOfTheExports() {
        #expect(CellValues.status("currently-reading") == .reading)
        #expect(CellValues.status("to-read") == .toRead)
        #expect(CellValues.status("Not started") == .toRead)
        #expect(CellValues.status("Finished") == .read)
        #expect(CellValues.status("did-not-finish") == .abandoned)
        #expect(CellValues.status("favourites") == nil)
    }

    @Test func keptValuesAreNumbersOnlyWhenClearlyNumeric() {
        #expect(CellValues.propertyValue("412") == .int(412))
        #expect(CellValues.propertyValue("4.29") == .double(4.29))
        #expect(CellValues.propertyValue("0") == .int(0))
        #expect(CellValues.propertyValue("0441013597") == .string("0441013597"))
        #expect(CellValues.propertyValue("1,024") == .string("1,024"))
        #expect(CellValues.propertyValue("Yes") == .string("Yes"))
        #expect(CellValues.propertyValue(#"="9780441013593""#) == .string("9780441013593"))
    }

    @Test func propertyKeysAreSnakeCase() {
        #expect(CellValues.propertyKey(forColumn: "Average Rating") == "average_rating")
        #expect(CellValues.propertyKey(forColumn: "Character- or Plot-Driven?") == "character_or_plot_driven")
        #expect(CellValues.propertyKey(forColumn: "ISBN/UID") == "isbn_uid")
        #expect(CellValues.propertyKey(forColumn: "Année") == "annee")
        #expect(CellValues.propertyKey(forColumn: "2nd Author") == "column_2nd_author")
    }

    @Test func tagsAreSplitTrimmedAndUnique() {
        #expect(CellValues.tags("scifi, favorites,,scifi ") == ["scifi", "favorites"])
    }

    @Test func notionPageLinksAreRemovedFromFieldText() {
        let cell = "Neil Gaiman (https://www.notion.so/Neil-Gaiman-1a2b), Terry Pratchett (https://www.notion.so/Terry-3c4d)"
        #expect(ImportFormat.notion.fieldText(cell) == "Neil Gaiman, Terry Pratchett")
        #expect(ImportFormat.csv.fieldText(cell) == cell)
    }
}
