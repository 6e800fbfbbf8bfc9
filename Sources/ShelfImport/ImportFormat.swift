import Foundation
import ShelfModel

/// The kinds of files `shelf import` understands.
public enum ImportFormat: String, CaseIterable, Sendable {
    /// Goodreads "Export library" CSV (My Books → Import and export).
    case goodreads
    /// The StoryGraph "Export StoryGraph library" CSV.
    case storygraph
    /// A Notion database exported as CSV (e.g. a reading-list template).
    case notion
    /// Any other CSV with a header row; columns are matched by name or by `--map`.
    case csv
    /// A Kindle's `My Clippings.txt`.
    case kindle
    /// A folder laid out like the mount or an export (`Books/…md`, `Notes/…md`): a backup, an
    /// export from another library, a vault copied from another machine.
    case markdown
    /// A Kobo e-reader's `.kobo/KoboReader.sqlite` (or the device folder holding it).
    case kobo
    /// KOReader's `*.sdr/metadata.*.lua` sidecars (a folder of them, or one), or its JSON
    /// highlight export.
    case koreader
    /// Readwise's CSV export of highlights.
    case readwise
    /// A Calibre library (its folder, or its `metadata.db`).
    case calibre

    /// Where a file of this format comes from, for messages about a file that is not one.
    var sourceHint: String {
        switch self {
        case .kobo: "import .kobo/KoboReader.sqlite from the e-reader, or the e-reader's folder"
        case .koreader: "import a folder of KOReader's .sdr sidecar folders, one metadata.*.lua file, or a JSON file from KOReader's highlight exporter"
        case .readwise: "export it at readwise.io/export (Export to CSV)"
        case .calibre: "import the Calibre library folder (the one holding metadata.db)"
        default: "drop --format to let the file be recognised"
        }
    }

    /// Parses a `--format` argument; `ImportError.unknownFormat` names the choices.
    public init(argument: String) throws {
        guard let format = ImportFormat(rawValue: argument.lowercased()) else {
            throw ImportError.unknownFormat(argument)
        }
        self = format
    }

    /// Recognises a CSV export by its header row, and Notion by what its cells look like.
    ///
    /// Goodreads and StoryGraph name their columns the same way in every export, so a few
    /// telltale columns are enough. Notion has no fixed columns (users design their databases),
    /// so it is recognised by its default title column `Name` or by Notion page links in cells;
    /// anything else is a generic CSV.
    static func detect(header: [String], rows: [[String]]) -> ImportFormat {
        let columns = Set(header.map { $0.trimmed().lowercased() })
        if columns.isSuperset(of: ["book id", "exclusive shelf"]) { return .goodreads }
        if columns.contains("read status"), !columns.isDisjoint(with: ["star rating", "moods", "last date read"]) {
            return .storygraph
        }
        if header.first?.trimmed() == "Name"
            || rows.contains(where: { $0.contains(where: NotionCell.containsPageLink) }) {
            return .notion
        }
        return .csv
    }
}
