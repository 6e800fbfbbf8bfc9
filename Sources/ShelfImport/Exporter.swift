import Foundation
import ShelfStore
import ShelfSystem

/// What an export did.
public struct ExportSummary: Hashable, Sendable, CustomStringConvertible {
    /// The folder written into.
    public var folder = ""
    /// Item files exported (books and notes), and other files of the tree (the plain-file
    /// area: `.obsidian/`, attachments, `.git/`…; symlinks included) and folders.
    public var items = 0
    public var otherFiles = 0
    public var folders = 0
    /// Files created or replaced because their bytes changed.
    public var written = 0
    /// Files whose bytes already matched; left untouched (their mtime stays).
    public var unchanged = 0
    /// Files of items deleted (or moved) since the last export, removed.
    public var removed = 0
    /// Files of deleted items that were edited after the export wrote them: left in place
    /// because they hold someone's work; relative paths.
    public var keptEdited: [String] = []
    /// Files that could not be written (a name the folder's file system refuses, a folder in
    /// the way, no space), each with its path and why; every other file was still exported.
    public var failed: [String] = []
    /// Items not exported because no item may have their path (`..`, absolute, outside their
    /// kind's folder: what a cloud could bring before Shelf checked its input), each with why.
    public var refused: [String] = []

    public init() {}

    /// `Exported 12 items, 7 other files and 3 folders to DIR: 3 written, 16 unchanged, 0 removed`
    /// and one line per file kept, failed or refused.
    public var description: String {
        (["Exported \(Self.count(items, "item")), \(Self.count(otherFiles, "other file")) and \(Self.count(folders, "folder")) to \(folder): \(written) written, \(unchanged) unchanged, \(removed) removed"]
            + keptEdited.map { "kept \($0): edited since the last export, so not removed" }
            + failed.map { "could not write \($0)" }
            + refused.map { "not exported: \($0)" })
            .joined(separator: "\n")
    }

    private static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)\(number == 1 ? "" : "s")"
    }
}

/// Writes the whole tree the mount shows into a folder — the items' Markdown (`Books/…md`,
/// `Notes/…md`) and every other file, folder and symlink of the plain-file area (`.obsidian/`,
/// attachments, `.git/`) with its mode and time — for backups and for tools that cannot use the
/// mount. `shelf import` of the folder into an empty library restores the same tree.
///
/// Every file is written atomically (a temporary file in the same folder, fsync, rename, fsync
/// of the folder), so a crash leaves either the old or the new bytes. Exports are incremental:
/// a file whose bytes match is not touched, so sync tools and backups see only real changes.
/// The manifest `.shelf-export.json` lists what the export wrote; only files listed there are
/// ever removed, so anything else in the folder is safe.
public enum Exporter {
    /// The manifest's name in the export folder.
    public static let manifestName = ".shelf-export.json"

    /// The manifest: each written path with a fingerprint of what was written
    /// (``PlainTree/fingerprint(of:)``), and the plain area's folders (for empty ones).
    struct Manifest: Codable, Equatable {
        var files: [String: String] = [:]
        var folders: [String]? = nil

        /// The manifest of the export in `folder`, if it is one.
        static func read(in folder: URL) -> Manifest? {
            try? JSONDecoder().decode(Manifest.self, from: Data(contentsOf: folder.appendingPathComponent(manifestName)))
        }
    }

    /// Exports every live item of `store` into `folder` (created if missing).
    public static func export(_ store: LibraryStore, to folder: URL) throws -> ExportSummary {
        let fileManager = FileManager.default
        try attempt(folder) { try fileManager.createDirectory(at: folder, withIntermediateDirectories: true) }
        let manifestURL = folder.appendingPathComponent(manifestName)
        let previous = Manifest.read(in: folder) ?? Manifest()

        var summary = ExportSummary()
        summary.folder = folder.path
        var manifest = Manifest()
        /// Folders with renames or removals; each is synced once, before the manifest is.
        var changedFolders = Set<URL>()
        /// Changed files, written to temporary files first and renamed into place together
        /// after one `sync()`: 10,000 fsyncs would cost far more than the writes themselves.
        var staged: [(temporary: String, target: URL)] = []
        var existingFolders = Set<URL>()
        defer { staged.forEach { try? FileEntries.removeFile($0.temporary) } }
        /// Stages `data` for `path` unless the folder has it already; `prepare` sets what the
        /// staged file carries besides its bytes.
        func place(_ data: Data, at path: String, prepare: (String) throws -> Void = { _ in }) {
            let target = folder.appendingPathComponent(path)
            if PlainTree.kind(at: target.path) == .file, fileManager.contents(atPath: target.path) == data {
                manifest.files[path] = PlainTree.fingerprint(of: data)
                summary.unchanged += 1
                return
            }
            do {
                let parent = target.deletingLastPathComponent()
                if existingFolders.insert(parent).inserted {
                    try fileManager.createDirectory(at: parent, withIntermediateDirectories: true)
                }
                let temporary = try AtomicFile.stage(data, besides: target.path, durably: false)
                staged.append((temporary, target))
                try prepare(temporary)
            } catch {
                // What the last export wrote there, if anything, stays listed as its own.
                manifest.files[path] = previous.files[path]
                summary.failed.append("\(target.path): \(ErrorReason.of(error))")
                return
            }
            manifest.files[path] = PlainTree.fingerprint(of: data)
            // The file's folder holds the rename; its parent may hold a folder just created.
            changedFolders.insert(target.deletingLastPathComponent())
            changedFolders.insert(target.deletingLastPathComponent().deletingLastPathComponent())
            summary.written += 1
        }
        try store.forEachFile { path, data in
            do {
                _ = try ItemPath.validate(path)
            } catch {
                // One bad item costs its own file, never the backup of the rest.
                summary.refused.append("\(error)")
                return
            }
            summary.items += 1
            place(data, at: path)
        }
        /// Copies the plain-file area into `folder`: folders are made (and listed in the manifest,
        /// so empty ones come back on restore), files staged with their mode and time through
        /// `place`, symlinks made as they are. Sockets and devices are reported, not copied.
        func exportPlainFiles() {
            let source = store.plainFilesFolder
            var folders: [String] = []
            for entry in PlainTree.entries(under: source, excludedAtRoot: [manifestName, ".shelf"]) {
                let from = source.path + "/" + entry.path
                let target = folder.appendingPathComponent(entry.path).path
                do {
                    switch entry.kind {
                    case .folder:
                        folders.append(entry.path)
                        if PlainTree.kind(at: target) != .folder {
                            try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
                        }
                    case .file:
                        guard let data = FileManager.default.contents(atPath: from), let shape = FileStatus(of: from) else {
                            throw SystemCallError("read")
                        }
                        summary.otherFiles += 1
                        place(data, at: entry.path) { try PlainTree.apply(shape, to: $0) }
                    case .symlink(let destination):
                        summary.otherFiles += 1
                        manifest.files[entry.path] = "symlink:" + PlainTree.fingerprint(of: Data(destination.utf8))
                        if PlainTree.kind(at: target) == .symlink(target: destination) {
                            summary.unchanged += 1
                        } else {
                            try PlainTree.placeSymlink(to: destination, at: target)
                            summary.written += 1
                        }
                    case .other:
                        summary.failed.append("\(from): not a file, folder or symlink, so not copied")
                    }
                } catch {
                    summary.failed.append("\(target): \(ErrorReason.of(error))")
                }
            }
            summary.folders = folders.count
            manifest.folders = folders.isEmpty ? nil : folders
        }
        exportPlainFiles()
        if !staged.isEmpty {
            AtomicFile.syncStagedFiles()
            while let (temporary, target) = staged.popLast() {
                do {
                    try AtomicFile.publish(temporary, as: target.path)
                } catch {
                    let path = String(target.path.dropFirst(folder.path.count + 1))
                    manifest.files[path] = previous.files[path]
                    summary.written -= 1
                    summary.failed.append("\(target.path): \(ErrorReason.of(error))")
                }
            }
        }

        for (path, writtenHash) in previous.files.sorted(by: { $0.key < $1.key })
        where manifest.files[path] == nil && (try? ItemPath.checkComponents(of: path)) != nil {
            let target = folder.appendingPathComponent(path)
            guard let current = PlainTree.fingerprint(at: target.path) else { continue }
            guard current == writtenHash else {
                summary.keptEdited.append(path)
                continue
            }
            try attempt(target) { try fileManager.removeItem(at: target) }
            changedFolders.insert(removeEmptyFolders(from: target.deletingLastPathComponent(), upTo: folder))
            summary.removed += 1
        }
        let root = folder.standardizedFileURL.path
        for changed in Set(changedFolders.map(\.standardizedFileURL)).sorted(by: { $0.path < $1.path })
        where changed.path.hasPrefix(root) && fileManager.fileExists(atPath: changed.path) {
            try attempt(changed) { try AtomicFile.syncFolder(changed.path) }
        }

        // Last, so that a manifest on disk never lists a path before its file is durable; and
        // only when it changed, so an export that changed nothing touches nothing.
        guard manifest != previous || !fileManager.fileExists(atPath: manifestURL.path) else { return summary }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try attempt(manifestURL) {
            try AtomicFile.write(encoder.encode(manifest), to: manifestURL.path)
            try AtomicFile.syncFolder(folder.path)
        }
        return summary
    }

    /// Removes `start` and its parents while they are empty, never `root` itself; returns the
    /// first folder kept, whose entries changed.
    private static func removeEmptyFolders(from start: URL, upTo root: URL) -> URL {
        var folder = start.standardizedFileURL
        let root = root.standardizedFileURL
        while folder.path.hasPrefix(root.path + "/"),
              (try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true,
              (try? FileManager.default.removeItem(at: folder)) != nil {
            folder = folder.deletingLastPathComponent()
        }
        return folder
    }

    /// Runs `body`, turning its failure into `ImportError.exportFailed` naming `url`.
    private static func attempt(_ url: URL, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as ImportError {
            throw error
        } catch {
            throw ImportError.exportFailed(path: url.path, reason: ErrorReason.of(error))
        }
    }
}
