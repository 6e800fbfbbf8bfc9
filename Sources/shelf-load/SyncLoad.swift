import ArgumentParser
import Foundation
import Logging
import ShelfModel
import ShelfStore
import ShelfSync
import TestSupport

/// The sync load behind scripts/bench-sync-load: many devices (libraries, each with its own
/// sync engine and runner, all at once in this process) editing one cloud, each its own notes
/// and its own line of shared notes (edits that merge). Then every device, offline, rewrites
/// one note at once (edits that truly conflict). Prints one JSON object: edits per second until
/// every device holds the same files, push latency, server CPU per edit, edits lost, and
/// conflict copies where edits merged and where they conflicted.
@main
struct SyncLoad: ParsableCommand {
    enum Cloud: String, ExpressibleByArgument { case folder, postgres }

    @Option(help: "folder, or postgres (a throw-away cluster this run starts and stops).")
    var cloud: Cloud = .postgres
    @Option var devices = 20
    @Option(help: "Edits per device.")
    var edits = 500
    @Option(help: "Notes every device edits, each its own line of them (merged).")
    var shared = 10
    @Option(help: "Seconds between a probe save on the first device and the next (push latency).")
    var probeEvery = 0.2

    func run() throws {
        let scratch = try TemporaryFolder()
        let place = try CloudPlace(cloud, in: scratch)
        defer { place.remove() }
        let fleet = try (0..<devices).map { index in
            try LoadDevice(index: index, folder: scratch.child("device-\(index)"), cloud: try place.backend())
        }
        // Every note exists everywhere before the load: edits then meet in merges, not in creations.
        try fleet[0].seed(shared: shared, devices: devices)
        for device in fleet { try device.engine.sync() }
        try fleet[0].engine.sync()
        let runners = fleet.map { SyncRunner(engine: $0.engine, interval: 1, logger: Logger(label: "shelf.load")) }
        runners.forEach { $0.start() }

        let cpuBefore = place.serverCPUSeconds()
        let start = Date()
        let probes = LatencyProbe(writer: fleet[0], readers: Array(fleet.dropFirst()), every: probeEvery)
        probes.start()
        // One thread per device, all editing while all sync (a pool would run a couple at a time).
        let failures = EditFailures()
        let editors = fleet.map { device in
            let thread = Thread {
                do {
                    try device.edit(count: edits, shared: shared)
                } catch {
                    failures.add("device \(device.index): \(error)")
                }
                failures.finished.signal()
            }
            thread.name = "shelf-load.device-\(device.index)"
            return thread
        }
        editors.forEach { $0.start() }
        for _ in editors { failures.finished.wait() }
        let editsDone = Date()
        probes.stop()
        let converged = try waitForConvergence(fleet, timeout: Double(ProcessInfo.processInfo.environment["CONVERGE_TIMEOUT"] ?? "600")!)
        let elapsed = Date().timeIntervalSince(start)
        let cpu = place.serverCPUSeconds().flatMap { after in cpuBefore.map { after - $0 } }
        runners.forEach { $0.stop() }
        let files = try fleet[0].files()
        let lost = fleet.flatMap { $0.lostEdits(in: files) }
        let mergedCopies = files.keys.filter(Self.isConflictCopy).count

        // All at once, from one base: the newest text kept (the last device's, saved last), every
        // other in a conflict copy.
        for device in fleet { try device.save("Notes/Contested.md") { _ in "device \(device.index) says so\n" } }
        let settled = try settle(fleet)
        let contested = try fleet[0].files()
        let contestedLost = fleet.filter { !contested.values.contains(Data("device \($0.index) says so\n".utf8)) }.count
        let newestWon = contested["Notes/Contested.md"] == Data("device \(devices - 1) says so\n".utf8)
        let totalEdits = devices * edits
        let report: [String: Any] = [
            "cloud": cloud.rawValue, "devices": devices, "edits": totalEdits,
            "converged": converged, "seconds_editing": editsDone.timeIntervalSince(start), "seconds_to_converge": elapsed,
            "edits_per_second": Double(totalEdits) / elapsed,
            "push_latency_p50": probes.percentile(0.5) as Any, "push_latency_p99": probes.percentile(0.99) as Any,
            "latency_samples": probes.samples.count, "probe_timeouts": probes.timeouts,
            "edit_errors": failures.count, "edit_error_examples": failures.examples,
            "server_cpu_ms_per_edit": cpu.map { $0 * 1000 / Double(totalEdits) } as Any,
            "lost_edits": lost.count, "lost_examples": Array(lost.prefix(5)),
            "conflict_copies_of_merged_edits": mergedCopies,
            "contested_settled": settled, "contested_lost": contestedLost, "contested_newest_won": newestWon,
            "contested_conflict_copies": contested.keys.filter(Self.isConflictCopy).count - mergedCopies,
        ]
        let json = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
        print(String(decoding: json, as: UTF8.self))
        if !converged || !lost.isEmpty || mergedCopies > 0 || !settled || contestedLost > 0 || !newestWon
            || failures.count > 0 || probes.timeouts > 0 { throw ExitCode(1) }
    }

    static func isConflictCopy(_ path: String) -> Bool { path.contains(" (conflict ") }

    /// Syncs device after device until a whole round moves nothing and all hold the same files.
    private func settle(_ fleet: [LoadDevice]) throws -> Bool {
        for _ in 0..<10 {
            var moved = 0
            for device in fleet {
                let report = try device.engine.sync()
                moved += report.pulled + report.pushed
            }
            let first = try fleet[0].files()
            if try moved == 0 && fleet.allSatisfy({ try $0.files() == first }) { return true }
        }
        return false
    }

    /// Waits until every device holds the same files; false when `timeout` passes first.
    private func waitForConvergence(_ fleet: [LoadDevice], timeout: TimeInterval) throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            let first = try fleet[0].files()
            if try fleet.dropFirst().allSatisfy({ try $0.files() == first }) { return true }
            Thread.sleep(forTimeInterval: 0.5)
        } while Date() < deadline
        let first = try fleet[0].files()
        for device in fleet.dropFirst() {
            let files = try device.files()
            for path in Set(first.keys).union(files.keys) where first[path] != files[path] {
                FileHandle.standardError.write(Data("differs on device \(device.index): \(path): \(first[path].map { String(decoding: $0, as: UTF8.self) }.debugDescription) vs \(files[path].map { String(decoding: $0, as: UTF8.self) }.debugDescription)\n".utf8))
            }
        }
        return false
    }
}

/// The cloud the devices share: a folder, or a cloud (role and schema, made with the SQL
/// `shelf cloud setup-sql` prints) on a cluster of this run's own.
struct CloudPlace {
    private let folder: URL?
    private let server: PostgresServer?
    private let address: PostgresAddress?
    private let password = "load-" + UUID().uuidString

    init(_ kind: SyncLoad.Cloud, in scratch: TemporaryFolder) throws {
        switch kind {
        case .folder:
            folder = scratch.child("cloud")
            server = nil
            address = nil
        case .postgres:
            let server = try PostgresServer()
            try server.makeCloud(role: "load", setupSQL: try PostgresCloud.setupSQL(cloud: "load"), password: password,
                                 database: "shelf_load")
            address = try PostgresAddress("postgres://load@\(server.host):\(server.port)/shelf_load?sslmode=disable")
            self.server = server
            folder = nil
        }
    }

    func backend() throws -> any CloudBackend {
        if let address { return try address.cloud(environment: ["PGPASSWORD": password]) }
        return FolderCloud(folder: folder!)
    }

    /// CPU the server has used: the postmaster's own and its reaped backends', and the live
    /// backends'; nil for a folder, which has no server.
    func serverCPUSeconds() -> Double? {
        guard let server,
              let text = try? String(contentsOf: server.folder.appendingPathComponent("data/postmaster.pid"), encoding: .utf8),
              let postmaster = text.split(separator: "\n").first.flatMap({ Int($0) }) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var total = 0.0
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int(entry), let fields = ProcessStat(pid: pid) else { continue }
            if pid == postmaster { total += fields.ownAndReaped } else if fields.parent == postmaster { total += fields.own }
        }
        return total / ticks
    }

    func remove() { server?.remove() }
}

/// The CPU fields of `/proc/PID/stat`, in clock ticks.
struct ProcessStat {
    let parent: Int
    let own: Double
    let ownAndReaped: Double

    init?(pid: Int) {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // Fields after the command name: state(3) ppid(4) … utime(14) stime(15) cutime(16) cstime(17).
        let fields = text[text.index(after: close)...].split(separator: " ").map(String.init)
        guard fields.count > 14, let parent = Int(fields[1]) else { return nil }
        let numbers = fields[11...14].compactMap(Double.init)
        guard numbers.count == 4 else { return nil }
        self.parent = parent
        own = numbers[0] + numbers[1]
        ownAndReaped = numbers.reduce(0, +)
    }
}

/// One device: a library linked to the cloud with every item's bytes downloaded as it arrives.
struct LoadDevice: @unchecked Sendable {
    let index: Int
    let store: LibraryStore
    let engine: SyncEngine
    /// What this device wrote last to each note, to check that nothing was lost.
    private let lastWritten = LastWritten()

    init(index: Int, folder: URL, cloud: any CloudBackend) throws {
        self.index = index
        store = try LibraryStore.create(at: folder)
        try CloudLinking.link(store, to: cloud, deviceName: "device-\(index)", downloadAll: true)
        // SHELF_LOAD_TRACE=1: every resolution of concurrent edits on stderr (ChangeApplier's trace).
        var logger = Logger(label: "shelf.load.device-\(index)")
        if ProcessInfo.processInfo.environment["SHELF_LOAD_TRACE"] != nil { logger.logLevel = .debug }
        engine = SyncEngine(store: store, cloud: cloud, logger: logger)
    }

    /// The shared notes, a line per device with a line between (changes next to each other
    /// would not merge), and the note every device rewrites at the end.
    func seed(shared: Int, devices: Int) throws {
        let lines = (0..<devices).map { "device \($0): nothing yet\n---\n" }.joined()
        for note in 0..<shared { try save("Notes/Shared \(note).md") { _ in lines } }
        try save("Notes/Contested.md") { _ in "nobody yet\n" }
    }

    /// `count` edits: most rewrite one of this device's own notes, some its line of a shared note.
    func edit(count: Int, shared: Int) throws {
        var random = SeededGenerator(seed: UInt64(index + 1))
        for edit in 0..<count {
            let roll = random.next() % 100
            if roll < 10 && shared > 0 {
                let path = "Notes/Shared \(random.next() % UInt64(shared)).md"
                let line = "device \(index): edit \(edit)"
                try save(path) { text in
                    var lines = text.components(separatedBy: "\n")
                    lines[2 * index] = line
                    return lines.joined(separator: "\n")
                }
                lastWritten.set(path, line)
            } else {
                let path = "Notes/Device \(index) note \(edit % 10).md"
                let text = "device \(index), edit \(edit)\n"
                try save(path) { _ in text }
                lastWritten.set(path, text)
            }
        }
    }

    /// Rewrites the note at `path` from its current text in one transaction, as a save through
    /// the mount would on top of the version it read.
    func save(_ path: String, _ change: (String) -> String) throws {
        try store.write { writer in
            let record = try writer.record(atPath: path)
            let text = change(record?.text ?? "")
            _ = try writer.saveFile(Data(text.utf8), of: record?.item.id ?? .generate(), kind: .note, at: path,
                                    basedOn: record?.version, modified: Date())
        }
    }

    func files() throws -> [String: Data] {
        var files: [String: Data] = [:]
        try store.forEachFile { files[$0] = $1 }
        return files
    }

    /// What this device wrote last that `files` (the converged library) does not hold: its own
    /// notes' texts, its lines of shared notes.
    func lostEdits(in files: [String: Data]) -> [String] {
        let texts = files.mapValues { String(decoding: $0, as: UTF8.self) }
        return lastWritten.all().compactMap { path, written in
            let kept = path.hasPrefix("Notes/Shared ")
                ? texts[path]?.components(separatedBy: "\n").contains(written) == true
                : texts[path] == written
            return kept ? nil : "device \(index), \(path): \(written.debugDescription)"
        }
    }
}

/// The edits that threw, counted (a load that fails edits measures nothing), and when each
/// device's editing ended.
final class EditFailures: @unchecked Sendable {
    private let lock = NSLock()
    private var failures: [String] = []
    let finished = DispatchSemaphore(value: 0)
    func add(_ failure: String) { lock.withLock { failures.append(failure) } }
    var count: Int { lock.withLock { failures.count } }
    var examples: [String] { lock.withLock { Array(failures.prefix(5)) } }
}

final class LastWritten: @unchecked Sendable {
    private let lock = NSLock()
    private var texts: [String: String] = [:]
    func set(_ path: String, _ text: String) { lock.withLock { texts[path] = text } }
    func all() -> [String: String] { lock.withLock { texts } }
}

/// Saves a probe note on one device at a steady pace and notes when each other device first
/// holds it: the time from a save to every other device having it, pushes and pulls included.
final class LatencyProbe: @unchecked Sendable {
    private let writer: LoadDevice
    private let readers: [LoadDevice]
    private let every: TimeInterval
    private let lock = NSLock()
    private var written: [(path: String, at: Date)] = []
    private var seen: [Set<String>]
    private(set) var samples: [TimeInterval] = []
    /// Probes (per reading device) that had not arrived a minute after saving stopped.
    private var missedProbes = 0
    private var isStopped = false
    private let done = DispatchGroup()

    init(writer: LoadDevice, readers: [LoadDevice], every: TimeInterval) {
        self.writer = writer
        self.readers = readers
        self.every = every
        seen = Array(repeating: [], count: readers.count)
    }

    func start() {
        for job in [write, watch] {
            done.enter()
            Thread { job(); self.done.leave() }.start()
        }
    }

    /// Stops saving probes, waits for the ones saved to arrive everywhere (at most a minute).
    func stop() {
        lock.withLock { isStopped = true }
        done.wait()
    }

    private func write() {
        var number = 0
        while !lock.withLock({ isStopped }) {
            let path = "Notes/Probe \(number).md"
            try? writer.store.write { writer in
                _ = try writer.saveFile(Data("probe \(number)\n".utf8), of: .generate(), kind: .note, at: path, basedOn: nil, modified: Date())
            }
            lock.withLock { written.append((path, Date())) }
            number += 1
            Thread.sleep(forTimeInterval: every)
        }
    }

    private func watch() {
        // Set once saving stops: the probes saved by then get a minute to arrive.
        var deadline: Date?
        while true {
            let probes = lock.withLock { written }
            var missing = 0
            for (reader, device) in readers.enumerated() {
                for probe in probes where !seen[reader].contains(probe.path) {
                    if (try? device.store.record(atPath: probe.path)) != nil {
                        seen[reader].insert(probe.path)
                        lock.withLock { samples.append(Date().timeIntervalSince(probe.at)) }
                    } else {
                        missing += 1
                    }
                }
            }
            if deadline == nil, lock.withLock({ isStopped }) { deadline = Date().addingTimeInterval(60) }
            if let deadline, missing == 0 || Date() > deadline {
                lock.withLock { missedProbes = missing }
                return
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    var timeouts: Int { lock.withLock { missedProbes } }

    func percentile(_ fraction: Double) -> Double? {
        let sorted = lock.withLock { samples }.sorted()
        guard !sorted.isEmpty else { return nil }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
    }
}
