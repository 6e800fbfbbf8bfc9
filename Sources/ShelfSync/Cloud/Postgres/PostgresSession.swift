import Foundation
import Logging
import NIOCore
import PostgresNIO

/// One connection to a PostgreSQL cloud's server, made when first needed and made again after
/// it broke (a server restart, a killed backend, a network that went away).
///
/// The cloud protocol is synchronous (the sync engine runs on its own thread), so each call
/// waits here for the server's reply. Never call it from an event loop or a Swift task. Calls
/// take turns: a transaction's statements must go down one connection, and through a pooler in
/// transaction mode (PgBouncer) only between `BEGIN` and `COMMIT` does that connection stay
/// this client's, so nothing here relies on session state (no named statements; the one `SET`
/// is a speed-up that may be lost).
final class PostgresSession: @unchecked Sendable {
    let configuration: PostgresConnection.Configuration
    /// Where the server is, without secrets: for messages.
    let location: String
    private let logger: Logger
    private let lock = NSLock()
    private var connection: PostgresConnection?
    private static let connectTimeout = TimeAmount.seconds(10)

    init(configuration: PostgresConnection.Configuration, location: String, logger: Logger) {
        var configuration = configuration
        configuration.options.connectTimeout = Self.connectTimeout
        self.configuration = configuration
        self.location = location
        self.logger = logger
    }

    deinit {
        _ = try? connection?.close().wait()
    }

    /// Runs `query` and returns every row.
    @discardableResult
    func query(_ query: PostgresQuery) throws -> PostgresQueryResult {
        try withConnection { try Self.finish($0.query(query, logger: logger), on: $0) }
    }

    /// How long one statement may take before its connection is given up: a server or network
    /// that stops answering must not hold the sync thread (and a mount's unmount) forever.
    static let statementDeadline = TimeAmount.seconds(60)

    /// Waits for `future`; once the connection closes (a server restart, a killed backend),
    /// or past the deadline, the wait fails and the next call connects again. The wait ends
    /// then whatever the statement does: a query sent as the server went away was seen never
    /// to complete, even once its connection was closed.
    static func finish<T>(_ future: EventLoopFuture<T>, on connection: PostgresConnection) throws -> T {
        let answer = connection.eventLoop.makePromise(of: T.self)
        future.cascade(to: answer)
        connection.closeFuture.whenComplete { _ in answer.fail(ClosedUnanswered()) }
        let deadline = connection.eventLoop.scheduleTask(in: statementDeadline) {
            answer.fail(StatementDeadlinePassed(deadline: statementDeadline))
            let closing: EventLoopFuture<Void> = connection.close()
            closing.whenComplete { _ in }
        }
        defer { deadline.cancel() }
        return try answer.futureResult.wait()
    }

    /// A statement whose connection closed before it was answered.
    struct ClosedUnanswered: Error, CustomStringConvertible {
        var description: String { "the connection closed before the server answered; it is made again" }
    }

    /// A statement that had no answer within ``statementDeadline``.
    struct StatementDeadlinePassed: Error, CustomStringConvertible {
        let deadline: TimeAmount
        var description: String {
            "the server did not answer within \(deadline.nanoseconds / 1_000_000_000) s; the connection was closed and is made again"
        }
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    func transaction<T>(_ body: (Transaction) throws -> T) throws -> T {
        try withConnection { connection in
            let transaction = Transaction(connection: connection, logger: logger)
            try transaction.run("BEGIN")
            do {
                let value = try body(transaction)
                try transaction.run("COMMIT")
                return value
            } catch {
                try? transaction.run("ROLLBACK")
                throw error
            }
        }
    }

    /// Statements inside ``transaction(_:)``.
    struct Transaction {
        let connection: PostgresConnection
        let logger: Logger

        @discardableResult
        func query(_ query: PostgresQuery) throws -> PostgresQueryResult {
            try PostgresSession.finish(connection.query(query, logger: logger), on: connection)
        }

        fileprivate func run(_ statement: String) throws {
            _ = try query(PostgresQuery(unsafeSQL: statement))
        }
    }

    func close() {
        lock.withLock {
            _ = try? connection?.close().wait()
            connection = nil
        }
    }

    /// Calls `body` with the connection, connecting first if there is none or the one kept
    /// was closed meanwhile (a server restart, a killed backend); a failure that leaves the
    /// connection unusable drops it, so the next call connects again. Errors come out as
    /// ``PostgresCloudError`` with the server's reason.
    private func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try lock.withLock {
            do {
                if connection?.isClosed == true { connection = nil }
                let connection = try self.connection ?? connect()
                self.connection = connection
                return try body(connection)
            } catch {
                if connection?.isClosed ?? true || !PostgresCloudError.isStatementError(error) {
                    _ = try? connection?.close().wait()
                    connection = nil
                }
                throw PostgresCloudError(error, location: location)
            }
        }
    }

    /// Connects and turns off JIT compilation for the session: a pull is planned as if every
    /// device's log were long, which costs more to compile than to run (a hundred devices: a
    /// fifth of a second against a few milliseconds). Through a pooler the setting may reach
    /// only some server connections; `setup-sql` sets it on the role as well.
    private func connect() throws -> PostgresConnection {
        let connection = try PostgresConnection.connect(on: PostgresConnection.defaultEventLoopGroup.any(),
                                                        configuration: configuration, id: 1, logger: logger).wait()
        _ = try? Self.finish(connection.query("SET jit = off", logger: logger), on: connection)
        return connection
    }
}

/// Why a PostgreSQL cloud call failed, in words for the user with what to do about it: the
/// server's message and its SQLSTATE when it answered, else what happened to the connection.
/// Never holds a password.
struct PostgresCloudError: Error, CustomStringConvertible {
    /// The server's SQLSTATE, when it answered with an error.
    let sqlState: String?
    let description: String

    init(_ error: any Error, location: String) {
        if let known = error as? PostgresCloudError {
            self = known
            return
        }
        guard let error = error as? PSQLError else {
            sqlState = nil
            description = "cannot reach the server: \(error)"
            return
        }
        sqlState = error.serverInfo?[.sqlState]
        if let message = error.serverInfo?[.message] {
            let advice = sqlState.flatMap(Self.advice(forSQLState:)).map { "; \($0)" } ?? ""
            description = "the server answered: \(message) (SQLSTATE \(sqlState ?? "?"))\(advice)"
            return
        }
        switch error.code {
        case .authMechanismRequiresPassword:
            description = "the server asks for a password and none was found: set PGPASSWORD, or add HOST:PORT:DATABASE:USER:PASSWORD to ~/.pgpass (mode 0600)"
        case .sslUnsupported:
            description = "the server does not offer TLS, which the address's sslmode requires: turn on ssl in the server's settings, or link with sslmode=prefer"
        default:
            let underlying = error.underlying.map { "\($0)" } ?? "\(error.code)"
            let refused = underlying.contains("Connection refused")
            description = refused ? "cannot reach the server: nothing accepts connections there (is PostgreSQL running, and listening on that host and port?)"
                                  : "cannot reach the server (\(underlying))"
        }
    }

    /// What to do about the server errors a person can fix.
    private static func advice(forSQLState state: String) -> String? {
        switch state {
        case "28P01", "28000": "check the role's password in PGPASSWORD or ~/.pgpass, and that the role may log in"
        case "3D000": "check the database name at the end of the address"
        case "42501": "this role may not use that schema: link with the cloud's own role, or ask its administrator"
        default: nil
        }
    }

    /// Whether the server refused a statement but the connection goes on (a constraint, a
    /// missing table, a statement timeout), as opposed to a connection that broke.
    static func isStatementError(_ error: any Error) -> Bool {
        (error as? PSQLError)?.code == .server
    }
}
