import Foundation
import Testing
import TestSupport

/// A program holding a file in memory as an editor does: its own process reads the file when
/// started and writes its buffer back, with one line changed, when told to — so the mount sees
/// a reader and writer other than the test, which reads the same file to check on it.
final class OpenEditor {
    private let process = Process()
    private let input = Pipe()

    /// The buffer: what `path` held when the editor read it. `scratch`: where it says it has.
    init(_ path: String, scratch: URL) throws {
        let ready = scratch.appendingPathComponent("editor-ready-\(UUID().uuidString)")
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", Self.script, path, ready.path]
        process.standardInput = input
        try process.run()
        defer { try? FileManager.default.removeItem(at: ready) }
        try #require(eventually(within: .seconds(20)) { FileManager.default.fileExists(atPath: ready.path) },
                     "the editor read \(path)")
    }

    deinit { if process.isRunning { process.terminate() } }

    /// Writes the buffer back with the line starting `prefix` replaced by `line`: in place, or
    /// through a temp file renamed over it.
    func save(replacingLineStarting prefix: String, with line: String, atomically: Bool) throws {
        input.fileHandleForWriting.write(Data("\(prefix)\t\(line)\t\(atomically ? 1 : 0)\n".utf8))
        let ended = eventually(within: .seconds(20)) { !self.process.isRunning }
        if !ended { process.terminate() }
        try #require(ended && process.terminationStatus == 0, "the editor saved (status \(process.terminationStatus))")
    }

    private static let script = """
        import os, sys, tempfile
        path, ready = sys.argv[1], sys.argv[2]
        with open(path, encoding="utf-8") as f: lines = f.read().split("\\n")
        open(ready, "w").close()
        prefix, line, atomic = sys.stdin.readline().rstrip("\\n").split("\\t")
        text = "\\n".join(line if l.startswith(prefix) else l for l in lines)
        if atomic == "1":
            fd, temp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f: f.write(text)
            os.replace(temp, path)
        else:
            with open(path, "w", encoding="utf-8") as f: f.write(text)
        """
}
