import ArgumentParser
import Foundation

struct UnmountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unmount",
        abstract: "Unmount a mounted library; returns once its mount process has committed every pending save and exited.",
        discussion: "Without MOUNTPOINT, every mount of the library (--library, $SHELF_LIBRARY or the remembered one) is unmounted.")

    @OptionGroup var library: LibraryOptions

    @Argument(help: "The folder the library is mounted on.")
    var mountpoint: String?

    func run() throws {
        let paths = try mountpoint.map { [URL(fileURLWithPath: $0).standardizedFileURL.path] }
            ?? ShelfMounts.mountpoints(ofLibrary: library.resolvedFolder())
        guard !paths.isEmpty else {
            throw CLIError("the library at \(try library.resolvedFolder().path) is not mounted. `shelf status` lists where it is mounted.")
        }
        for path in paths { try unmount(path) }
    }

    private func unmount(_ path: String) throws {
        guard ShelfMounts.isShelfMount(path) else {
            throw CLIError("\(path) is not a mounted Shelf library. `shelf status` lists where the library is mounted.")
        }
        let daemon = ShelfMounts.daemonPID(mountpoint: path)
        let status = try runTool("/usr/bin/fusermount3", ["-u", path])
        guard status == 0 else {
            throw CLIError("could not unmount \(path) (fusermount3 exited with \(status)); close the programs using files in it (`fuser -m \(path)`) and try again.")
        }
        try ShelfMounts.waitUntilUnmounted(path, timeout: .seconds(10))
        if let daemon { try ShelfMounts.waitUntilExited(daemon, timeout: .seconds(60)) }
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
