import Foundation
import Testing
import TestSupport

/// A memory cgroup with a hard limit, to run the mount daemon under: cgroup v2's `memory.max`
/// where the unified hierarchy has the memory controller, else v1's `memory.limit_in_bytes`.
/// Making one that cannot be made is an error naming what was tried — a test under a limit
/// never passes without one.
struct MemoryLimit {
    /// The cgroup's folder.
    let folder: String
    private let unified: Bool

    struct Unavailable: Error, CustomStringConvertible {
        var tried: [String]
        var description: String {
            "no memory limit can be applied here (tried: \(tried.joined(separator: "; "))); run as root on a machine with a writable memory cgroup"
        }
    }

    init(bytes: Int) throws {
        let name = "shelf-test-\(getpid())-\(UUID().uuidString.prefix(8))"
        var tried: [String] = []
        let candidates = [("/sys/fs/cgroup", true), ("/sys/fs/cgroup/memory", false)]
        for (root, unified) in candidates {
            if unified {
                let controllers = (try? String(contentsOfFile: root + "/cgroup.controllers", encoding: .utf8)) ?? ""
                guard controllers.split(separator: " ").contains(where: { $0.hasPrefix("memory") }) else {
                    tried.append("\(root): no cgroup v2 memory controller")
                    continue
                }
            } else if !FileManager.default.fileExists(atPath: root + "/memory.limit_in_bytes") {
                tried.append("\(root): no cgroup v1 memory hierarchy")
                continue
            }
            let folder = root + "/" + name
            guard mkdir(folder, 0o755) == 0 else {
                tried.append("mkdir \(folder): \(String(cString: strerror(errno)))")
                continue
            }
            let limits = unified ? [("memory.max", "\(bytes)"), ("memory.swap.max", "0")]
                                 : [("memory.limit_in_bytes", "\(bytes)"), ("memory.memsw.limit_in_bytes", "\(bytes)")]
            do {
                try Data(limits[0].1.utf8).write(to: URL(fileURLWithPath: folder + "/" + limits[0].0))
                // Without swap accounting there is no swap limit to set (nor swap to escape to).
                if FileManager.default.fileExists(atPath: folder + "/" + limits[1].0) {
                    try Data(limits[1].1.utf8).write(to: URL(fileURLWithPath: folder + "/" + limits[1].0))
                }
            } catch {
                tried.append("\(folder)/\(limits[0].0): \(error)")
                rmdir(folder)
                continue
            }
            self.folder = folder
            self.unified = unified
            return
        }
        throw Unavailable(tried: tried)
    }

    /// A shell command's prefix that moves the shell into the cgroup and then runs its arguments:
    /// `/bin/sh -c <this> <procs file> <program> <arguments>…`.
    static let enterScript = #"echo $$ > "$0" && exec "$@""#

    var processesFile: String { folder + "/cgroup.procs" }

    /// Whether process `pid` runs in this cgroup.
    func contains(_ pid: Int32) -> Bool {
        let lines = (try? String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8)) ?? ""
        let name = "/" + URL(fileURLWithPath: folder).lastPathComponent
        return lines.split(separator: "\n").contains { $0.hasSuffix(name) && (unified ? $0.hasPrefix("0::") : $0.contains(":memory:")) }
    }

    /// The most memory the cgroup's processes held at once, in bytes.
    func peak() throws -> Int {
        let file = folder + (unified ? "/memory.peak" : "/memory.max_usage_in_bytes")
        let text = try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        return try #require(Int(text), "\(file) reads \(text)")
    }

    /// How many processes of the cgroup the out-of-memory killer ended.
    func outOfMemoryKills() throws -> Int {
        let file = folder + (unified ? "/memory.events" : "/memory.oom_control")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let counts = text.split(separator: "\n").compactMap { line -> Int? in
            let fields = line.split(separator: " ")
            return fields.count == 2 && fields[0] == "oom_kill" ? Int(fields[1]) : nil
        }
        return try #require(counts.first, "\(file) has no oom_kill count: \(text)")
    }

    /// Removes the cgroup once its processes have ended (within 20 s).
    func remove() {
        _ = eventually(within: .seconds(20)) {
            ((try? String(contentsOfFile: processesFile, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        }
        if rmdir(folder) != 0 {
            Issue.record("could not remove the test's cgroup \(folder): \(String(cString: strerror(errno)))", severity: .warning)
        }
    }
}
