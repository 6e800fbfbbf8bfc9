import Foundation
import Synchronization

/// A throw-away PostgreSQL 15 cluster from Debian's packages: `initdb` (which refuses root) as
/// the `postgres` user in a temporary folder, scram-sha-256 over loopback on a free port, TLS
/// with a certificate from a CA made for it.
///
/// Every cluster is stopped and removed by a ``ServerWatchdog`` once the test process is gone,
/// whether its tests passed, failed or crashed; `scripts/test` stops any a watchdog missed
/// through the record in ``LeftoverRecords``.
public final class PostgresServer: @unchecked Sendable {
    public let host = "127.0.0.1"
    public let port: Int
    public let superuserPassword = "postgres-" + UUID().uuidString
    /// The cluster's folder: data, socket, log, certificates.
    public let folder: URL
    public let certificates: TestCertificates
    private var dataFolder: URL { folder.appendingPathComponent("data") }
    private let databaseLock = NSLock()

    static let binaries = "/usr/lib/postgresql/15/bin"
    private static let commandTimeout: Duration = .seconds(60)

    /// The cluster most tests share, started on first use.
    public static func shared() throws -> PostgresServer {
        try sharedServer.withLock { server in
            if server == nil { server = Result { try PostgresServer() } }
            return try server!.get()
        }
    }
    private static let sharedServer = Mutex<Result<PostgresServer, any Error>?>(nil)

    /// A cluster of the caller's own, for tests that restart or stop the server.
    public init() throws {
        guard FileManager.default.fileExists(atPath: "\(Self.binaries)/initdb") else {
            throw HarnessError("PostgreSQL 15 is not installed (\(Self.binaries)/initdb is missing): run scripts/install-deps")
        }
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("shelf-pg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        LeftoverRecords.servers.record(folder.path)
        try ServerWatchdog.cleanUp("runuser -u postgres -- \(Self.binaries)/pg_ctl -D '\(folder.path)/data' -m immediate stop",
                                   record: folder.path)
        port = try FreePort.next()
        certificates = try TestCertificates(in: folder.appendingPathComponent("tls"))
        let passwordFile = folder.appendingPathComponent("superuser-password")
        try Data(superuserPassword.utf8).write(to: passwordFile)
        try Self.giveToPostgres(folder)
        try Self.asPostgres("\(Self.binaries)/initdb", ["-D", dataFolder.path, "-U", "postgres", "--auth=scram-sha-256",
                                                        "--pwfile=\(passwordFile.path)", "-E", "UTF8", "--locale=C", "--no-sync"])
        try FileManager.default.removeItem(at: passwordFile)
        try Data(configuration.utf8).write(to: dataFolder.appendingPathComponent("postgresql.auto.conf"))
        try Data("host all all 127.0.0.1/32 scram-sha-256\n".utf8).write(to: dataFolder.appendingPathComponent("pg_hba.conf"))
        try Self.giveToPostgres(folder)
        try start()
    }

    /// Settings for a server that lives for one test run: no durability, TLS on, loopback only.
    private var configuration: String {
        """
        port = \(port)
        listen_addresses = '127.0.0.1'
        unix_socket_directories = '\(folder.path)'
        fsync = off
        synchronous_commit = off
        full_page_writes = off
        max_connections = 200
        ssl = on
        ssl_cert_file = '\(certificates.serverCertificate.path)'
        ssl_key_file = '\(certificates.serverKey.path)'

        """
    }

    public func start() throws {
        try Self.asPostgres("\(Self.binaries)/pg_ctl", ["-D", dataFolder.path, "-l", folder.appendingPathComponent("log").path,
                                                        "-w", "-t", "30", "start"])
    }

    /// Stops the server (fast shutdown: connections are ended, as on a real server's restart).
    public func stop() {
        _ = try? Self.asPostgres("\(Self.binaries)/pg_ctl", ["-D", dataFolder.path, "-m", "fast", "-w", "-t", "30", "stop"])
    }

    public func restart() throws {
        try Self.asPostgres("\(Self.binaries)/pg_ctl", ["-D", dataFolder.path, "-l", folder.appendingPathComponent("log").path,
                                                        "-m", "fast", "-w", "-t", "30", "restart"])
    }

    /// Stops the server and removes its folder.
    public func remove() {
        stop()
        try? FileManager.default.removeItem(at: folder)
        LeftoverRecords.servers.forget(folder.path)
    }

    /// Runs `sql` with psql and returns what it printed (unaligned, tuples only); a failure's
    /// message carries the SQLSTATE (`ERROR:  42501: …`), so a test can tell why it failed.
    @discardableResult
    public func execute(_ sql: String, database: String = "postgres", user: String = "postgres",
                        password: String? = nil) throws -> String {
        let result = try CommandRunner.run("psql", ["-h", host, "-p", "\(port)", "-U", user, "-d", database,
                                                    "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-v", "VERBOSITY=verbose", "-c", sql],
                                           in: "/", environment: ["PGPASSWORD": password ?? superuserPassword,
                                                                  "PGSSLMODE": "disable", "PATH": "/usr/bin:/bin"],
                                           timeout: Self.commandTimeout)
        guard result.succeeded else { throw HarnessError("psql failed on \(sql.debugDescription): \(result.stderr)") }
        return result.stdout
    }

    /// Creates database `name` unless it exists (tests running side by side may all ask).
    public func makeDatabase(_ name: String) throws {
        databaseLock.lock()
        defer { databaseLock.unlock() }
        guard try execute("SELECT 1 FROM pg_database WHERE datname = '\(name)'").isEmpty else { return }
        try execute("CREATE DATABASE \"\(name)\"")
    }

    /// A cloud's role and schema, made as an administrator makes them: `setupSQL` (what
    /// `shelf cloud setup-sql ROLE` prints) run in `database`, then a password for the role.
    public func makeCloud(role: String, setupSQL: String, password: String, database: String) throws {
        try makeDatabase(database)
        try execute(setupSQL, database: database)
        try execute("ALTER ROLE \"\(role)\" PASSWORD '\(password)'")
    }

    /// Ends every connection of `user` on the server, as an administrator's `pg_terminate_backend` does.
    public func terminateConnections(of user: String) throws {
        try execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '\(user)'")
    }

    // MARK: Running as postgres

    /// Runs `executable` as `postgres`, holding none of this process's descriptors.
    static func asPostgres(_ executable: String, _ arguments: [String]) throws {
        let command = ServerWatchdog.cleanSlate(["runuser", "-u", "postgres", "--", executable] + arguments)
        let result = try CommandRunner.run(command[0], Array(command.dropFirst()), in: "/", timeout: commandTimeout)
        guard result.succeeded else {
            throw HarnessError("\(URL(fileURLWithPath: executable).lastPathComponent) failed: \(result.stderr)\(result.stdout)")
        }
    }

    /// initdb and the server run as `postgres`, which must own their folder.
    static func giveToPostgres(_ folder: URL) throws {
        let result = try CommandRunner.run("chown", ["-R", "postgres:postgres", folder.path], in: "/", timeout: commandTimeout)
        guard result.succeeded else { throw HarnessError("cannot give \(folder.path) to the postgres user: \(result.stderr)") }
    }
}

/// A CA and a server certificate for `localhost`/`127.0.0.1` signed by it, plus a second CA
/// that signed nothing the server has, to show that verification refuses a stranger.
public struct TestCertificates: Sendable {
    public let authority: URL
    public let otherAuthority: URL
    public let serverCertificate: URL
    public let serverKey: URL

    init(in folder: URL) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        func file(_ name: String) -> URL { folder.appendingPathComponent(name) }
        authority = file("ca.crt")
        otherAuthority = file("other-ca.crt")
        serverCertificate = file("server.crt")
        serverKey = file("server.key")
        let names = file("names.ext")
        try Data("subjectAltName=DNS:localhost,IP:127.0.0.1\n".utf8).write(to: names)
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try Self.openssl(["req", "-x509"] + key + ["-keyout", file("ca.key").path, "-out", authority.path,
                                                    "-subj", "/CN=Shelf test CA", "-days", "2"])
        try Self.openssl(["req", "-x509"] + key + ["-keyout", file("other-ca.key").path, "-out", otherAuthority.path,
                                                    "-subj", "/CN=Shelf test CA", "-days", "2"])
        try Self.openssl(["req"] + key + ["-keyout", serverKey.path, "-out", file("server.csr").path, "-subj", "/CN=localhost"])
        try Self.openssl(["x509", "-req", "-in", file("server.csr").path, "-CA", authority.path, "-CAkey", file("ca.key").path,
                          "-CAcreateserial", "-out", serverCertificate.path, "-days", "2", "-extfile", names.path])
        chmod(serverKey.path, 0o600)
    }

    private static func openssl(_ arguments: [String]) throws {
        let result = try CommandRunner.run("openssl", arguments, in: "/", timeout: .seconds(30))
        guard result.succeeded else { throw HarnessError("openssl \(arguments[0]) failed: \(result.stderr)") }
    }
}

/// A loopback TCP port nobody listens on now.
public enum FreePort {
    public static func next() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw HarnessError("cannot open a socket to find a free port") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(socket, pointer, length) == 0 && getsockname(socket, pointer, &length) == 0
            }
        }
        guard bound else { throw HarnessError("cannot bind a loopback socket to find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// What went wrong while setting up a test server.
public struct HarnessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
