import Foundation
import Logging
import PostgresNIO
import ShelfStore
import Testing
import TestDevices
import TestSupport
import TestTraits
@testable import ShelfSync

/// What only a PostgreSQL cloud has: TLS, a pooler, privileges between clouds, a server that
/// restarts or kills connections. The cloud behaviour every backend shares runs in
/// SyncEngineTests and PlainFileSyncTests against both.
@Suite(.scratchFolders) struct PostgresCloudTests {
    @Test func verifyFullAcceptsTheServersCertificateAndRefusesAStrangersCA() throws {
        let server = try PostgresServer.shared()
        let verified = try TestClouds.makeCloud(settings: "sslmode=verify-full&sslrootcert=\(server.certificates.authority.path)")
        let devices = try Devices(address: verified.address, password: verified.password)
        let a = try devices.device("a")
        let b = try devices.device("b")
        try a.write("Notes/Over TLS.md", "encrypted on the way\n")
        try devices.settle(a, b)
        #expect(try b.text("Notes/Over TLS.md") == "encrypted on the way\n")
        #expect(try encryptedConnections(of: verified.address.user, on: server) == ["t"])

        // `require` encrypts without a CA to check against.
        let required = try TestClouds.makeCloud(settings: "sslmode=require")
        let requiredDevices = try Devices(address: required.address, password: required.password)
        let c = try requiredDevices.device("c")
        try c.sync()
        #expect(try encryptedConnections(of: required.address.user, on: server) == ["t"])

        // A CA that did not sign the server's certificate: no connection, and a reason.
        var stranger = verified.address
        stranger.rootCertificate = server.certificates.otherAuthority.path
        let store = try devices.library("stranger")
        let error = try #require(throws: (any Error).self) {
            try CloudLinking.link(store, to: try stranger.cloud(environment: ["PGPASSWORD": verified.password]), deviceName: "stranger")
        }
        #expect("\(error)".lowercased().contains("certificate"), "\(error)")
        #expect(try store.cloudLink() == nil)
    }

    /// `t` for each of `role`'s connections that uses TLS, `f` for each that does not.
    func encryptedConnections(of role: String, on server: PostgresServer) throws -> [String] {
        try server.execute("SELECT DISTINCT ssl FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) WHERE usename = '\(role)'")
            .split(separator: "\n").map(String.init)
    }

    @Test func whatKeepsALinkFromWorkingIsSaidWithWhatToDo() throws {
        let server = try PostgresServer.shared()
        let cloud = try TestClouds.makeCloud()
        try server.execute("CREATE ROLE no_schema_\(cloud.address.user) LOGIN PASSWORD 'pw'")
        let nowhere = try FreePort.next()
        let folder = try TemporaryFolder()
        let cases: [(address: String, environment: [String: String], says: String)] = [
            (cloud.address.location, ["PGPASSWORD": "wrong"], "check the role's password"),
            (cloud.address.location, ["HOME": folder.url.path], "PGPASSWORD, or add HOST:PORT:DATABASE:USER:PASSWORD to ~/.pgpass"),
            (cloud.address.location.replacingOccurrences(of: "/\(TestClouds.database)", with: "/no_such_db"),
             ["PGPASSWORD": cloud.password], "check the database name"),
            ("postgres://no_schema_\(cloud.address.user)@\(server.host):\(server.port)/\(TestClouds.database)?sslmode=disable",
             ["PGPASSWORD": "pw"], "setup-sql"),
            ("postgres://\(cloud.address.user)@\(server.host):\(nowhere)/\(TestClouds.database)?sslmode=disable",
             ["PGPASSWORD": cloud.password], "is PostgreSQL running"),
        ]
        for (index, attempt) in cases.enumerated() {
            let store = try LibraryStore.create(at: folder.child("library-\(index)"))
            let error = try #require(throws: (any Error).self) {
                try CloudLinking.link(store, to: try PostgresAddress(attempt.address).cloud(environment: attempt.environment),
                                    deviceName: "d")
            }
            #expect("\(error)".contains(attempt.says), "\(attempt.address): \(error)")
            #expect(try store.cloudLink() == nil)
        }
    }

    @Test func oneCloudsCredentialsCannotReadOrWriteAnothers() throws {
        let server = try PostgresServer.shared()
        let mine = try TestClouds.makeCloud()
        let theirs = try TestClouds.makeCloud()
        let theirDevices = try Devices(address: theirs.address, password: theirs.password)
        let owner = try theirDevices.device("owner")
        try owner.write("Notes/Private.md", "only for my cloud\n")
        try owner.sync()

        // Through Shelf: my role, their cloud's schema.
        var intruder = theirs.address
        intruder.user = mine.address.user
        let cloud = try intruder.cloud(environment: ["PGPASSWORD": mine.password])
        for attempt in [{ _ = try cloud.identity() },
                        { _ = try cloud.batches(after: CloudCursor(), limit: 100) },
                        { try cloud.putContent(Data("planted\n".utf8), hash: ContentHash(of: Data("planted\n".utf8)), by: "intruder") }] {
            let error = try #require(throws: (any Error).self) { try attempt() }
            // Refused for want of privilege (insufficient_privilege), not for any other failure.
            // (The cloud's error carries the server's SQLSTATE in its words.)
            #expect("\(error)".contains("(SQLSTATE 42501)"), "\(error)")
        }
        // Straight SQL with my credentials: no reading, no writing, no granting myself access.
        let schema = theirs.address.cloud
        for statement in ["SELECT count(*) FROM \(schema).batch",
                          "DELETE FROM \(schema).content",
                          "GRANT USAGE ON SCHEMA \(schema) TO \(mine.address.user)",
                          "ALTER TABLE \(schema).batch DISABLE ROW LEVEL SECURITY"] {
            let error = try #require(throws: HarnessError.self, "\(statement)") {
                try server.execute(statement, database: TestClouds.database, user: mine.address.user, password: mine.password)
            }
            // psql with VERBOSITY=verbose writes `ERROR:  SQLSTATE: message`: a syntax error would be 42601.
            #expect("\(error)".contains("ERROR:  42501:"), "\(statement): \(error)")
        }
        // Their cloud is as it was.
        let newcomer = try theirDevices.device("newcomer")
        try theirDevices.settle(newcomer)
        #expect(try newcomer.files().keys.sorted() == ["Notes/Private.md"])
    }

    @Test func theDataConnectionWorksThroughPgBouncerInTransactionMode() throws {
        let server = try PostgresServer.shared()
        let cloud = try TestClouds.makeCloud()
        let bouncer = try PgBouncer(for: server, user: cloud.address.user, password: cloud.password)
        defer { bouncer.remove() }
        var pooled = cloud.address
        pooled.port = bouncer.port
        pooled.listenHost = server.host
        pooled.listenPort = server.port
        let devices = try Devices(address: pooled, password: cloud.password)
        let a = try devices.device("a")
        let b = try devices.device("b")
        for round in 1...5 {
            try a.write("Notes/Pooled.md", "round \(round) from a\n")
            try b.write("Notes/B \(round).md", "from b\n")
            try devices.settle(a, b)
        }
        #expect(try a.files() == b.files())
        #expect(try b.text("Notes/Pooled.md") == "round 5 from a\n")
        let log = try String(contentsOf: bouncer.folder.appendingPathComponent("pgbouncer.log"), encoding: .utf8)
        #expect(log.contains("login attempt: db=\(TestClouds.database) user=\(cloud.address.user)"), "the devices connected through the pooler")
    }

    @Test func aServerDownAtStartRestartedAndKillingConnectionsLosesAndDoublesNothing() throws {
        let server = try PostgresServer()
        defer { server.remove() }
        let cloud = try TestClouds.makeCloud(on: server)
        let devices = try Devices(address: cloud.address, password: cloud.password)
        let names = ["a", "b", "c"]
        let all = try names.map { try devices.device($0) }
        server.stop()

        // The server is down when syncing starts: the devices go on, and say why they are offline.
        let runners = all.map { SyncRunner(engine: $0.engine, interval: 0.2, logger: Logger(label: "shelf.tests.sync")) }
        runners.forEach { $0.start() }
        defer { runners.forEach { $0.stop() } }
        try all[0].write("Notes/Written offline.md", "while the server was down\n")
        #expect(try eventually(within: .seconds(10)) {
            let status = try all[0].engine.status()
            return status?.online == false && status?.error?.contains("cannot reach") == true
        })
        try server.start()

        // A stream of edits on all three; the server restarts and kills every connection meanwhile.
        for round in 0..<30 {
            for (device, name) in zip(all, names) {
                try device.write("Notes/\(name) \(round % 10).md", "\(name), round \(round)\n")
            }
            if round == 10 { try server.restart() }
            if round == 20 { try server.terminateConnections(of: cloud.address.user) }
            Thread.sleep(forTimeInterval: 0.05)
        }
        var expected: [String: Data] = ["Notes/Written offline.md": Data("while the server was down\n".utf8)]
        for name in names {
            for note in 0..<10 { expected["Notes/\(name) \(note).md"] = Data("\(name), round \(20 + note)\n".utf8) }
        }
        // Beyond the statement deadline, the backstop for a query sent as the server went away
        // that never completes (PostgresSession.finish; its closed connection frees it sooner).
        let converged = try eventually(within: .seconds(90)) {
            try all.allSatisfy { try $0.files() == expected }
        }
        #expect(converged, "every device ends with each note's last version, once")
        #expect(try all[0].engine.status()?.online == true)
    }

    @Test func aStatementTimeoutIsReportedAndSyncResumesAfterIt() throws {
        let server = try PostgresServer.shared()
        let cloud = try TestClouds.makeCloud()
        let devices = try Devices(address: cloud.address, password: cloud.password)
        let a = try devices.device("a")
        let b = try devices.device("b")
        let role = cloud.address.user
        try server.execute("ALTER ROLE \(role) SET statement_timeout = '300ms'")
        try server.terminateConnections(of: role)
        try a.write("Notes/Waiting.md", "sent once the log is free\n")

        // An administrator's long transaction holds the cloud's log: reading it waits past the timeout.
        let administrator = try PostgresConnection.connect(
            on: PostgresConnection.defaultEventLoopGroup.any(),
            configuration: .init(host: server.host, port: server.port, username: "postgres", password: server.superuserPassword,
                                 database: TestClouds.database, tls: .disable),
            id: 99, logger: Logger(label: "shelf.tests.administrator")).wait()
        defer { _ = try? administrator.close().wait() }
        _ = try administrator.query("BEGIN", logger: Logger(label: "shelf.tests.administrator")).wait()
        _ = try administrator.query("LOCK TABLE \(unescaped: cloud.address.cloud).batch IN ACCESS EXCLUSIVE MODE",
                                    logger: Logger(label: "shelf.tests.administrator")).wait()
        let failed = try #require(throws: (any Error).self) { try a.sync() }
        #expect("\(failed)".contains("statement timeout"), "\(failed)")
        #expect(try a.engine.status()?.error?.contains("statement timeout") == true)

        _ = try administrator.query("COMMIT", logger: Logger(label: "shelf.tests.administrator")).wait()
        try devices.settle(a, b)
        #expect(try b.text("Notes/Waiting.md") == "sent once the log is free\n")
        #expect(try a.engine.status()?.error == nil)
        try server.execute("ALTER ROLE \(role) RESET statement_timeout")
    }
}
