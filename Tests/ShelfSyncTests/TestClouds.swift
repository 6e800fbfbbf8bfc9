import Foundation
import Logging
import PostgresNIO
import TestSupport
@testable import ShelfSync

/// PostgreSQL clouds on the test run's throw-away server: one login role and database for the
/// suite, a schema of that role's per test.
enum TestClouds {
    static let role = "shelf_tests"
    static let password = "shelf-tests-" + UUID().uuidString
    static let database = "shelf_tests"

    /// The role and database, made once per run.
    private static let prepared: Result<PostgresServer, any Error> = Result {
        let server = try PostgresServer.shared()
        try server.makeDatabase(database)
        try server.makeRole(role, password: password, ownSchema: false)
        try server.execute("ALTER ROLE \(role) PASSWORD '\(password)'")
        return server
    }

    static func makeSchema(_ schema: String) throws {
        let server = try prepared.get()
        try server.execute("CREATE SCHEMA \(schema) AUTHORIZATION \(role); REVOKE ALL ON SCHEMA \(schema) FROM PUBLIC",
                           database: database)
    }

    static func postgres(schema: String) throws -> PostgresCloud {
        let server = try prepared.get()
        let configuration = PostgresConnection.Configuration(host: server.host, port: server.port, username: role,
                                                             password: password, database: database, tls: .disable)
        let location = "postgres://\(role)@\(server.host):\(server.port)/\(database)?cloud=\(schema)"
        let logger = Logger(label: "shelf.tests.postgres")
        return PostgresCloud(session: PostgresSession(configuration: configuration, location: location, logger: logger),
                             schemaName: schema, listenConfiguration: configuration, logger: logger)
    }
}
