import Foundation

/// Why an import or export could not start. Each message says what is wrong and how to fix it;
/// when one of these is thrown nothing was written to the library.
///
/// Problems with single rows are not errors: they are reported in `ImportSummary.problems`
/// and the other rows still import.
public enum ImportError: Error, Equatable, CustomStringConvertible {
    /// No file (or a folder) at the given path.
    case fileMissing(path: String)
    /// The file exists but cannot be read.
    case fileUnreadable(path: String, reason: String)
    /// The file is not a CSV table (binary, a PDF, JSON, empty, …); `looksLike` says what it seems to be.
    case notCSV(path: String, looksLike: String)
    /// `--format kindle` on a file without clippings.
    case notKindleClippings(path: String)
    /// A `--format` value that is not one of `ImportFormat`.
    case unknownFormat(String)
    /// A `--map` argument that cannot be parsed.
    case badMap(argument: String, reason: String)
    /// A `--map` argument naming a column the file's header does not have.
    case unknownColumn(String, available: [String])
    /// The file has no column for a field every book needs (its title).
    case missingColumn(field: String, available: [String])
    /// `--format markdown` on something that is not a folder with `Books/` or `Notes/` in it.
    case notAMarkdownFolder(path: String)
    /// The export folder cannot be created or written.
    case exportFailed(path: String, reason: String)
    /// A file given (or detected) as `format` that is not one; `reason` says what is wrong.
    case notFormat(path: String, format: ImportFormat, reason: String)
    /// A source file that breaks its format at `line`, so none of it can be trusted.
    case malformed(path: String, line: Int, reason: String)

    public var description: String {
        switch self {
        case .fileMissing(let path):
            "no file at \(path); check the path and try again."
        case .fileUnreadable(let path, let reason):
            "cannot read \(path): \(reason). Check the file's permissions."
        case .notCSV(let path, let looksLike):
            "\(path) is not a CSV file: it looks like \(looksLike). Import the CSV export itself (Goodreads: My Books → Import and export → Export Library; StoryGraph: Manage Account → Export StoryGraph Library; Notion: ••• → Export → Markdown & CSV), or a Kindle's My Clippings.txt."
        case .notKindleClippings(let path):
            "\(path) holds no Kindle clippings (entries separated by ==========). Import the My Clippings.txt from the Kindle's documents folder, or drop --format kindle."
        case .unknownFormat(let name):
            "unknown import format \"\(name)\"; use one of \(ImportFormat.allCases.map(\.rawValue).joined(separator: ", "))."
        case .badMap(let argument, let reason):
            "--map \"\(argument)\": \(reason). Write it as --map 'Column Name=field', e.g. --map 'Book Title=title'."
        case .unknownColumn(let column, let available):
            "--map names the column \"\(column)\", which the file does not have; its columns are: \(available.joined(separator: ", "))."
        case .missingColumn(let field, let available):
            "the file has no column for \(field) (its columns are: \(available.joined(separator: ", "))). Name the column that holds it with --map 'COLUMN=\(field)'."
        case .notAMarkdownFolder(let path):
            "\(path) is not a folder of Markdown items: it has no Books/ or Notes/ folder. Import a folder written by `shelf export` (or laid out like the mount), or drop --format markdown."
        case .notFormat(let path, let format, let reason):
            "\(path) is not a \(format.rawValue) source: \(reason). To fix: \(format.sourceHint)."
        case .malformed(let path, let line, let reason):
            "\(path) line \(line): \(reason). Nothing was imported; import the file as the app wrote it, or fix that line."
        case .exportFailed(let path, let reason):
            "cannot export to \(path): \(reason). Check that the folder is writable and the disk has space."
        }
    }
}
