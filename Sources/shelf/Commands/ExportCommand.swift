import ArgumentParser
import Foundation
import ShelfImport

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the whole tree the mount shows: the items' Markdown and every other file (.obsidian/, attachments, .git/).",
        discussion: """
            `shelf import DIR` into an empty library restores it. Files are written atomically (temp file, fsync, rename); unchanged files are not \
            touched; files of items deleted since the last export are removed, and nothing else in DIR. \
            Items not downloaded yet are downloaded first.
            """)

    @OptionGroup var library: LibraryOptions

    @Argument(help: "The folder to write into (created if missing).")
    var directory: String

    func run() throws {
        let store = try library.open()
        try Downloads.fetch(of: store)
        let summary = try Exporter.export(store, to: URL(fileURLWithPath: directory).standardizedFileURL)
        print(summary)
        var problems: [String] = []
        if !summary.refused.isEmpty {
            problems.append("\(Self.count(summary.refused.count, "item")) not exported because no item may have \(summary.refused.count == 1 ? "its path" : "their paths") (listed above; a cloud let them in before Shelf checked its input): mount the library once to move them to the trash, then export again")
        }
        if !summary.failed.isEmpty {
            problems.append("\(Self.count(summary.failed.count, "file")) could not be written (listed above): free space or move what is in the way, then export again")
        }
        if !problems.isEmpty { throw CLIError(problems.joined(separator: "; ") + "; every other file was exported.") }
    }

    private static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)\(number == 1 ? "" : "s")"
    }
}
