import Foundation
import Testing
import TestSupport
import TestTraits

/// Two devices sharing a PostgreSQL cloud through the CLI and their mounts, set up as the
/// README says: an administrator runs `shelf cloud setup-sql`, each device keeps the password
/// in `~/.pgpass` and links with a `postgres://` address.
@Suite(.serialized, .scratchFolders) struct PostgresCloudCommandTests {
    static let database = "shelf_cli_tests"

    /// A new cloud on the test run's server, made with the SQL `shelf cloud setup-sql` prints:
    /// its address and its role's password.
    func makeCloud(with cli: ShelfCLI, on server: PostgresServer? = nil) throws -> (address: String, password: String) {
        let server = try server ?? PostgresServer.shared()
        let role = "cli_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        let sql = try cli.run("cloud", "setup-sql", role)
        try #require(sql.status == 0, "\(sql)")
        let password = "secret-" + UUID().uuidString
        try server.makeCloud(role: role, setupSQL: sql.stdout, password: password, database: Self.database)
        return ("postgres://\(role)@\(server.host):\(server.port)/\(Self.database)?sslmode=require", password)
    }

    /// Gives `cli`'s user the password in `~/.pgpass`, as libpq's users keep it.
    func storePassword(_ password: String, of address: String, for cli: ShelfCLI) throws {
        let url = try #require(URLComponents(string: address))
        let line = "\(url.host!):\(url.port!):\(Self.database):\(url.user!):\(password)\n"
        let file = cli.scratch.appendingPathComponent(".pgpass")
        try Data(line.utf8).write(to: file)
        chmod(file.path, 0o600)
    }

    @Test func aSaveOnOneMountIsReadableOnTheOtherWithinASecondWithoutPolling() throws {
        let a = try ShelfCLI()
        let b = try ShelfCLI()
        let (address, password) = try makeCloud(with: a)
        for (cli, name) in [(a, "laptop"), (b, "desk")] {
            try storePassword(password, of: address, for: cli)
            try cli.run("init", cli.library.path)
            let linked = try cli.run("cloud", "link", address, "--device", name)
            try #require(linked.status == 0, "\(linked)")
        }
        // Rounds a minute apart: what arrives within ten seconds came by the server's push.
        try a.withMount("--poll-interval", "60") { mountA in
            try b.withMount("--poll-interval", "60") { mountB in
                try ShelfCLI.expectArrives(Data("Written on the laptop.\n".utf8), at: "Notes/Pushed.md",
                                           from: mountA, on: mountB, within: .seconds(10))
                try ShelfCLI.expectArrives(Data("Edited on the desk.\n".utf8), at: "Notes/Pushed.md",
                                           from: mountB, on: mountA, within: .seconds(10))
                let status = try a.run("cloud", "status")
                #expect(status.status == 0 && status.stdout.contains(address), "\(status)")
                #expect(!status.stdout.contains(password))
            }
        }
        // The password is in ~/.pgpass only: not in the library (its settings, its logs) nor the config.
        for cli in [a, b] {
            for folder in [cli.library, cli.scratch.appendingPathComponent("config")] {
                for path in FileManager.default.subpaths(atPath: folder.path) ?? [] {
                    let bytes = FileManager.default.contents(atPath: folder.appendingPathComponent(path).path) ?? Data()
                    #expect(bytes.range(of: Data(password.utf8)) == nil, "\(path) holds the password")
                }
            }
        }
        #expect(FileManager.default.fileExists(atPath: a.library.appendingPathComponent("logs/mount.log").path))
    }

    @Test func aMountStartsWhileTheServerIsDownServesTheLibraryAndSendsItsEditsOnceItIsBack() throws {
        let server = try PostgresServer()
        defer { server.remove() }
        let a = try ShelfCLI()
        let (address, password) = try makeCloud(with: a, on: server)
        try storePassword(password, of: address, for: a)
        try a.run("init", a.library.path)
        try #require(try a.run("cloud", "link", address, "--device", "laptop").status == 0)
        server.stop()

        let note = Data("Written while the server was down.\n".utf8)
        try a.withMount("--poll-interval", "0.5") { mountpoint in
            try note.write(to: URL(fileURLWithPath: mountpoint + "/Notes/Offline.md"))
            #expect(FileManager.default.contents(atPath: mountpoint + "/Notes/Offline.md") == note)
            #expect(try eventually(within: .seconds(10)) {
                let status = try a.run("cloud", "status").stdout
                return status.contains("Online:   no") && status.contains("cannot reach") && status.contains("Waiting to upload: 1 item")
            })
            try server.start()
            #expect(try eventually(within: .seconds(30)) {
                let status = try a.run("cloud", "status").stdout
                return status.contains("Online:   yes") && status.contains("Waiting to upload: 0 items")
            })
        }
        // Another device finds the edit in the cloud.
        let b = try ShelfCLI()
        try storePassword(password, of: address, for: b)
        try b.run("init", b.library.path)
        try #require(try b.run("cloud", "link", address, "--device", "desk").status == 0)
        let shown = try b.run("show", "Notes/Offline.md")
        #expect(shown.status == 0 && shown.stdout == String(decoding: note, as: UTF8.self), "\(shown)")
    }

    @Test func anAddressWithAPasswordIsRefusedAndNothingIsLinked() throws {
        let cli = try ShelfCLI()
        try cli.run("init", cli.library.path)
        let server = try PostgresServer.shared()
        let linked = try cli.run("cloud", "link", "postgres://anna:hunter2-secret@\(server.host):\(server.port)/books")
        #expect(linked.status != 0)
        #expect(linked.stderr.contains("~/.pgpass") && !linked.stderr.contains("hunter2"), "\(linked)")
        #expect(try cli.run("cloud", "status").stderr.contains("not linked"))
    }
}
