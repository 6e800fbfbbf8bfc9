import ArgumentParser
import CShelfBuild
import Foundation
import ShelfStore

/// `shelf`: a reading library kept in SQLite and mounted as a folder of Markdown files.
@main
struct ShelfCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shelf",
        abstract: "A reading library of books, passages and notes, mounted as a folder of Markdown files.",
        discussion: """
            Every command takes --library PATH (or SHELF_LIBRARY); without either, the library \
            chosen by the last `shelf init` is used (remembered in $XDG_CONFIG_HOME/shelf/config.toml, \
            by default ~/.config/shelf/config.toml). `shelf LIBRARY MOUNTPOINT -o OPTIONS` is the form \
            mount.fuse3 runs for an /etc/fstab line of type fuse.shelf (see shelf.mount(1)).
            """,
        version: ShelfVersion.recorded,
        subcommands: [
            InitCommand.self, MountCommand.self, UnmountCommand.self, ImportCommand.self,
            ExportCommand.self, ListCommand.self, ShowCommand.self, SearchCommand.self,
            StatusCommand.self, TrashCommand.self, HistoryCommand.self, RestoreCommand.self, CloudCommand.self, SyncCommand.self, DownloadCommand.self, PinCommand.self, UnpinCommand.self,
            EvictCommand.self, WatchCommand.self, RenameCommand.self,
        ]
    )

    /// Parses the mount helper's form as `shelf mount`, and prints every error as one line:
    /// an error from Foundation becomes the system's words for it, never `Error Domain=…`.
    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        // Answered here so a development build can look up its commit only when asked.
        if arguments == ["--version"] {
            print(ShelfVersion.description)
            return
        }
        do {
            if let translated = try MountHelperArguments.translate(arguments, subcommands: configuration.subcommands) {
                arguments = translated
            }
            var command = try parseAsRoot(arguments)
            try command.run()
        } catch {
            exit(withError: OneLineError.from(error))
        }
    }
}

/// `shelf --version`: the release and the commit it was built from.
enum ShelfVersion {
    static let number = "0.23.0"

    /// The commit a release build recorded (empty for other builds).
    static let commit = String(cString: shelf_build_commit())

    /// What help and the manual show: `0.23.0 (commit 1c9a9d0…)`, or the number alone.
    static let recorded = commit.isEmpty ? number : "\(number) (commit \(commit))"

    /// `0.23.0 (commit 1c9a9d0…)`; a development build finds its commit in its source checkout.
    static var description: String {
        "\(number) (commit \(commit.isEmpty ? sourceCheckoutCommit() ?? "unknown" : commit))"
    }

    /// The HEAD of the checkout this binary was built from, when it is still there.
    private static func sourceCheckoutCommit() -> String? {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().path
        guard FileManager.default.fileExists(atPath: source), FileManager.default.fileExists(atPath: "/usr/bin/git") else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/git")
        process.arguments = ["-C", source, "rev-parse", "--short=12", "HEAD"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let hash = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return process.terminationStatus == 0 && !hash.isEmpty ? hash + "-dev" : nil
    }
}

/// Any error as the one line `exit(withError:)` prints.
enum OneLineError {
    static func from(_ error: any Error) -> any Error {
        // ArgumentParser's own (help, version, usage errors, exit codes) and Shelf's errors,
        // whose descriptions are already one line with a fix, pass through.
        if error is CLIError || error is ExitCode || error is ValidationError || error is CleanExit { return error }
        let nsError = error as NSError
        guard nsError.domain == NSCocoaErrorDomain || nsError.domain == NSPOSIXErrorDomain else { return error }
        let path = (nsError.userInfo[NSFilePathErrorKey] as? String) ?? (nsError.userInfo[NSURLErrorKey] as? URL)?.path
        return CLIError("\(path.map { "\($0): " } ?? "")\(ErrorReason.of(error)). Check the path and its permissions, then try again.")
    }
}
