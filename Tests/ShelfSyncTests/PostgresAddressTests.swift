import Foundation
import Testing
import TestSupport
import TestTraits
@testable import ShelfSync

/// Reading `postgres://` addresses and passwords by libpq's rules.
@Suite(.scratchFolders) struct PostgresAddressTests {
    let home = try! TemporaryFolder()

    @Test func anAddressNamesRoleServerDatabaseCloudAndTLS() throws {
        let address = try PostgresAddress("postgres://anna@db.example.org:6543/books?sslmode=verify-full&cloud=club&listen_host=db-direct",
                                          environment: [:])
        #expect(address.user == "anna")
        #expect(address.host == "db.example.org")
        #expect(address.port == 6543)
        #expect(address.database == "books")
        #expect(address.cloud == "club")
        #expect(address.tls == .verifyFull)
        #expect(address.listenHost == "db-direct")
        // What is stored reads back the same.
        #expect(try PostgresAddress(address.location, environment: [:]) == address)
    }

    @Test func leftOutPartsTakeLibpqsDefaults() throws {
        let address = try PostgresAddress("postgresql://anna@[::1]", environment: [:])
        #expect(address.host == "::1")
        #expect(address.port == 5432)
        #expect(address.database == "anna", "the database is named like the role")
        #expect(address.cloud == "anna", "the cloud is the role's own schema")
        #expect(address.tls == .prefer)
        #expect(address.location == "postgres://anna@[::1]/anna")
        #expect(try PostgresAddress("postgres://db.example.org/books", environment: ["PGUSER": "ben"]).user == "ben")
    }

    @Test func aPasswordInTheAddressIsRefusedWithoutRepeatingIt() throws {
        let error = try #require(throws: CloudLocationError.self) {
            try PostgresAddress("postgres://anna:s3cret-word@db.example.org/books", environment: [:])
        }
        #expect(error.description.contains("PGPASSWORD"))
        #expect(!error.description.contains("s3cret-word"))
    }

    @Test func badAddressesSayWhatIsWrong() throws {
        for (address, says) in [("postgres:///books", "postgres://USER@HOST"),
                                ("postgres://anna@db/books?sslmode=sometimes", "verify-full"),
                                ("postgres://anna@db/books?search_path=x", "search_path"),
                                ("postgres://anna@db/books?listen_port=http", "listen_port")] {
            let error = try #require(throws: CloudLocationError.self) { try PostgresAddress(address, environment: [:]) }
            #expect(error.description.contains(says), "\(address): \(error)")
        }
    }

    @Test func passwordsComeFromTheEnvironmentThenTheFirstMatchingPgpassLine() throws {
        let file = home.url.appendingPathComponent(".pgpass")
        try Data("""
            # comments and short lines are skipped
            other.example.org:*:*:anna:not-this-one
            db.example.org:5432:books:anna:pass\\:with\\\\escapes
            *:*:*:anna:the-wildcard

            """.utf8).write(to: file)
        chmod(file.path, 0o600)
        let address = try PostgresAddress("postgres://anna@db.example.org/books", environment: [:])
        let environment = ["HOME": home.url.path]
        #expect(try PostgresPasswords.password(for: address, environment: environment) == #"pass:with\escapes"#)
        #expect(try PostgresPasswords.password(for: address, environment: environment.merging(["PGPASSWORD": "from-env"]) { $1 }) == "from-env")
        let elsewhere = try PostgresAddress("postgres://anna@db.example.org/films", environment: [:])
        #expect(try PostgresPasswords.password(for: elsewhere, environment: environment) == "the-wildcard")
        let stranger = try PostgresAddress("postgres://carl@db.example.org/books", environment: [:])
        #expect(try PostgresPasswords.password(for: stranger, environment: environment) == nil)

        // PGPASSFILE names another file; one that others may read is refused, as libpq ignores it.
        let shared = home.url.appendingPathComponent("shared-pgpass")
        try Data("*:*:*:*:everyone-sees-this\n".utf8).write(to: shared)
        chmod(shared.path, 0o644)
        let error = try #require(throws: CloudLocationError.self) {
            try PostgresPasswords.password(for: address, environment: ["PGPASSFILE": shared.path])
        }
        #expect(error.description.contains("chmod 600"))
        chmod(shared.path, 0o600)
        #expect(try PostgresPasswords.password(for: address, environment: ["PGPASSFILE": shared.path]) == "everyone-sees-this")
    }

    @Test func setupSQLMakesARoleAndASchemaOnlyItMayUse() throws {
        let sql = try PostgresCloud.setupSQL(cloud: "anna_books")
        #expect(sql.contains(#"CREATE ROLE "anna_books" LOGIN"#))
        #expect(sql.contains(#"CREATE SCHEMA "anna_books" AUTHORIZATION "anna_books""#))
        for bad in ["", "Anna", "anna; DROP TABLE x", "1books", String(repeating: "a", count: 64)] {
            #expect(throws: CloudLocationError.self) { try PostgresCloud.setupSQL(cloud: bad) }
        }
    }
}
