import Foundation

/// Runs the built `shelf` binary the way a user's shell would, with its own config folder so
/// tests never read or write the real `~/.config/shelf`, and a deadline so a hang fails the test.
struct ShelfCLI {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// A scratch folder per test: `library/`, `config/`, and room for exports and import files.
    let scratch: URL
    var environment: [String: String]

    init() throws {
        scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("shelf-cli-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
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
    func run(_ arguments: String..., timeout: TimeInterval = 60) throws -> Result {
        try run(arguments, timeout: timeout)
    }

    @discardableResult
    func run(_ arguments: [String], timeout: TimeInterval = 60) throws -> Result {
        try Self.launch(Self.executable, arguments, environment: environment, timeout: timeout)
    }

    /// Runs any program with a deadline; output goes to files so a chatty child never blocks on a pipe.
    static func launch(_ executable: URL, _ arguments: [String], environment: [String: String],
                       timeout: TimeInterval = 60) throws -> Result {
        let outputs = FileManager.default.temporaryDirectory.appendingPathComponent("shelf-out-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: outputs, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: outputs) }
        let stdoutURL = outputs.appendingPathComponent("stdout"), stderrURL = outputs.appendingPathComponent("stderr")
        FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: stdoutURL)
        process.standardError = try FileHandle(forWritingTo: stderrURL)
        process.standardInput = FileHandle.nullDevice
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        try process.run()
        if finished.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            throw DeadlineExceeded(command: ([executable.lastPathComponent] + arguments).joined(separator: " "))
        }
        return Result(status: process.terminationStatus,
                      stdout: (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "",
                      stderr: (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "")
    }

    struct DeadlineExceeded: Error, CustomStringConvertible {
        var command: String
        var description: String { "\(command) did not finish before its deadline" }
    }
}

extension ShelfCLI {
    /// Takes a mount down however it is: `fusermount3 -u`, then `-u -z`.
    static func forceUnmount(_ mountpoint: String) {
        for arguments in [["-u", mountpoint], ["-u", "-z", mountpoint]] {
            guard let result = try? launch(URL(fileURLWithPath: "/usr/bin/fusermount3"), arguments,
                                           environment: ProcessInfo.processInfo.environment, timeout: 10),
                  result.status != 0 else { return }
        }
    }
}
