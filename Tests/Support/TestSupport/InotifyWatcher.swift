import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `inotifywait -m` on a folder (of a mount), started and ready: it has said "Watches
/// established", which it says on stderr once every watch is set. Killed, not waited for, when
/// the test is done with it: it holds a watch on the mount that must not outlive the test.
public final class InotifyWatcher {
    private let process = Process()
    private let events: URL

    /// Watches `folder` (and every folder below it when `recursive`) for the events `kinds`
    /// names (`modify,close_write`), keeping what it hears in a file in `scratch`.
    public init(_ folder: String, for kinds: String, recursive: Bool = false, scratch: URL) throws {
        let name = UUID().uuidString
        events = scratch.appendingPathComponent("inotify-\(name).events")
        let said = scratch.appendingPathComponent("inotify-\(name).log")
        try Data().write(to: said)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/inotifywait")
        process.arguments = ["-m"] + (recursive ? ["-r"] : []) + ["-e", kinds, "--format", "%e %w%f", "-o", events.path, folder]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: said)
        try process.run()
        let ready = eventually(within: .seconds(10)) {
            (try? String(contentsOf: said, encoding: .utf8))?.contains("Watches established") == true
        }
        guard ready else {
            stop()
            throw NotWatching(folder: folder)
        }
    }

    deinit { stop() }

    /// How many events of kind `event` (`CLOSE_WRITE`, `CREATE,ISDIR`: the kinds a line starts
    /// with) it heard for the file or folder whose path ends with `path`.
    public func count(_ event: String, endingWith path: String) -> Int {
        let lines = (try? String(contentsOf: events, encoding: .utf8)) ?? ""
        return lines.split(separator: "\n").filter { line in
            guard let kinds = line.split(separator: " ").first, line.hasSuffix("/" + path) else { return false }
            return kinds == event || kinds.split(separator: ",").contains(Substring(event))
        }.count
    }

    public func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    public struct NotWatching: Error, CustomStringConvertible {
        public let folder: String
        public var description: String { "inotifywait did not set its watches on \(folder) within 10 s" }
    }
}
