import Foundation
import ShelfSystem

/// What an external command did.
public struct CommandResult: Sendable, CustomStringConvertible {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    public var succeeded: Bool { status == 0 }
    public var description: String { "exit \(status), stdout: \(stdout.debugDescription), stderr: \(stderr.debugDescription)" }
}

/// Runs commands with a deadline, killing them when it passes.
///
/// Commands start through `posix_spawn`, not Foundation's `Process`, whose `run()` crashed the
/// test process now and then (a bad pointer in its copy of the environment) when many tests
/// started commands at once.
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
        try Data((input ?? "").utf8).write(to: inputURL)

        // `env -C` changes to the directory and looks the command up in PATH.
        let pid = try spawn(["/usr/bin/env", "-C", directory, executable] + arguments,
                            environment: environment ?? ProcessInfo.processInfo.environment,
                            stdin: inputURL.path, stdout: stdoutURL.path, stderr: stderrURL.path)
        let exited = DispatchSemaphore(value: 0)
        let status = StatusBox()
        let waiter = Thread {
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
            status.value = raw
            exited.signal()
        }
        waiter.start()
        guard exited.wait(timeout: .now() + timeout.timeInterval) == .success else {
            kill(pid, SIGKILL)
            _ = exited.wait(timeout: .now() + 5)
            throw TestMountError.timedOut("`\(([executable] + arguments).joined(separator: " "))`", after: timeout)
        }
        return CommandResult(status: Self.exitStatus(status.value),
                             stdout: (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "",
                             stderr: (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "")
    }

    /// Starts `command` with its standard streams on the given files; returns its pid.
    private static func spawn(_ command: [String], environment: [String: String], stdin: String, stdout: String,
                              stderr: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // A child starts with no signal blocked, whatever the test runner blocks.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))

        let argv = command.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, command[0], &actions, &attributes, argv, envp)
        guard result == 0 else { throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "posix_spawn \(command[0]): errno \(result)"]) }
        return pid
    }

    /// The exit status of a `waitpid` status, or 128 + the signal that ended the command.
    private static func exitStatus(_ raw: Int32) -> Int32 {
        let signal = raw & 0x7f
        return signal == 0 ? (raw >> 8) & 0xff : 128 + signal
    }

    private final class StatusBox: @unchecked Sendable {
        var value: Int32 = 0
    }
}
