import ArgumentParser
import Foundation
import ShelfImport

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import a Goodreads, StoryGraph or Notion export, any CSV, Kindle clippings, a Kobo's database, KOReader sidecars, a Readwise export, or a folder of Markdown files.",
        discussion: """
            Importing the same file again updates in place and never duplicates; a folder of \
            Markdown files never replaces what was edited in Shelf since its last import \
            (--overwrite-edits does), and importing a `shelf export` folder into an empty \
            library restores the whole tree, plain files included. Rows that cannot \
            be read are reported with their line number and skipped; the others are imported. \
            Every non-empty column ends up in a field or a kept frontmatter property. Highlights \
            join the books already in the library (by ISBN, then title and author), each once.
            """)

    @OptionGroup var library: LibraryOptions

    @Argument(help: ArgumentHelp("The export file (CSV, My Clippings.txt, KoboReader.sqlite, a KOReader metadata.*.lua or JSON export), or a folder (of Markdown files, of KOReader .sdr sidecars, or a Kobo e-reader's).", valueName: "path"))
    var file: String

    @Option(help: ArgumentHelp("The file's format (default: detected): \(ImportFormat.allCases.map(\.rawValue).joined(separator: ", ")).", valueName: "format"))
    var format: String?

    @Option(name: .customLong("map"), parsing: .singleValue,
            help: ArgumentHelp("Read column COLUMN into FIELD (title, author, isbn, status, current_page, total_pages, rating, date_added, date_finished, tags, source_id, or any other name for a kept property). Repeatable.", valueName: "COLUMN=FIELD"))
    var mappings: [String] = []

    @Flag(help: "For a folder of Markdown files: replace items edited in Shelf since the folder's version was imported or exported (by default those edits are kept and listed).")
    var overwriteEdits = false

    func run() throws {
        let store = try library.open()
        let mountpoints = ShelfMounts.mountpoints(ofLibrary: store.folder)
        let importer = try Importer(format: format.map(ImportFormat.init(argument:)),
                                    columnMap: ColumnMap(arguments: mappings), overwriteEdits: overwriteEdits,
                                    plainFilesArea: mountpoints.first { !ShelfMounts.isDisconnected($0) }
                                        .map { URL(fileURLWithPath: $0, isDirectory: true) })
        let progress = TerminalProgress(label: "Importing")
        let summary = try importer.importFile(URL(fileURLWithPath: file), into: store) { progress.show($0.done, of: $0.total) }
        progress.finish()
        if summary.added + summary.updated >= Self.compactionThreshold, mountpoints.isEmpty {
            try store.compact()
        }
        print(summary)
    }

    /// Imports that change at least this many items leave the database compacted (see
    /// `LibraryStore.compact()`): below it, start-up reads too little of the index to matter.
    static let compactionThreshold = 1_000
}

/// A one-line `Importing 1200/10000` counter on stderr, only when stderr is a terminal and the
/// work is long enough to need one.
final class TerminalProgress {
    private let label: String
    private let enabled = isatty(STDERR_FILENO) == 1
    private var lastShown = ContinuousClock.now
    private var shown = false

    init(label: String) { self.label = label }

    func show(_ done: Int, of total: Int) {
        guard enabled, total > 200, ContinuousClock.now - lastShown > .milliseconds(100) || done == total else { return }
        lastShown = .now
        shown = true
        FileHandle.standardError.write(Data("\r\(label) \(done)/\(total)".utf8))
    }

    func finish() {
        if shown { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
