import Testing
@testable import ShelfImport
import TestTraits

@Suite(.scratchFolders) struct CSVTableTests {
    @Test func recordsKnowTheLineTheyStartOn() throws {
        let text = "Title,Review\r\nA,\"one\r\ntwo\"\r\n\r\nB,\"x\ny\nz\"\nC,plain\n"
        let table = try #require(CSVTable(text: text))
        #expect(table.header == ["Title", "Review"])
        #expect(table.records.map(\.line) == [2, 5, 8])
        #expect(table.records.map(\.cells) == [["A", "one\r\ntwo"], ["B", "x\ny\nz"], ["C", "plain"]])
    }

    @Test func quotedCommasAndDoubledQuotesStayInTheirCell() throws {
        let table = try #require(CSVTable(text: "Title,Note\n\"Dune, the novel\",\"a \"\"spice\"\" story\"\n"))
        #expect(table.records.first?.cells == ["Dune, the novel", "a \"spice\" story"])
    }

    @Test func semicolonsAndTabsAreDelimitersWhenTheHeaderSaysSo() throws {
        let semicolons = try #require(CSVTable(text: "Title;Author;Note\n\"Dune; a novel\";Frank Herbert;x, y\n"))
        #expect(semicolons.records.first?.cells == ["Dune; a novel", "Frank Herbert", "x, y"])
        let tabs = try #require(CSVTable(text: "Title\tAuthor\nDune\tFrank Herbert\n"))
        #expect(tabs.header == ["Title", "Author"])
    }
}
