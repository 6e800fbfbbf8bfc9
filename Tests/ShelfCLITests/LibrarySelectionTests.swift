import Foundation
import Testing
import TestTraits

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

    /// Issue #22: the home folder came from the password database, so `HOME=/tmp/h shelf init`
    /// rewrote the real user's config.
    @Test func homeAndXDGConfigHomeDecideWhereConfigAndTheDefaultLibraryLive() throws {
        var cli = try ShelfCLI()
        let home = cli.scratch.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        cli.environment["HOME"] = home.path
        cli.environment.removeValue(forKey: "XDG_CONFIG_HOME")
        let created = try cli.run("init")
        #expect(created.status == 0, "\(created.stderr)")
        #expect(FileManager.default.fileExists(atPath: home.appendingPathComponent("Shelf/shelf.sqlite").path))
        let config = try String(contentsOf: home.appendingPathComponent(".config/shelf/config.toml"), encoding: .utf8)
        #expect(config.contains(home.appendingPathComponent("Shelf").path))

        let xdg = cli.scratch.appendingPathComponent("xdg")
        cli.environment["XDG_CONFIG_HOME"] = xdg.path
        #expect(try cli.run("init", cli.library.path).status == 0)
        #expect(try String(contentsOf: xdg.appendingPathComponent("shelf/config.toml"), encoding: .utf8).contains(cli.library.path))
        cli.environment["XDG_CONFIG_HOME"] = "relative/config"
        #expect(try cli.run("status", "--json").stdout.contains(home.appendingPathComponent("Shelf").path),
                "a relative XDG_CONFIG_HOME is ignored, as the spec says")
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
