import ArgumentParser
import Foundation

struct UnmountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unmount",
        abstract: "Unmount a mounted library (pending saves are committed first).")

    @Argument(help: "The folder the library is mounted on.")
    var mountpoint: String

    func run() throws {
        let path = URL(fileURLWithPath: mountpoint).standardizedFileURL.path
        guard ShelfMounts.isShelfMount(path) else {
            throw CLIError("\(path) is not a mounted Shelf library. `shelf status` lists where the library is mounted.")
        }
        let status = try runTool("/usr/bin/fusermount3", ["-u", path])
        guard status == 0 else {
            throw CLIError("could not unmount \(path) (fusermount3 exited with \(status)); close the programs using files in it (`fuser -m \(path)`) and try again.")
        }
        try ShelfMounts.waitUntilUnmounted(path, timeout: .seconds(10))
        print("Unmounted \(path)")
    }
}

/// Runs a tool to completion, its output passed through; returns its exit status.
func runTool(_ executable: String, _ arguments: [String]) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}
