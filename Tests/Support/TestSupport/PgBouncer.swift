import Foundation

/// Debian's PgBouncer in transaction mode in front of a ``PostgresServer``: a client's
/// statements share server connections with others', and only between `BEGIN` and `COMMIT` is
/// one connection the client's, as on a managed PostgreSQL behind a pooler.
///
/// Stopped by ``remove()``, or by a ``ServerWatchdog`` once the test process is gone.
public final class PgBouncer: Sendable {
    public let host = "127.0.0.1"
    public let port: Int
    public let folder: URL

    /// Pools connections to `server` for `user`, who logs in with `password`.
    public init(for server: PostgresServer, user: String, password: String) throws {
        guard FileManager.default.fileExists(atPath: "/usr/sbin/pgbouncer") else {
            throw HarnessError("PgBouncer is not installed (/usr/sbin/pgbouncer is missing): run scripts/install-deps")
        }
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("shelf-pgbouncer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        LeftoverRecords.servers.record(folder.path)
        port = try FreePort.next()
        func file(_ name: String) -> String { folder.appendingPathComponent(name).path }
        try Data("\"\(user)\" \"\(password)\"\n".utf8).write(to: URL(fileURLWithPath: file("userlist.txt")))
        let settings = """
            [databases]
            * = host=\(server.host) port=\(server.port)
            [pgbouncer]
            listen_addr = \(host)
            listen_port = \(port)
            unix_socket_dir =
            auth_type = scram-sha-256
            auth_file = \(file("userlist.txt"))
            pool_mode = transaction
            default_pool_size = 4
            server_tls_sslmode = disable
            pidfile = \(file("pgbouncer.pid"))
            logfile = \(file("pgbouncer.log"))

            """
        try Data(settings.utf8).write(to: URL(fileURLWithPath: file("pgbouncer.ini")))
        try PostgresServer.giveToPostgres(folder)
        try ServerWatchdog.cleanUp("kill $(cat '\(file("pgbouncer.pid"))')", record: folder.path)
        try PostgresServer.asPostgres("/usr/sbin/pgbouncer", ["-d", file("pgbouncer.ini")])
        guard eventually(within: .seconds(10), { FileManager.default.fileExists(atPath: file("pgbouncer.pid")) }) else {
            throw HarnessError("pgbouncer did not write its pid file: see \(file("pgbouncer.log"))")
        }
    }

    public func remove() {
        let pidFile = folder.appendingPathComponent("pgbouncer.pid")
        if let text = try? String(contentsOf: pidFile, encoding: .utf8), let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
            kill(pid, SIGTERM)
        }
        try? FileManager.default.removeItem(at: folder)
        LeftoverRecords.servers.forget(folder.path)
    }
}
