import Foundation
import TestSupport
import ShelfSync

/// PostgreSQL clouds on the test run's throw-away servers, each made as an administrator
/// would: the SQL `shelf cloud setup-sql` prints, then a password for its role.
public enum TestClouds {
    public static let database = "shelf_tests"

    /// A new cloud on `server` (the shared one by default): its address (with `settings`, no
    /// password) and its role's password.
    public static func makeCloud(on server: PostgresServer? = nil, settings: String = "sslmode=disable") throws -> (address: PostgresAddress, password: String) {
        let server = try server ?? PostgresServer.shared()
        let role = "cloud_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        let password = "pw-" + UUID().uuidString
        try server.makeCloud(role: role, setupSQL: try PostgresCloud.setupSQL(cloud: role), password: password, database: database)
        let address = try PostgresAddress("postgres://\(role)@\(server.host):\(server.port)/\(database)?\(settings)",
                                          environment: [:])
        return (address, password)
    }
}
