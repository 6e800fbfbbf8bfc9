import Foundation
import Synchronization
import Testing
import TestSupport
import TestTraits

/// Runs the built `shelf` binary the way a user's shell would, with its own config folder so
/// tests never read or write the real `~/.config/shelf`, and a deadline so a hang fails the test.
/// Its suite carries `ScratchFolders` (`@Suite(.scratchFolders)`), which removes the scratch
/// folder when the test passes and keeps it, named, when it fails.
struct ShelfCLI {
    /// A scratch folder per test: `library/`, `config/`, and room for exports and import files.
    let scratch: URL
    var environment: [String: String]

    init(sourceLocation: SourceLocation = #_sourceLocation) throws {
        scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("shelf-cli-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        if !ScratchScope.adopt(scratch) {
            Issue.record("\(scratch.path) will stay: add .scratchFolders to this suite so it is removed when the test passes",
                         severity: .warning, sourceLocation: sourceLocation)
        }
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = scratch.appendingPathComponent("config").path
        environment["HOME"] = scratch.path
        environment.removeValue(forKey: "SHELF_LIBRARY")
        self.environment = environment
    }

    var library: URL { scratch.appendingPathComponent("library", isDirectory: true) }

    /// The `shelf` executable built next to this test bundle.
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("shelf")
    }

    /// The repository's `samples/` folder.
    static var samples: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("samples", isDirectory: true)
    }

    @discardableResult
    func run(_ arguments: String..., timeout: Duration = .seconds(60)) throws -> CommandResult {
        try run(arguments, timeout: timeout)
    }

    @discardableResult
    func run(_ arguments: [String], timeout: Duration = .seconds(60)) throws -> CommandResult {
        try CommandRunner.run(Self.executable.path, arguments, in: scratch.path, environment: environment, timeout: timeout)
    }

    /// Runs another program (python3, ls…) with this CLI's environment.
    func tool(_ executable: String, _ arguments: String..., timeout: Duration = .seconds(60)) throws -> CommandResult {
        try tool(executable, arguments, timeout: timeout)
    }

    func tool(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(60)) throws -> CommandResult {
        try CommandRunner.run(executable, arguments, in: scratch.path, environment: environment, timeout: timeout)
    }

    /// Runs `shelf arguments` until it blocks reading `gate`'s file, then kills it with
    /// SIGKILL there (inside that download or pull), puts the file back and returns the result.
    func killWhileHeld(at gate: FileGate, _ arguments: String...) throws -> CommandResult {
        let pidFile = scratch.appendingPathComponent("held-\(UUID().uuidString).pid").path
        let result = Mutex<CommandResult?>(nil)
        let command = ProbedThread("shelf " + arguments.joined(separator: " ")) { [self] in
            let ran = try tool("/bin/sh", ["-c", "echo $$ > \"$0\"; exec \"$@\"", pidFile, Self.executable.path] + arguments,
                               timeout: .seconds(120))
            result.withLock { $0 = ran }
        }
        defer { try? gate.restore() }
        try #require(gate.waitUntilAReaderWaits(), "shelf \(arguments) never read \(gate.path)")
        let pid = try #require(Int32(try String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        kill(pid, SIGKILL)
        try command.finish(within: .seconds(30))
        return try #require(result.withLock { $0 })
    }

    /// A CLI with the sample library and an empty mountpoint; a mount there is always taken down.
    static func withSampleLibrary(_ body: (ShelfCLI, _ mountpoint: String) throws -> Void) throws {
        let cli = try ShelfCLI()
        try cli.run("init", cli.library.path)
        try cli.run("import", samples.appendingPathComponent("library").path)
        let mountpoint = cli.scratch.appendingPathComponent("mnt").path
        try FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true)
        LeftoverRecords.mounts.record(mountpoint)
        defer {
            forceUnmount(mountpoint)
            LeftoverRecords.mounts.forget(mountpoint)
        }
        try body(cli, mountpoint)
    }

    /// Mounts this CLI's library at `scratch/mnt` with `options` (`shelf mount` in the
    /// background, as a user would), runs `body` with the mountpoint, and always takes it down.
    func withMount<T>(_ options: String..., body: (_ mountpoint: String) throws -> T) throws -> T {
        let mountpoint = scratch.appendingPathComponent("mnt").path
        try FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true)
        LeftoverRecords.mounts.record(mountpoint)
        defer {
            Self.forceUnmount(mountpoint)
            LeftoverRecords.mounts.forget(mountpoint)
        }
        let mounted = try run(["mount", mountpoint] + options, timeout: .seconds(40))
        guard mounted.status == 0 else { throw MountFailed(stderr: mounted.stderr) }
        return try body(mountpoint)
    }

    struct MountFailed: Error, CustomStringConvertible {
        let stderr: String
        var description: String { "shelf mount failed: \(stderr)" }
    }

    /// Writes `bytes` at `path` through mount `from` and expects mount `to` to read exactly
    /// them within `deadline`: a change crossing from one device to another.
    static func expectArrives(_ bytes: Data, at path: String, from: String, on to: String, within deadline: Duration,
                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        try bytes.write(to: URL(fileURLWithPath: from + "/" + path))
        #expect(eventually(within: deadline) { FileManager.default.contents(atPath: to + "/" + path) == bytes },
                sourceLocation: sourceLocation)
    }

    /// Takes a mount down however it is: `fusermount3 -u`, then `-u -z`.
    static func forceUnmount(_ mountpoint: String) {
        for arguments in [["-u", mountpoint], ["-u", "-z", mountpoint]] {
            guard let result = try? CommandRunner.run("fusermount3", arguments, in: "/", timeout: .seconds(10)),
                  result.status != 0 else { return }
        }
    }
}

extension String {
    /// Whether `phrase` occurs as whole words: "0 added" is not found in "60 added".
    func containsPhrase(_ phrase: String) -> Bool {
        let pattern = "(?<![\\w])" + NSRegularExpression.escapedPattern(for: phrase) + "(?![\\w])"
        return range(of: pattern, options: .regularExpression) != nil
    }
}
