import Foundation
import ShelfMarkdown
import ShelfModel
import ShelfStore
import ShelfSystem

/// Imports a folder laid out like the mount — `Books/**.md` and `Notes/**.md` — such as an
/// export, a backup, or the repository's sample library.
///
/// Each file keeps its exact bytes (they become the item's saved text, so `shelf show` and the
/// mount read back the very file) and its path inside the folder, shelves included. An item is
/// found again by the `id:` in its frontmatter, or, for a file without one, by its path; so
/// importing the same folder twice changes nothing, and importing an edited export updates the
/// items in place. A file that does not parse is reported with its line and skipped.
///
/// A file never replaces an item edited in Shelf since the folder's version of it came from
/// Shelf or went into it — its current version was not made by an import, and the folder is
/// not an export of that very version: such items are kept and reported (`overwriteEdits`
/// replaces them). An export's other files (`.obsidian/`, attachments, `.git/`, empty
/// folders: what its manifest lists) are restored into the plain-file area, so importing an
/// export into an empty library gives back the tree it was made from.
enum MarkdownFolderImport {
    static func isFolder(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// One file found in the folder, read and parsed before the write transaction starts.
    private struct File {
        var path: String
        /// The file's exact bytes: what the item's file shows after the import.
        var bytes: Data
        var parsed: Result<ParsedItem, ParseFailure>
    }

    /// `plainFilesArea`: where the export's plain files go (``Importer/plainFilesArea``).
    static func run(folder: URL, into store: LibraryStore, overwriteEdits: Bool = false, plainFilesArea: URL,
                    progress: (ImportProgress) -> Void) throws -> ImportSummary {
        guard isFolder(folder) else { throw ImportError.notAMarkdownFolder(path: folder.path) }
        var summary = ImportSummary(format: .markdown)
        let found = try ItemKind.allCases.flatMap { kind in
            try files(of: kind, in: folder, problems: &summary.problems)
        }
        guard !found.isEmpty || ItemKind.allCases.contains(where: { isFolder(folder.appendingPathComponent($0.folderName)) }) else {
            throw ImportError.notAMarkdownFolder(path: folder.path)
        }
        summary.skipped = summary.problems.count
        let manifest = Exporter.Manifest.read(in: folder)
        summary = try store.write(as: ChangeOrigin(.import)) { writer in
            for (done, file) in found.enumerated() {
                switch file.parsed {
                case .failure(let failure):
                    for diagnostic in failure.diagnostics.prefix(1) {
                        summary.skip(ImportProblem(file: file.path, line: diagnostic.line, message: diagnostic.message))
                    }
                case .success(let parsed):
                    let exported = manifest?.files[file.path]
                    try apply(parsed, from: file, exportedAs: exported, overwriteEdits: overwriteEdits, with: writer, to: &summary)
                }
                progress(ImportProgress(done: done + 1, total: found.count))
            }
            return summary
        }
        if let manifest {
            restorePlainFiles(of: manifest, from: folder, into: plainFilesArea, overwrite: overwriteEdits, to: &summary)
        }
        return summary
    }

    /// Copies the plain files, symlinks and folders the export's `manifest` lists into the
    /// library's plain-file area (after the items' transaction: files are not transactional).
    /// A file the library already has with other bytes is kept and reported unless `overwrite`.
    private static func restorePlainFiles(of manifest: Exporter.Manifest, from folder: URL, into area: URL,
                                          overwrite: Bool, to summary: inout ImportSummary) {
        for path in manifest.folders ?? [] where (try? ItemPath.checkComponents(of: path)) != nil {
            try? FileManager.default.createDirectory(atPath: area.path + "/" + path, withIntermediateDirectories: true)
        }
        for (path, fingerprint) in manifest.files.sorted(by: { $0.key < $1.key })
        where !PlainTree.isItemPath(path) && (try? ItemPath.checkComponents(of: path)) != nil {
            let source = folder.path + "/" + path
            let target = area.path + "/" + path
            guard PlainTree.fingerprint(at: source) == fingerprint else {
                summary.skip(ImportProblem(file: path, line: 1, message: "changed since the export wrote it (or missing); copy it into the mount yourself if you want it"))
                continue
            }
            if let current = PlainTree.fingerprint(at: target) {
                if current == fingerprint { continue }
                guard overwrite else {
                    summary.keptEdits.append(path)
                    continue
                }
            }
            do {
                try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent,
                                                        withIntermediateDirectories: true)
                switch PlainTree.kind(at: source) {
                case .symlink(let destination):
                    try PlainTree.placeSymlink(to: destination, at: target)
                default:
                    try AtomicFile.write(Data(contentsOf: URL(fileURLWithPath: source)), to: target)
                    if let shape = FileStatus(of: source) {
                        try PlainTree.apply(shape, to: target)
                    }
                }
                summary.otherFiles += 1
            } catch {
                summary.skip(ImportProblem(file: path, line: 1, message: "could not be restored: \(ErrorReason.of(error)); free space or move what is in the way, then import again"))
            }
        }
    }

    /// Adds, updates or leaves alone the item `file` stands for. `exportedAs`: the fingerprint
    /// the folder's manifest gives the file, when the folder is an export.
    private static func apply(_ parsed: ParsedItem, from file: File, exportedAs: String?, overwriteEdits: Bool,
                              with writer: StoreWriter, to summary: inout ImportSummary) throws {
        var item = parsed.item
        let existing = parsed.declaredID ? try writer.record(id: item.id) : try writer.record(atPath: file.path)
        guard let existing else {
            _ = try writer.insert(item, path: try freePath(for: file.path, with: writer), source: file.bytes)
            summary.added += 1
            return
        }
        guard existing.item.kind == item.kind else {
            summary.skip(ImportProblem(file: file.path, line: 1, message: "its id belongs to a \(existing.item.kind.rawValue) at \(existing.path); give the file another id or remove the id line"))
            return
        }
        item.id = existing.item.id
        guard existing.content != file.bytes else {
            summary.unchanged += 1
            return
        }
        guard existing.draftDiagnostics == nil else {
            summary.skip(ImportProblem(file: file.path, line: 1, message: "\(existing.path) holds an invalid edit that is not saved yet; fix or undo it in the file, then import again"))
            return
        }
        let unchangedSinceImport = try writer.currentOrigin(of: existing.item.id)?.reason == .import
        let unchangedSinceExport = exportedAs == PlainTree.fingerprint(of: existing.content)
        guard overwriteEdits || unchangedSinceImport || unchangedSinceExport else {
            summary.keptEdits.append(existing.path)
            return
        }
        _ = try writer.update(item, basedOn: existing.version, source: file.bytes)
        summary.updated += 1
    }

    /// `path`, or ` (2)`, ` (3)`… of it when another item lives there.
    private static func freePath(for path: String, with writer: StoreWriter) throws -> String {
        let folder = (path as NSString).deletingLastPathComponent
        let name = FileNaming.uniqued((path as NSString).lastPathComponent) { candidate in
            (try? writer.record(atPath: folder + "/" + candidate)) != nil
        }
        return folder + "/" + name
    }

    /// Every visible `*.md` under `<folder>/<Kind folder>/`, in path order; unreadable files
    /// become problems.
    private static func files(of kind: ItemKind, in folder: URL, problems: inout [ImportProblem]) throws -> [File] {
        let root = folder.appendingPathComponent(kind.folderName, isDirectory: true)
        guard let enumerator = FileManager.default.enumerator(
            at: root, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles]) else { return [] }
        var files: [File] = []
        for case let url as URL in enumerator where url.pathExtension == "md" {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
            let path = kind.folderName + "/" + url.path.dropFirst(root.path.count + 1)
            guard let bytes = try? Data(contentsOf: url), let text = String(validating: bytes, as: UTF8.self) else {
                problems.append(ImportProblem(file: path, line: 1, message: "not readable as UTF-8 text; save it as UTF-8 and import again"))
                continue
            }
            let title = FileNaming.title(fromFileName: url.lastPathComponent)
            files.append(File(path: path, bytes: bytes, parsed: MarkdownCodec.parse(text, kind: kind, fileTitle: title)))
        }
        return files.sorted { $0.path < $1.path }
    }
}
