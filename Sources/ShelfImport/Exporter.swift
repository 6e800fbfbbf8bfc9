import Foundation
import Glibc
import ShelfStore

/// What an export did.
public struct ExportSummary: Hashable, Sendable, CustomStringConvertible {
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

    public var description: String {
        (["\(written) written, \(unchanged) unchanged, \(removed) removed"]
            + keptEdited.map { "kept \($0): edited since the last export, so not removed" }
            + failed.map { "could not write \($0)" }
            + refused.map { "not exported: \($0)" })
            .joined(separator: "\n")
    }
}

/// Writes the library as the Markdown tree the mount shows (`Books/…md`, `Notes/…md`) into a
/// folder, for backups and for tools that cannot use the mount.
///
/// Every file is written atomically (a temporary file in the same folder, fsync, rename, fsync
/// of the folder), so a crash leaves either the old or the new bytes. Exports are incremental:
/// a file whose bytes match is not touched, so sync tools and backups see only real changes.
/// The manifest `.shelf-export.json` lists what the export wrote; only files listed there are
/// ever removed, so anything else in the folder is safe.
public enum Exporter {
    /// The manifest's name in the export folder.
    public static let manifestName = ".shelf-export.json"

    /// The manifest: each written path with a hash of the bytes written.
    private struct Manifest: Codable, Equatable {
        var files: [String: String] = [:]
    }

    /// Exports every live item of `store` into `folder` (created if missing).
    public static func export(_ store: LibraryStore, to folder: URL) throws -> ExportSummary {
        let fileManager = FileManager.default
        try attempt(folder) { try fileManager.createDirectory(at: folder, withIntermediateDirectories: true) }
        let manifestURL = folder.appendingPathComponent(manifestName)
        let previous = (try? JSONDecoder().decode(Manifest.self, from: Data(contentsOf: manifestURL))) ?? Manifest()

        var summary = ExportSummary()
        var manifest = Manifest()
        /// Folders with renames or removals; each is synced once, before the manifest is.
        var changedFolders = Set<URL>()
        /// Changed files, written to temporary files first and renamed into place together
        /// after one `sync()`: 10,000 fsyncs would cost far more than the writes themselves.
        var staged: [(temporary: String, target: URL)] = []
        var existingFolders = Set<URL>()
        defer { staged.forEach { unlink($0.temporary) } }
        try store.forEachFile { path, data in
            do {
                _ = try ItemPath.validate(path)
            } catch {
                // One bad item costs its own file, never the backup of the rest.
                summary.refused.append("\(error)")
                return
            }
            let target = folder.appendingPathComponent(path)
            if fileManager.contents(atPath: target.path) == data {
                manifest.files[path] = hash(data)
                summary.unchanged += 1
                return
            }
            do {
                let parent = target.deletingLastPathComponent()
                if existingFolders.insert(parent).inserted {
                    try fileManager.createDirectory(at: parent, withIntermediateDirectories: true)
                }
                staged.append((try AtomicFile.stage(data, besides: target.path, durably: false), target))
            } catch {
                // What the last export wrote there, if anything, stays listed as its own.
                manifest.files[path] = previous.files[path]
                summary.failed.append("\(target.path): \(ErrorReason.of(error))")
                return
            }
            manifest.files[path] = hash(data)
            // The file's folder holds the rename; its parent may hold a folder just created.
            changedFolders.insert(target.deletingLastPathComponent())
            changedFolders.insert(target.deletingLastPathComponent().deletingLastPathComponent())
            summary.written += 1
        }
        if !staged.isEmpty {
            syncStagedFiles()
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
            guard let data = fileManager.contents(atPath: target.path) else { continue }
            guard hash(data) == writtenHash else {
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
            try attempt(changed) { try syncFolder(changed) }
        }

        // Last, so that a manifest on disk never lists a path before its file is durable; and
        // only when it changed, so an export that changed nothing touches nothing.
        guard manifest != previous || !fileManager.fileExists(atPath: manifestURL.path) else { return summary }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try attempt(manifestURL) {
            try AtomicFile.write(encoder.encode(manifest), to: manifestURL.path)
            try syncFolder(folder)
        }
        return summary
    }

    /// Makes every staged file durable in one call. `sync()` rather than `syncfs()` (which
    /// Glibc's Swift module does not expose): on Linux it returns once the data is written.
    private static func syncStagedFiles() {
        sync()
    }

    /// Makes a rename in `folder` durable.
    private static func syncFolder(_ folder: URL) throws {
        let descriptor = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemCallError("open folder \(folder.lastPathComponent)") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw SystemCallError("sync folder \(folder.lastPathComponent)") }
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

    private static func hash(_ data: Data) -> String {
        String(StableHash.fnv1a64(data), radix: 16) + "-\(data.count)"
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
