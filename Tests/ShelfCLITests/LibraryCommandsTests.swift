import Foundation
import ShelfMarkdown
import ShelfModel
import ShelfStore
import Testing
import TestTraits

/// list, show, search, status and trash on the sample library.
@Suite(.scratchFolders) struct LibraryCommandsTests {
    struct Listed: Decodable {
        var id, kind, title, path: String
        var version: Int64
        var favorite, draft: Bool
    }

    /// A CLI with the repository's sample library imported.
    func sampleLibrary() throws -> ShelfCLI {
        let cli = try ShelfCLI()
        try cli.run("init", cli.library.path)
        let imported = try cli.run("import", ShelfCLI.samples.appendingPathComponent("library").path)
        #expect(imported.status == 0, "\(imported.stderr)")
        return cli
    }

    func listed(_ cli: ShelfCLI, _ arguments: String...) throws -> [Listed] {
        let result = try cli.run(["list", "--json"] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONDecoder().decode([Listed].self, from: Data(result.stdout.utf8))
    }

    @Test func theSampleLibraryLoadsEveryBookAndNote() throws {
        let cli = try sampleLibrary()
        let books = try listed(cli, "books")
        let notes = try listed(cli, "notes")
        #expect(books.map(\.title).sorted() == ["Meditations", "Moby-Dick", "Pride and Prejudice", "Walden"])
        #expect(Set(notes.map(\.title)) == ["Reading goals 2026", "Stoic themes", "Quotes to revisit"])
        #expect(books.allSatisfy { $0.kind == "book" && $0.path.hasPrefix("Books/") })
    }

    @Test func restoreBringsAnEarlierVersionBackAndKeepsTheOneItReplaces() throws {
        let cli = try sampleLibrary()
        let note = "Notes/Stoic themes.md"
        let original = try cli.run("show", note).stdout
        let edited = cli.scratch.appendingPathComponent("edited")
        try FileManager.default.copyItem(at: ShelfCLI.samples.appendingPathComponent("library"), to: edited)
        try Data((original + "An edit to undo.\n").utf8).write(to: edited.appendingPathComponent(note))
        #expect(try cli.run("import", edited.path).status == 0)
        let changed = try cli.run("show", note).stdout
        #expect(changed.hasSuffix("An edit to undo.\n"))

        let versions = try cli.run("history", note).stdout.split(separator: "\n")
        let earlier = try #require(versions.dropFirst().first.map { String($0.prefix { $0 != "\t" }) })
        let restored = try cli.run("restore", note, "--version", earlier)
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(try cli.run("show", note).stdout == original)
        #expect(try CrashRecoveryTests.keptVersions(of: note, cli).contains(changed), "the undone edit is kept too")
        let missing = try cli.run("restore", note, "--version", "999")
        #expect(missing.status != 0 && missing.stderr.contains("no version 999"))
    }

    @Test func showPrintsTheFileExactlyAsImported() throws {
        let cli = try sampleLibrary()
        let source = ShelfCLI.samples.appendingPathComponent("library/Books/Walden - Henry David Thoreau.md")
        let original = try String(contentsOf: source, encoding: .utf8)
        let byPath = try cli.run("show", "Books/Walden - Henry David Thoreau.md")
        #expect(byPath.stdout == original)
        let byID = try cli.run("show", "0b6f1f8e-1c1e-4d5e-9a53-6f1b0e2a7c01")
        #expect(byID.stdout == original)
        let unknown = try cli.run("show", "no-such-item")
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("shelf list"))
    }

    @Test func notesListFavoritesFirstThenMostRecentlyModified() throws {
        let cli = try sampleLibrary()
        let store = try LibraryStore.open(at: cli.library)
        let stoic = try #require(try store.record(id: ItemID("d2f3e4a5-b6c7-4d8e-9f0a-1b2c3d4e5f06")))
        guard case .note(var note) = stoic.item else { Issue.record("not a note"); return }
        note.content += "\nOne more thought.\n"
        try store.update(.note(note))
        let titles = try listed(cli, "notes").map(\.title)
        #expect(titles.first == "Reading goals 2026")
        #expect(titles.dropFirst().first == "Stoic themes")
    }

    @Test func searchFindsPassagesAndNotes() throws {
        let cli = try sampleLibrary()
        let passage = try cli.run("search", "deliberately", "--json")
        #expect(passage.stdout.contains("Walden"))
        #expect(passage.stdout.contains("Stoic themes"))
        let none = try cli.run("search", "xylophone")
        #expect(none.status == 1 && none.stdout.isEmpty, "no match exits 1 with nothing on stdout, as grep does")
        #expect(none.stderr.contains("No matches"))
        let hostile = try cli.run("search", "\"unbalanced", "AND", "(")
        #expect(hostile.status == 1 && hostile.stderr.hasPrefix("No matches"), "\(hostile.stderr)")
    }

    struct Hit: Decodable {
        struct PassageHit: Decodable, Equatable { var id: String; var page: Int? }
        var title: String
        var passages: [PassageHit]
    }

    /// Issue #22: no prefix search, a silent cut at 50, and no passage ids or pages.
    @Test func searchFindsPrefixesNamesItsPassagesAndSaysWhenItCuts() throws {
        let cli = try sampleLibrary()
        let prefix = try cli.run("search", "desperat*", "--json")
        #expect(prefix.status == 0, "\(prefix.stderr)")
        let hits = try JSONDecoder().decode([Hit].self, from: Data(prefix.stdout.utf8))
        #expect(hits.map(\.title) == ["Walden"])
        #expect(hits.first?.passages == [Hit.PassageHit(id: "p-9e27", page: 16)])

        let all = try cli.run("search", "the")
        let cut = try cli.run("search", "the", "--limit", "1")
        #expect(cut.status == 0)
        #expect(cut.stdout.split(separator: "\n").count == 2, "one hit: its path and its excerpt")
        #expect(all.stdout.split(separator: "\n").count > 2)
        #expect(cut.stderr.contains("showing the first 1 matches; more match. Pass --limit N"))
        #expect(!all.stderr.contains("more match"))
    }

    /// Issue #22: list --json had no author, status, rating, ISBN or tags.
    @Test func listJSONCarriesTheBookFields() throws {
        struct Book: Decodable { var title: String; var author: String?; var isbn: String?; var status: String?
            var tags: [String]; var current_page: Int?; var date_added: String? }
        let cli = try sampleLibrary()
        let books = try JSONDecoder().decode([Book].self, from: Data(try cli.run("list", "books", "--json").stdout.utf8))
        let walden = try #require(books.first { $0.title == "Walden" })
        #expect(walden.author == "Henry David Thoreau" && walden.isbn == "0691096120" && walden.status == "reading")
        #expect(walden.tags == ["nature", "philosophy"] && walden.current_page == 120 && walden.date_added == "2025-11-02")
    }

    /// Issue #22: `shelf export /proc/foo` printed `Error Domain=NSCocoaErrorDomain Code=4 …`.
    @Test func errorsAreOneLineWithoutFoundationInternals() throws {
        let cli = try sampleLibrary()
        let export = try cli.run("export", "/proc/foo/bar")
        #expect(export.status != 0)
        #expect(!export.stderr.contains("Domain="), "\(export.stderr)")
        #expect(export.stderr.contains("cannot export to /proc/foo/bar"))
        #expect(export.stderr.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").count == 1)

        let version = try cli.run("--version")
        #expect(version.status == 0 && version.stdout.hasPrefix("0.") && version.stdout.contains("(commit "), "\(version)")
    }

    @Test func trashListRestoreAndEmpty() throws {
        let cli = try sampleLibrary()
        let store = try LibraryStore.open(at: cli.library)
        let walden = ItemID("0b6f1f8e-1c1e-4d5e-9a53-6f1b0e2a7c01")
        let moby = ItemID("7e41b0c3-2f5d-4a9b-b6e8-1c2d3e4f5a03")
        try store.write { try $0.trash(id: walden); try $0.trash(id: moby) }
        #expect(try cli.run("trash", "list").stdout.contains("Books/Walden - Henry David Thoreau.md"))
        #expect(try listed(cli, "books").count == 2)

        let restored = try cli.run("trash", "restore", walden.rawValue)
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(try listed(cli, "books").contains { $0.path == "Books/Walden - Henry David Thoreau.md" })
        #expect(try cli.run("trash", "restore", walden.rawValue).status != 0)

        #expect(try cli.run("trash", "empty").stdout.containsPhrase("1 item"))
        #expect(try cli.run("trash", "list").stdout.contains("empty"))
    }

    @Test func statusReportsCountsAndPendingInvalidSaves() throws {
        let cli = try sampleLibrary()
        let store = try LibraryStore.open(at: cli.library)
        let path = "Books/Meditations - Marcus Aurelius.md"
        let record = try #require(try store.record(atPath: path))
        try store.write {
            _ = try $0.saveDraft(id: record.item.id, bytes: Data("---\ncurrent_page: many\n---\n".utf8),
                                 diagnostics: [Diagnostic(line: 2, message: "current_page: \"many\" is not a whole number")])
        }
        let status = try cli.run("status")
        #expect(status.stdout.containsPhrase("4 books, 3 notes"))
        #expect(status.stdout.contains(path))
        #expect(status.stdout.contains("line 2: current_page"))
        let json = try cli.run("status", "--json")
        #expect(json.stdout.contains("\"drafts\""))
        #expect(json.stdout.contains("not a whole number"))
    }

    @Test func namesAreLinkSafeAndOldNamesMoveOnlyOnRequest() throws {
        let cli = try ShelfCLI()
        try cli.run("init", cli.library.path)
        let csv = cli.scratch.appendingPathComponent("series.csv")
        try Data("Title,Author\n\"Dune (Dune, #1)\",Frank Herbert\n".utf8).write(to: csv)
        #expect(try cli.run("import", csv.path).status == 0)
        #expect(try cli.run("show", "Books/Dune (Dune, 1) - Frank Herbert.md").status == 0, "a new name is a valid link target")

        let bare = try cli.run("rename")
        #expect(bare.status != 0 && bare.stderr.contains("shelf rename --safe-names"), "one line saying what to write: \(bare)")
        let nothing = try cli.run("rename", "--safe-names")
        #expect(nothing.status == 0 && nothing.stdout.contains("already a valid link target"), "\(nothing)")
    }
}
