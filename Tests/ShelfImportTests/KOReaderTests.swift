import Foundation
import TestSupport
import TestTraits
import Testing
import ShelfModel
import ShelfStore
@testable import ShelfImport

@Suite(.scratchFolders) struct LuaTableParserTests {
    private func parse(_ text: String) throws -> LuaTable { try LuaTableParser.parse(Data(text.utf8)) }

    @Test func readsTheSubsetKOReaderWrites() throws {
        let table = try parse("""
            -- a comment
            return {
                ["s"] = "tab\\tquote\\" back\\\\ nl\\
            end \\65\\066\\x43 \\226\\130\\172",
                ['single'] = 'it\\'s',
                [1] = -1.5, [2] = 1e3, [3] = 0x10, [7] = true,
                name = false;
                ["nested"] = { { 1, 2, }, ["deep"] = { }, },
            }
            """)
        #expect(table["s"]?.string == "tab\tquote\" back\\ nl\nend ABC €")
        #expect(table["single"]?.string == "it's")
        #expect(table.orderedItems.map(\.key) == [1, 2, 3, 7])
        #expect(table.items[1] == .number(-1.5) && table.items[2]?.int == 1000 && table.items[3]?.int == 16)
        #expect(table.items[7] == .bool(true) && table["name"] == .bool(false))
        #expect(table["nested"]?.table?.items[1]?.table?.items[2]?.int == 2)
        #expect(table["nested"]?.table?["deep"]?.table == LuaTable())
    }

    /// Issue #22's held-out cases: every escape KOReader's serializer may write, and long brackets.
    @Test func stringEscapesAndLongBracketsDecodeExactly() throws {
        let table = try parse(#"""
            return {
                ["text"] = "Quote with \"escaped\" quotes and a backslash \\ in it.",
                ["lines"] = "one\ntwo\
            three",
                ["bytes"] = "\67af\195\169 \0651",
                ["long"] = [[
            He said "no" \ and [left].
            Next line]],
                ["level"] = [==[a ]] b ]=] c]==],
                ["skip"] = "a\z
                       b",
                ["unicode"] = "\u{20AC}\u{1F600}",
                [ [[key]] ] = 1,
            }
            """#)
        #expect(table["text"]?.string == #"Quote with "escaped" quotes and a backslash \ in it."#)
        #expect(table["lines"]?.string == "one\ntwo\nthree")
        #expect(table["bytes"]?.string == "Café A1")
        #expect(table["long"]?.string == "He said \"no\" \\ and [left].\nNext line")
        #expect(table["level"]?.string == "a ]] b ]=] c")
        #expect(table["skip"]?.string == "ab")
        #expect(table["unicode"]?.string == "€😀")
        #expect(table["key"] == .number(1))
    }

    @Test func anythingElseIsRefusedWithItsLine() {
        let cases: [(String, LuaSyntaxError)] = [
            ("return {\n [\"a\"] = os.execute(\"rm\"),\n}", LuaSyntaxError(line: 2, message: "`os` is not a value KOReader writes; sidecars are read as data, never run")),
            ("return {\n [\"a\"] = \"open\n}", LuaSyntaxError(line: 2, message: "a string is not closed: its closing quote is missing")),
            ("return {\n [\"a\"] = 1,\n", LuaSyntaxError(line: 3, message: "the table is not closed: a `}` is missing at the end")),
            ("local t = {}\nreturn t", LuaSyntaxError(line: 1, message: "expected `return {` at the start of the sidecar")),
            ("return { [\"a\"] = 1 } print(1)", LuaSyntaxError(line: 1, message: "unexpected text after the table")),
            ("return {\n\n [\"a\"] = \"\\q\" }", LuaSyntaxError(line: 3, message: "`\\q` is not a string escape KOReader writes")),
            ("return { [\"a\"] = \"\\255\" }", LuaSyntaxError(line: 1, message: "a string is not UTF-8 text")),
        ]
        for (text, expected) in cases {
            let error = #expect(throws: LuaSyntaxError.self) { try parse(text) }
            #expect(error == expected, "\(text)")
        }
    }
}

@Suite(.scratchFolders) struct KOReaderTests {
    @Test func importsAFolderOfSidecarsInBothLayouts() throws {
        let testLibrary = try TestLibrary()
        let store = testLibrary.store
        let summary = try Importer().importFile(fixture("koreader"), into: store)
        #expect(summary.format == .koreader)
        #expect(summary.added == 8 && summary.skipped == 2, "two books, six passages; two plain bookmarks")

        let books = try store.booksByTitle()
        let dune = try #require(books["Dune"])
        #expect(dune.author == "Frank Herbert" && dune.isbn == "9780441013593")
        #expect(dune.tags == ["Science Fiction", "Classics"] && dune.introduction == "Set on the desert planet **Arrakis**.\n\n")
        #expect(dune.extraProperties["series"] == .string("Dune Chronicles") && dune.extraProperties["series_index"] == .int(1))
        #expect(dune.extraProperties["languages"] == .list([.string("en")]))
        #expect(dune.status == .reading && dune.currentPage == 206 && dune.totalPages == 412)
        #expect(dune.passages.map(\.text) == ["I must not fear.\nFear is the mind-killer.", "\"Muad’Dib\" means \"the mouse\" \\ café.", ""])
        #expect(dune.passages.map(\.note) == ["The litany.", nil, "Reread the dinner scene."])
        #expect(dune.passages.map(\.page) == [42, 57, 95])
        #expect(dune.passages[0].chapter == "Book One: Dune" && dune.passages[0].color == "yellow")
        #expect(dune.passages[0].sources.map(\.key) == ["koreader:/body/DocFragment[3]/body/p[12]/text().0"])
        #expect(dune.passages[0].dateAdded == CalendarDate(year: 2025, month: 11, day: 3))

        let omens = try #require(books["Good Omens"])
        #expect(omens.author == "Terry Pratchett, Neil Gaiman" && omens.status == .read && omens.rating == 4)
        #expect(omens.extraProperties["review"] == .string("Funny, and kind."))
        #expect(omens.extraProperties["progress_percent"] == .int(100))
        #expect(omens.passages.map(\.text) == ["It wasn't a dark and stormy night.", "Just because it's a cliché doesn't mean it's not true.", ""])
        #expect(omens.passages.map(\.note) == [nil, "A note the reader wrote.", "Remember the ending."])
        #expect(omens.passages.map(\.page) == [12, 30, 60])
        #expect(omens.passages[0].chapter == "In the Beginning")

        let text = try #require(try store.record(id: omens.id)).text
        #expect(text.contains("### Page 12\n> It wasn't a dark and stormy night. ^"))
        #expect(text.contains("**Chapter**: In the Beginning\n"))

        let again = try Importer().importFile(fixture("koreader"), into: store)
        #expect(again.added == 0 && again.updated == 0 && again.unchanged == 8)
    }

    /// Issue #22: a highlight whose text holds `\"` and `\\` imported as an empty quote; in
    /// the old layout, the bookmark's generated `Page 57 <text>` became a note, so the
    /// highlight showed twice.
    @Test func escapedHighlightsAndOldLayoutLabelsImportOnce() throws {
        let testLibrary = try TestLibrary()
        let (temporary, store) = (testLibrary.scratch, testLibrary.store)
        let folder = temporary.url.appendingPathComponent("device/Emma.sdr", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try #"""
            -- we can read Lua syntax here!
            return {
                ["bookmarks"] = {
                    [1] = {
                        ["datetime"] = "2021-05-01 10:00:00",
                        ["highlighted"] = true,
                        ["notes"] = "Quote with \"escaped\" quotes and a backslash \\ in it.",
                        ["page"] = 57,
                        ["pos0"] = "/body/DocFragment[2]/body/p[4]/text().0",
                        ["text"] = "Page 57 Quote with \"escaped\" quotes and a backslash \\ in it.",
                    },
                    [2] = {
                        ["datetime"] = "2021-05-02 10:00:00",
                        ["highlighted"] = true,
                        ["notes"] = "A second highlight.",
                        ["page"] = 60,
                        ["text"] = "My own note\nover two lines.",
                    },
                    [3] = {
                        ["datetime"] = "2021-05-03 10:00:00",
                        ["highlighted"] = true,
                        ["notes"] = [[Only in the bookmarks, with "quotes".]],
                        ["page"] = 61,
                        ["text"] = "Page 61 Only in the bookmarks, with \"quotes\".",
                    },
                },
                ["doc_props"] = { ["authors"] = "Jane Austen", ["title"] = "Emma" },
                ["highlight"] = {
                    [57] = { [1] = {
                        ["datetime"] = "2021-05-01 10:00:00",
                        ["pos0"] = "/body/DocFragment[2]/body/p[4]/text().0",
                        ["text"] = "Quote with \"escaped\" quotes and a backslash \\ in it.",
                    } },
                    [60] = { [1] = {
                        ["datetime"] = "2021-05-02 10:00:00",
                        ["text"] = "A second highlight.",
                    } },
                },
            }
            """#.write(to: folder.appendingPathComponent("metadata.epub.lua"), atomically: true, encoding: .utf8)
        let summary = try Importer(format: .koreader).importFile(folder.deletingLastPathComponent(), into: store)
        #expect(summary.skipped == 0)
        let emma = try #require(try store.booksByTitle()["Emma"])
        #expect(emma.passages.map(\.text) == [#"Quote with "escaped" quotes and a backslash \ in it."#, "A second highlight.",
                                               #"Only in the bookmarks, with "quotes"."#])
        #expect(emma.passages.map(\.note) == [nil, "My own note\nover two lines.", nil])
        #expect(emma.passages.map(\.page) == [57, 60, 61])
    }

    @Test func aBadSidecarInAFolderIsSkippedNamingFileAndLine() throws {
        let testLibrary = try TestLibrary()
        let store = testLibrary.store
        let summary = try Importer(format: .koreader).importFile(fixture("koreader-bad"), into: store)
        #expect(summary.added == 2 && summary.skipped == 1)
        #expect(summary.problems.map(\.description) == [
            "Broken.sdr/metadata.epub.lua line 4: `os` is not a value KOReader writes; sidecars are read as data, never run; the book was skipped",
        ])
        #expect(try store.booksByTitle()["Meditations"]?.passages.map(\.text) == ["You have power over your mind."])
        #expect(!FileManager.default.fileExists(atPath: "/tmp/shelf-ran-lua"))
    }

    @Test func aBadSidecarOnItsOwnIsRefusedNamingFileAndLine() throws {
        let testLibrary = try TestLibrary()
        let store = testLibrary.store
        let file = fixture("koreader-bad/Broken.sdr/metadata.epub.lua")
        let error = #expect(throws: ImportError.self) { try Importer().importFile(file, into: store) }
        #expect(error == .malformed(path: file.path, line: 4, reason: "`os` is not a value KOReader writes; sidecars are read as data, never run"))
        #expect(error?.description.hasPrefix("\(file.path) line 4: `os` is not a value") == true)
        #expect(try store.summaries().isEmpty)
    }

    @Test func importsTheJSONHighlightExport() throws {
        let testLibrary = try TestLibrary()
        let store = testLibrary.store
        let summary = try Importer().importFile(fixture("koreader_export.json"), into: store)
        #expect(summary.format == .koreader && summary.added == 5)
        let books = try store.booksByTitle()
        #expect(books["Meditations"]?.author == "Marcus Aurelius")
        #expect(books["Meditations"]?.passages.map(\.note) == [nil, "Ἀρετή."])
        #expect(books["Dune"]?.passages.first?.page == 42 && books["Dune"]?.passages.first?.chapter == "Book One: Dune")
    }
}
