import Foundation
import Logging
import PostgresNIO

/// A cloud in a PostgreSQL schema: the cloud protocol's records as rows, for many devices and
/// many people on one server (`shelf cloud link postgres://USER@HOST/DB`).
///
/// Each cloud lives in its own schema, owned by the role its devices log in as and reachable
/// by no other, so one cloud's credentials cannot read or write another's: isolation rests on
/// privileges no client can change. Every statement names the schema (no `search_path`), so
/// the data connection works through a pooler in transaction mode.
///
/// A pull never skips a change: cursors count each device's batches, and only that device
/// appends to its own numbers, one after another, so a batch that commits late cannot be
/// passed over by a cursor that read a later one. A repeated push (a device that died after
/// the server stored its batch) finds its number taken and changes nothing. After each push
/// the device sends a `NOTIFY` that carries no data (any role may listen on any channel): the
/// other devices wake, and read what is new through their own schema's privileges.
///
/// An encrypted cloud stores the same rows, their bodies and bytes sealed (``CloudSealing``),
/// device names only inside the sealed `body`, and content under keyed addresses; the `NOTIFY`
/// stays empty.
public final class PostgresCloud: CloudBackend {
    public let location: String
    public var changeFolders: [URL] { [] }
    public let sealing: CloudSealing
    let session: PostgresSession
    /// The cloud's schema, quoted for SQL.
    private let schema: String
    /// The `LISTEN`/`NOTIFY` channel of this cloud.
    let channel: String
    /// Where `LISTEN` connects: the server itself, also when data goes through a pooler.
    private let listenConfiguration: PostgresConnection.Configuration
    private let logger: Logger

    /// `schemaName`: the schema holding the cloud (usually the role's own).
    init(session: PostgresSession, schemaName: String, listenConfiguration: PostgresConnection.Configuration,
         logger: Logger, sealing: CloudSealing = .plain) {
        self.session = session
        self.listenConfiguration = listenConfiguration
        self.logger = logger
        self.sealing = sealing
        location = session.location
        schema = PostgresSchema.quoted(schemaName)
        channel = PostgresSchema.channel(forSchema: schemaName)
    }

    public func sealed(by sealing: CloudSealing) -> any CloudBackend {
        PostgresCloud(session: session, schemaName: PostgresSchema.unquoted(schema), listenConfiguration: listenConfiguration,
                      logger: logger, sealing: sealing)
    }

    /// The SQL an administrator runs to make a place for the cloud `name` (its role and
    /// schema). Names are plain lower-case identifiers, so they read the same in a URL, in SQL
    /// and in psql.
    public static func setupSQL(cloud name: String) throws -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789_".utf8)
        guard (1...63).contains(name.utf8.count), name.utf8.allSatisfy(allowed.contains), name.first?.isNumber == false else {
            throw CloudLocationError(description: "`\(name)` cannot name a cloud: use 1 to 63 lower-case letters, digits and `_`, starting with a letter (for example `anna_books`)")
        }
        return PostgresSchema.setupSQL(cloud: name)
    }

    // MARK: Identity

    public func identity() throws -> CloudIdentity {
        let rows = try cloudQuery("SELECT format, cloud, created FROM \(unescaped: schema).shelf_cloud", whenMissing: {
            try self.schemaExists() ? CloudError.empty(location: self.location) : PostgresSchema.missingSchemaError(self.location)
        })
        guard let row = rows.first else { throw CloudError.empty(location: location) }
        let (format, cloud, created) = try decode(row, as: (Int, String, Date).self)
        guard format <= CloudIdentity.currentFormat else {
            throw CloudError.newerFormat(location: location, format: format)
        }
        return CloudIdentity(format: format, cloud: cloud, created: created)
    }

    public func create(_ identity: CloudIdentity, keys: [KeyEnvelope]) throws {
        guard try schemaExists() else { throw PostgresSchema.missingSchemaError(location) }
        let envelopes = try keys.map { ($0, try CloudCoding.encoder.encode($0)) }
        let stored = try call {
            try session.transaction { transaction -> Bool in
                for statement in PostgresSchema.tables(in: schema) { try transaction.query(PostgresQuery(unsafeSQL: statement)) }
                for (envelope, body) in envelopes {
                    try transaction.query("""
                        INSERT INTO \(unescaped: schema).cloud_key (kind, number, body)
                        VALUES (\(envelope.kind.rawValue), \(envelope.number), \(body)) ON CONFLICT DO NOTHING
                        """)
                }
                let inserted = try transaction.query("""
                    INSERT INTO \(unescaped: schema).shelf_cloud (format, cloud, created, schema_version)
                    VALUES (\(identity.format), \(identity.cloud), \(identity.created), \(PostgresSchema.version))
                    ON CONFLICT DO NOTHING
                    """)
                return inserted.metadata.rows == 1
            }
        }
        guard stored else { throw CloudError.notACloud(location: location) }
    }

    // MARK: Keys

    public func keyEnvelopes() throws -> [KeyEnvelope] {
        try cloudQuery("SELECT kind, number, body FROM \(unescaped: schema).cloud_key").compactMap { row in
            let (kind, number, body) = try decode(row, as: (String, Int64, Data).self)
            // One stored under another's kind or number is not it.
            guard let envelope = try? CloudCoding.decoder.decode(KeyEnvelope.self, from: body),
                  envelope.kind.rawValue == kind, envelope.number == number else { return nil }
            return envelope
        }
    }

    public func putPassphraseEnvelope(_ envelope: KeyEnvelope) throws {
        let body = try CloudCoding.encoder.encode(envelope)
        try call {
            try session.transaction { transaction in
                try transaction.query("""
                    INSERT INTO \(unescaped: schema).cloud_key (kind, number, body)
                    VALUES (\(envelope.kind.rawValue), \(envelope.number), \(body)) ON CONFLICT DO NOTHING
                    """)
                try transaction.query("""
                    DELETE FROM \(unescaped: schema).cloud_key WHERE kind = \(envelope.kind.rawValue) AND number < \(envelope.number)
                    """)
            }
        }
    }

    // MARK: Devices

    /// An encrypted cloud's device rows keep the name only in the sealed `body`.
    public func register(_ device: DeviceRecord) throws {
        guard sealing.isSealed else {
            try cloudQuery("""
                INSERT INTO \(unescaped: schema).device (id, name, joined) VALUES (\(device.id), \(device.name), \(device.joined))
                ON CONFLICT (id) DO NOTHING
                """)
            return
        }
        let body = try sealing.encode(device, at: .device(device.id))
        try cloudQuery("""
            INSERT INTO \(unescaped: schema).device (id, name, joined, body) VALUES (\(device.id), '', \(device.joined), \(body))
            ON CONFLICT (id) DO NOTHING
            """)
    }

    public func devices() throws -> CloudDevices {
        guard sealing.isSealed else {
            return CloudDevices(readable: try cloudQuery("SELECT id, name, joined FROM \(unescaped: schema).device ORDER BY joined, id").map { row in
                let (id, name, joined) = try decode(row, as: (String, String, Date).self)
                return DeviceRecord(id: id, name: name, joined: joined)
            })
        }
        var devices = CloudDevices()
        for row in try cloudQuery("SELECT id, body FROM \(unescaped: schema).device ORDER BY joined, id") {
            let (id, body) = try decode(row, as: (String, Data?).self)
            try devices.add(id) {
                let device = try open(DeviceRecord.self, body ?? Data(), at: .device(id), what: "device \(id)")
                guard device.id == id else { throw CloudError.damaged(path: "\(location) device \(id)", reason: "it holds device \(device.id)") }
                return device
            }
        }
        return devices
    }

    public func retire(_ device: DeviceID) throws {
        try cloudQuery("UPDATE \(unescaped: schema).device SET retired = true WHERE id = \(device)")
    }

    public func retiredDevices() throws -> Set<DeviceID> {
        Set(try cloudQuery("SELECT id FROM \(unescaped: schema).device WHERE retired").map { try decode($0, as: String.self) })
    }

    // MARK: Change logs

    public func append(_ batch: ChangeBatch) throws {
        let body = try sealing.encode(batch, at: .batch(batch.device, batch.number))
        try call {
            try session.transaction { transaction in
                try transaction.query("""
                    INSERT INTO \(unescaped: schema).batch (device, number, changes, body)
                    VALUES (\(batch.device), \(batch.number), \(batch.changes.count), \(body))
                    ON CONFLICT (device, number) DO NOTHING
                    """)
                try transaction.query("SELECT pg_notify(\(channel), '')")
            }
        }
    }

    public func batch(of device: DeviceID, number: Int64) throws -> ChangeBatch? {
        try cloudQuery("""
            SELECT device, number, octet_length(body), CASE WHEN octet_length(body) <= \(CloudInputRules.maxBatchBytes) THEN body END
            FROM \(unescaped: schema).batch WHERE device = \(device) AND number = \(number)
            """).first.map(decodeBatch)
    }

    /// A batch row (device, number, size, body or NULL when too large): a row too large or not
    /// a batch comes unreadable, so the engine holds its device back and says why instead of
    /// failing every round.
    private func decodeBatch(_ row: PostgresRow) throws -> ChangeBatch {
        let (device, number, size, body) = try decode(row, as: (String, Int64, Int32, Data?).self)
        let what = "\(location) batch \(number) of device \(device)"
        guard let body else {
            return .unreadable(device: device, number: number,
                               reason: "\(CloudError.tooLarge(path: what, bytes: Int(size), limit: CloudInputRules.maxBatchBytes))")
        }
        let batch: ChangeBatch
        do {
            batch = try sealing.decode(ChangeBatch.self, from: body, at: .batch(device, number))
        } catch let error as CloudSealingError where sealing.isSealed {
            return .unreadable(device: device, number: number, reason: "\(CloudError.damaged(path: what, reason: "\(error)"))")
        } catch {
            return .unreadable(device: device, number: number,
                               reason: "\(CloudError.damaged(path: what, reason: "it is not a batch Shelf wrote"))")
        }
        guard batch.device == device, batch.number == number else {
            return .unreadable(device: device, number: number,
                               reason: "\(CloudError.damaged(path: what, reason: "it holds batch \(batch.number) of \(batch.device)"))")
        }
        return batch
    }

    public func batches(after cursor: CloudCursor, limit: Int) throws -> (batches: [ChangeBatch], cursor: CloudCursor) {
        let devices = Array(cursor.positions.keys)
        let positions = devices.map { cursor.positions[$0]! }
        // Each device's next batches by its primary key, then the oldest pushes first.
        let rows = try cloudQuery("""
            SELECT b.device, b.number, octet_length(b.body),
                   CASE WHEN octet_length(b.body) <= \(CloudInputRules.maxBatchBytes) THEN b.body END
            FROM \(unescaped: schema).device d
            LEFT JOIN unnest(\(devices)::text[], \(positions)::bigint[]) AS c(device, after) ON c.device = d.id
            CROSS JOIN LATERAL (
                SELECT device, number, body, changes, seq FROM \(unescaped: schema).batch
                WHERE device = d.id AND number > COALESCE(c.after, 0) ORDER BY number LIMIT \(limit)
            ) b
            ORDER BY b.seq LIMIT \(limit)
            """)
        var batches: [ChangeBatch] = []
        var next = cursor
        var count = 0
        for row in rows where count < limit {
            let batch = try decodeBatch(row)
            batches.append(batch)
            next[batch.device] = batch.number
            count += batch.changes.count
        }
        return (batches, next)
    }

    public func removeBatches(of device: DeviceID, through number: Int64) throws -> Int {
        try cloudQuery("DELETE FROM \(unescaped: schema).batch WHERE device = \(device) AND number <= \(number)").metadata.rows ?? 0
    }

    // MARK: Acknowledgements and snapshots

    public func acknowledge(_ ack: DeviceAck) throws {
        let body = try sealing.encode(ack, at: .acknowledgement(ack.device, ack.number))
        try cloudQuery("""
            INSERT INTO \(unescaped: schema).ack AS a (device, number, body) VALUES (\(ack.device), \(ack.number), \(body))
            ON CONFLICT (device) DO UPDATE SET number = excluded.number, body = excluded.body WHERE excluded.number > a.number
            """)
    }

    public func acknowledgements() throws -> [DeviceID: DeviceAck] {
        var acks: [DeviceID: DeviceAck] = [:]
        for row in try cloudQuery("SELECT device, number, body FROM \(unescaped: schema).ack") {
            let (device, number, body) = try decode(row, as: (String, Int64, Data).self)
            // One that does not read is passed over: that device's reading holds removals back.
            guard let ack = try? open(DeviceAck.self, body, at: .acknowledgement(device, number), what: "an acknowledgement"),
                  ack.device == device, ack.number == number else { continue }
            acks[ack.device] = ack
        }
        return acks
    }

    public func putSnapshot(_ snapshot: CloudSnapshot) throws {
        let body = try sealing.encode(snapshot, at: .snapshot(snapshot.device, snapshot.number))
        try cloudQuery("""
            INSERT INTO \(unescaped: schema).snapshot (device, number, covered, body)
            VALUES (\(snapshot.device), \(snapshot.number), \(snapshot.batchesBehind), \(body))
            ON CONFLICT (device, number) DO NOTHING
            """)
    }

    /// The newest of the snapshots that read as what their row says (a row claiming more than
    /// its snapshot covers would pass over newer ones).
    public func latestSnapshot() throws -> CloudSnapshot? {
        let rows = try cloudQuery("""
            SELECT device, number, covered, body FROM \(unescaped: schema).snapshot
            WHERE octet_length(body) <= \(CloudInputRules.maxSnapshotBytes) ORDER BY covered DESC, number DESC LIMIT 3
            """)
        for row in rows {
            let (device, number, covered, body) = try decode(row, as: (String, Int64, Int64, Data).self)
            if let snapshot = try? open(CloudSnapshot.self, body, at: .snapshot(device, number), what: "a snapshot"),
               snapshot.device == device, snapshot.number == number, snapshot.batchesBehind == covered {
                return snapshot
            }
        }
        return nil
    }

    // MARK: Content

    public func putContent(_ bytes: Data, hash: ContentHash, by device: DeviceID) throws {
        let address = sealing.address(of: hash)
        let stored = try sealing.seal(bytes, at: .content(address))
        try cloudQuery("""
            INSERT INTO \(unescaped: schema).content AS c (hash, bytes, used) VALUES (\(address.rawValue), \(stored), now())
            ON CONFLICT (hash) DO UPDATE SET used = now()
            """)
    }

    public func content(_ hash: ContentHash) throws -> Data? {
        let address = sealing.address(of: hash)
        guard let row = try cloudQuery("SELECT bytes FROM \(unescaped: schema).content WHERE hash = \(address.rawValue)").first else {
            return nil
        }
        let bytes: Data
        do {
            bytes = try sealing.open(try decode(row, as: Data.self), at: .content(address))
        } catch let error as CloudSealingError {
            throw CloudError.damaged(path: "\(location) content \(address)", reason: "\(error)")
        }
        guard ContentHash(of: bytes) == hash else {
            throw CloudError.damaged(path: "\(location) content \(hash)", reason: "the bytes do not match their hash")
        }
        return bytes
    }

    public func hasContent(_ hash: ContentHash) throws -> Bool {
        try !cloudQuery("SELECT 1 FROM \(unescaped: schema).content WHERE hash = \(sealing.address(of: hash).rawValue)").isEmpty
    }

    /// The candidates come from the `content_used` index and are checked against `keeping`
    /// here, so a cloud of a million items never sends its whole keep-list to the server.
    public func removeContent(except keeping: Set<ContentHash>, unusedSince: Date) throws -> Int {
        let unused = try cloudQuery("SELECT hash FROM \(unescaped: schema).content WHERE used < \(unusedSince)")
            .map { ContentHash(rawValue: try decode($0, as: String.self)) }
        let keeping = Set(keeping.map(sealing.address))
        let doomed = unused.filter { !keeping.contains($0) }.map(\.rawValue)
        guard !doomed.isEmpty else { return 0 }
        return try cloudQuery("""
            DELETE FROM \(unescaped: schema).content WHERE hash = ANY(\(doomed)::text[]) AND used < \(unusedSince)
            """).metadata.rows ?? 0
    }

    public func watchNews(_ news: @escaping @Sendable () -> Void) -> (any CloudNewsWatch)? {
        PostgresNews(configuration: listenConfiguration, channel: channel, logger: logger, news: news)
    }

    // MARK: Plumbing

    private func schemaExists() throws -> Bool {
        let name = PostgresSchema.unquoted(schema)
        return try !cloudQuery("SELECT 1 FROM pg_namespace WHERE nspname = \(name)").isEmpty
    }

    /// Runs `query`; see ``call(whenMissing:_:)``.
    @discardableResult
    private func cloudQuery(_ query: PostgresQuery, whenMissing: (() throws -> CloudError)? = nil) throws -> PostgresQueryResult {
        try call(whenMissing: whenMissing) { try session.query(query) }
    }

    /// Runs `body` (statements or a transaction), turning server failures into `CloudError`s: a
    /// missing table or schema becomes what `whenMissing` says (a cloud not created yet), any
    /// other failure `.server` (sync waits and retries).
    private func call<T>(whenMissing: (() throws -> CloudError)? = nil, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PostgresCloudError where PostgresSchema.isMissingRelation(error.sqlState) {
            throw try whenMissing?() ?? CloudError.empty(location: location)
        } catch let error as PostgresCloudError {
            throw CloudError.server(location: location, reason: error.description)
        }
    }

    private func decode<each Column: PostgresDecodable>(_ row: PostgresRow, as type: (repeat each Column).Type) throws -> (repeat each Column) {
        do {
            return try row.decode(type)
        } catch {
            throw CloudError.damaged(path: location, reason: "a row does not decode: \(String(describing: error).prefix(200))")
        }
    }

    /// The record in a row's `body`, opened as stored at `place`.
    private func open<T: Decodable>(_ type: T.Type, _ body: Data, at place: CloudPlace, what: String) throws -> T {
        do {
            return try sealing.decode(type, from: body, at: place)
        } catch {
            throw CloudError.damaged(path: "\(location) \(what)", reason: "\(error)")
        }
    }
}
