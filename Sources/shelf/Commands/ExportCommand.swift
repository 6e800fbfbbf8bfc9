import ArgumentParser
import Foundation
import ShelfImport

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the library as the Markdown tree the mount shows.",
        discussion: """
            Files are written atomically (temp file, fsync, rename); unchanged files are not \
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
        if !summary.failed.isEmpty {
            throw CLIError("\(summary.failed.count) file\(summary.failed.count == 1 ? "" : "s") could not be exported (listed above); every other file was. Free space or move what is in the way, then export again.")
        }
    }
}
