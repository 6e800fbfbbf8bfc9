import Foundation
import Testing

/// How commands find their library, and the one-line errors when they cannot.
@Suite(.scratchFolders) struct LibrarySelectionTests {
    @Test func initRemembersTheLibraryForLaterCommands() throws {
        let cli = try ShelfCLI()
        let created = try cli.run("init", cli.library.path)
        #expect(created.status == 0, "\(created.stderr)")
        let config = try String(contentsOf: cli.scratch.appendingPathComponent("config/shelf/config.toml"), encoding: .utf8)
        #expect(config.contains(cli.library.path))
        let listed = try cli.run("list", "--json")
        #expect(listed.status == 0, "\(listed.stderr)")
        // The remembered library is the new, empty one: the whole output is an empty JSON array.
        let items = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [Any]
        #expect(items?.isEmpty == true, "\(listed.stdout)")
    }

    @Test func flagBeatsEnvironmentBeatsConfig() throws {
        var cli = try ShelfCLI()
        let first = cli.scratch.appendingPathComponent("first").path
        let second = cli.scratch.appendingPathComponent("second").path
        let third = cli.scratch.appendingPathComponent("third").path
        try cli.run("init", first)
        try cli.run("init", "--no-remember", second)
        try cli.run("init", "--no-remember", third)
        #expect(try cli.run("status", "--json").stdout.contains("\"library\" : \"\(first)\""))
        cli.environment["SHELF_LIBRARY"] = second
        #expect(try cli.run("status", "--json").stdout.contains("\"library\" : \"\(second)\""))
        #expect(try cli.run("status", "--json", "--library", third).stdout.contains("\"library\" : \"\(third)\""))
    }

    @Test func missingLibraryFolderNamesTheFolderAndTheFix() throws {
        let cli = try ShelfCLI()
        let gone = cli.scratch.appendingPathComponent("moved-away").path
        let result = try cli.run("list", "--library", gone)
        #expect(result.status != 0)
        #expect(result.stderr.contains(gone))
        #expect(result.stderr.contains("shelf init"))
        #expect(result.stderr.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").count == 1)
    }

    @Test func aFolderThatIsNotALibraryIsRefused() throws {
        let cli = try ShelfCLI()
        let plain = cli.scratch.appendingPathComponent("plain")
        try FileManager.default.createDirectory(at: plain, withIntermediateDirectories: true)
        let result = try cli.run("list", "--library", plain.path)
        #expect(result.status != 0)
        #expect(result.stderr.contains("not a Shelf library"))
    }

    @Test func noLibrarySelectedSaysHowToChooseOne() throws {
        let cli = try ShelfCLI()
        let result = try cli.run("list")
        #expect(result.status != 0)
        #expect(result.stderr.contains("shelf init"))
        #expect(result.stderr.contains("--library"))
    }

    @Test func aBrokenConfigLineIsReportedWithItsLineNumber() throws {
        let cli = try ShelfCLI()
        let config = cli.scratch.appendingPathComponent("config/shelf")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try "# my config\nlibrary = /no/quotes\n".write(to: config.appendingPathComponent("config.toml"), atomically: true, encoding: .utf8)
        let result = try cli.run("list")
        #expect(result.status != 0)
        #expect(result.stderr.contains("line 2"))
    }
}
