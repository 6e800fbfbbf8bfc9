import Foundation

/// What an external command did.
public struct CommandResult: Sendable, CustomStringConvertible {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    public var succeeded: Bool { status == 0 }
    public var description: String { "exit \(status), stdout: \(stdout.debugDescription), stderr: \(stderr.debugDescription)" }
}

/// Runs commands with a deadline, killing them when it passes.
public enum CommandRunner {
    /// Runs `executable` (a path, or a name looked up in PATH) in `directory`. Output goes to
    /// temporary files, not pipes, so a chatty command cannot block on a full pipe.
    /// `environment` nil: this process's own.
    public static func run(_ executable: String, _ arguments: [String], in directory: String,
                           input: String? = nil, environment: [String: String]? = nil,
                           timeout: Duration) throws -> CommandResult {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("cmd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let stdoutURL = scratch.appendingPathComponent("out"), stderrURL = scratch.appendingPathComponent("err")
        let inputURL = scratch.appendingPathComponent("in")
        try Data().write(to: stdoutURL)
        try Data().write(to: stderrURL)
        try Data((input ?? "").utf8).write(to: inputURL)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        if let environment { process.environment = environment }
        process.standardOutput = try FileHandle(forWritingTo: stdoutURL)
        process.standardError = try FileHandle(forWritingTo: stderrURL)
        process.standardInput = try FileHandle(forReadingFrom: inputURL)
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        guard exited.wait(timeout: .now() + timeout.timeInterval) == .success else {
            kill(process.processIdentifier, SIGKILL)
            _ = exited.wait(timeout: .now() + 5)
            throw TestMountError.timedOut("`\(([executable] + arguments).joined(separator: " "))`", after: timeout)
        }
        return CommandResult(status: process.terminationStatus,
                             stdout: (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "",
                             stderr: (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "")
    }
}
