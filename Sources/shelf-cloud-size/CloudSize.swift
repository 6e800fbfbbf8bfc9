import ArgumentParser
import Foundation
import Logging
import ShelfSync
import TestSupport
import ShelfSystem

/// The PostgreSQL sizing behind scripts/bench-postgres: a throw-away server's cloud filled to the
/// size of a large shared library (devices, a log nobody compacted, content rows), then each call
/// a device makes to it timed through Shelf's own `PostgresCloud` — the statements it sends, the
/// round trip and the decoding, as a device sees them. Prints one JSON object per call (median,
/// lowest and highest of the runs) and one describing the cloud.
@main
struct CloudSize: ParsableCommand {
    @Option var devices = 100
    @Option(help: "Batches each device has in the log.")
    var batches = 2_000
    @Option(help: "Content rows (about 700 bytes each).")
    var contents = 1_000_000
    @Option(help: "Content rows unused since the compaction cut-off: the candidates a compaction checks.")
    var unused = 10_000
    @Option(help: "Timed calls per statement.")
    var runs = 30

    func run() throws {
        let server = try PostgresServer()
        defer { server.remove() }
        let password = "size-" + UUID().uuidString
        try server.makeCloud(role: "size", setupSQL: try PostgresCloud.setupSQL(cloud: "size"), password: password,
                             database: "shelf_size")
        let address = try PostgresAddress("postgres://size@\(server.host):\(server.port)/shelf_size?sslmode=disable")
        var logger = Logger(label: "shelf.cloud-size")
        logger.logLevel = .error
        let cloud = try address.cloud(environment: ["PGPASSWORD": password], logger: logger)
        try cloud.create(CloudIdentity())
        let fillTime = try ContinuousClock().measure { try fill(server, through: cloud) }
        let size = try server.execute("SELECT pg_total_relation_size('size.content'), pg_total_relation_size('size.batch')",
                                      database: "shelf_size").split(separator: "|").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        report(["cloud": "postgres", "server": try server.execute("SHOW server_version", database: "shelf_size").trimmingCharacters(in: .whitespacesAndNewlines),
                "devices": devices, "batches": devices * batches, "contents": contents, "unused": unused, "runs": runs,
                "content_bytes": size.first ?? 0, "batch_bytes": size.last ?? 0, "fill_seconds": fillTime.timeInterval])

        let names = (1...devices).map { "dev-\($0)" }
        let behind = CloudCursor(positions: Dictionary(uniqueKeysWithValues: names.map { ($0, Int64(batches - 10)) }))
        let caughtUp = CloudCursor(positions: Dictionary(uniqueKeysWithValues: names.map { ($0, Int64(batches)) }))
        let hashes = try server.execute("SELECT hash FROM size.content ORDER BY hash LIMIT 1000", database: "shelf_size")
            .split(separator: "\n").map { ContentHash(rawValue: String($0)) }
        let candidates = Set(try server.execute("SELECT hash FROM size.content WHERE used < now() - interval '1 hour'", database: "shelf_size")
            .split(separator: "\n").map { ContentHash(rawValue: String($0)) })
        let cutOff = Date().addingTimeInterval(-3_600)
        var stored: Int64 = 0

        try time("pull, every device 10 batches behind", expect: { $0 == devices * 10 }) {
            try cloud.batches(after: behind, limit: SyncEngine.pullLimit).batches.count
        }
        try time("idle pull, nothing new", expect: { $0 == 0 }) { try cloud.batches(after: caughtUp, limit: SyncEngine.pullLimit).batches.count }
        var next = 0
        try time("content by hash", expect: { $0 > 0 }) {
            next += 1
            return try cloud.content(hashes[next % hashes.count])?.count ?? 0
        }
        try time("content unused since a time (compaction's candidates, all still needed)", expect: { $0 == 0 }) {
            try cloud.removeContent(except: candidates, unusedSince: cutOff)
        }
        try time("storing a batch", expect: { _ in true }) {
            stored += 1
            try cloud.append(ChangeBatch(device: "dev-1", number: Int64(batches) + stored, changes: []))
            return 1
        }
        try time("the latest snapshot", expect: { $0 == 1 }) { try cloud.latestSnapshot() == nil ? 0 : 1 }
    }

    /// Devices, their logs, content rows and a snapshot per device, written by the server itself
    /// in chunks (each statement within the harness's deadline), then analysed as autovacuum would.
    private func fill(_ server: PostgresServer, through cloud: PostgresCloud) throws {
        func sql(_ text: String) throws { try server.execute(text, database: "shelf_size") }
        try sql("INSERT INTO size.device (id, name, joined) SELECT 'dev-' || i, 'device ' || i, now() FROM generate_series(1, \(devices)) i")
        // A batch body of a few hundred bytes that decodes as an empty batch.
        for first in stride(from: 1, through: devices, by: 10) {
            try sql("""
                INSERT INTO size.batch (device, number, changes, body)
                SELECT 'dev-' || d, n, 1, convert_to(json_build_object('device', 'dev-' || d, 'number', n, 'changes', '[]'::json,
                                                                      'padding', repeat('x', 300))::text, 'UTF8')
                FROM generate_series(\(first), \(min(first + 9, devices))) d, generate_series(1, \(batches)) n ORDER BY n, d
                """)
        }
        let chunk = 100_000
        for first in stride(from: 1, through: contents, by: chunk) {
            try sql("""
                INSERT INTO size.content (hash, bytes, used)
                SELECT encode(sha256(b), 'hex'), b, CASE WHEN i <= \(unused) THEN now() - interval '1 day' ELSE now() END
                FROM (SELECT i, convert_to(repeat(md5(i::text), 22), 'UTF8') AS b FROM generate_series(\(first), \(min(first + chunk - 1, contents))) i) c
                """)
        }
        for device in 1...devices {
            try cloud.putSnapshot(CloudSnapshot(device: "dev-\(device)", number: 1, cursor: CloudCursor(positions: ["dev-\(device)": Int64(batches)]),
                                                changes: [], history: []))
        }
        try sql("VACUUM ANALYZE")
    }

    /// Times `call` `runs` times after one warm-up, checking what it returned each time.
    private func time(_ statement: String, expect: (Int) -> Bool, _ call: () throws -> Int) throws {
        _ = try call()
        var times: [Double] = []
        for _ in 0..<runs {
            var result = 0
            let elapsed = try ContinuousClock().measure { result = try call() }
            guard expect(result) else { throw ValidationError("\(statement): unexpected result \(result); the cloud is not what was filled") }
            times.append(elapsed.timeInterval * 1000)
        }
        times.sort()
        report(["statement": statement, "median_ms": times[times.count / 2], "min_ms": times[0], "max_ms": times[times.count - 1]])
    }

    private func report(_ object: [String: Any]) {
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
    }
}
