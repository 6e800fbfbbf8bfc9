import Foundation

/// The tables of a PostgreSQL cloud, and the SQL an administrator runs to make a place for one.
///
/// Each record of the cloud protocol is a row written once (a device's registration, a batch
/// under its number, content under its hash) or kept newest-wins (a device's acknowledgement),
/// so no device ever holds a lock across calls. The keys serve what a cloud of a million items
/// and a hundred devices is asked: a device's batches after its cursor (the batch key), bytes
/// by hash (the content key), bytes unused since a time (`content_used`), the snapshot that
/// covers most (`snapshot_covered`).
enum PostgresSchema {
    /// Bumped when the tables change; a cloud made by a newer Shelf says so in its identity.
    /// 2: the `cloud_key` table and `device.body`, for encrypted clouds.
    static let version = 2

    /// Creates the tables in `schema` (quoted) where they do not exist yet.
    static func tables(in schema: String) -> [String] {
        [
            """
            CREATE TABLE IF NOT EXISTS \(schema).shelf_cloud (
                singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
                format integer NOT NULL, cloud text NOT NULL, created timestamptz NOT NULL,
                schema_version integer NOT NULL)
            """,
            """
            CREATE TABLE IF NOT EXISTS \(schema).device (
                id text PRIMARY KEY, name text NOT NULL, joined timestamptz NOT NULL,
                retired boolean NOT NULL DEFAULT false, body bytea)
            """,
            """
            CREATE TABLE IF NOT EXISTS \(schema).cloud_key (
                kind text NOT NULL, number bigint NOT NULL, body bytea NOT NULL, PRIMARY KEY (kind, number))
            """,
            """
            CREATE TABLE IF NOT EXISTS \(schema).batch (
                device text NOT NULL, number bigint NOT NULL, seq bigserial NOT NULL,
                changes integer NOT NULL, body bytea NOT NULL, PRIMARY KEY (device, number))
            """,
            """
            CREATE TABLE IF NOT EXISTS \(schema).ack (
                device text PRIMARY KEY, number bigint NOT NULL, body bytea NOT NULL)
            """,
            """
            CREATE TABLE IF NOT EXISTS \(schema).snapshot (
                device text NOT NULL, number bigint NOT NULL, covered bigint NOT NULL, body bytea NOT NULL,
                PRIMARY KEY (device, number))
            """,
            "CREATE INDEX IF NOT EXISTS snapshot_covered ON \(schema).snapshot (covered DESC, number DESC)",
            """
            CREATE TABLE IF NOT EXISTS \(schema).content (
                hash text PRIMARY KEY, bytes bytea NOT NULL, used timestamptz NOT NULL)
            """,
            "CREATE INDEX IF NOT EXISTS content_used ON \(schema).content (used)",
        ]
    }

    /// The SQL that makes a cloud's place on a server: a login role `name` and a schema of the
    /// same name that it owns and no one else may use. Run by an administrator (a superuser or
    /// a role with CREATEROLE) in the database the cloud lives in; the role's password is set
    /// apart, so it never sits in a file or a shell history.
    static func setupSQL(cloud name: String) -> String {
        let role = quoted(name)
        return """
            -- A Shelf cloud named \(name): run as an administrator in the cloud's database, then set
            -- the role's password with psql's \\password \(role).
            CREATE ROLE \(role) LOGIN;
            CREATE SCHEMA \(role) AUTHORIZATION \(role);
            REVOKE ALL ON SCHEMA \(role) FROM PUBLIC;
            -- Shelf's statements are short: compiling them (JIT) costs more than running them.
            ALTER ROLE \(role) SET jit = off;
            -- Devices link with: shelf cloud link postgres://\(name)@HOST/DATABASE

            """
    }

    /// `name` as a quoted SQL identifier (`"a ""b"""`).
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// The name inside a quoted identifier.
    static func unquoted(_ quoted: String) -> String {
        String(quoted.dropFirst().dropLast()).replacingOccurrences(of: "\"\"", with: "\"")
    }

    /// The `NOTIFY` channel of the cloud in `schema`: a name, never data.
    /// Named after the schema where that fits PostgreSQL's 63-byte names, else after its hash.
    static func channel(forSchema schema: String) -> String {
        let named = "shelf_cloud_" + schema
        return named.utf8.count <= 63 ? named : "shelf_cloud_" + String(ContentHash(of: Data(schema.utf8)).rawValue.prefix(32))
    }

    /// `undefined_table` and `invalid_schema_name`: the cloud's tables are not there.
    static func isMissingRelation(_ sqlState: String?) -> Bool {
        sqlState == "42P01" || sqlState == "3F000"
    }

    static func missingSchemaError(_ location: String) -> CloudError {
        .server(location: location, reason: "its schema does not exist; an administrator creates it with the SQL `shelf cloud setup-sql NAME` prints")
    }
}
