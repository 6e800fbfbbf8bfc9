import Foundation
import ShelfMarkdown
import ShelfModel

/// One item moved to a name that is a valid Obsidian link target (``SafeNames/rename(in:dryRun:)``).
public struct SafeRename: Hashable, Sendable {
    public var from: String
    public var to: String
    /// The other items whose `[[…]]` links to it were rewritten.
    public var rewrittenLinks: [String]
}

/// `shelf rename --safe-names`: the file names that break links, renamed in one transaction.
public enum SafeNames {
    /// Moves every live item whose file name holds a character that breaks Obsidian links or
    /// other systems' names (`# ^ [ ] |`, `\ : * ? " < >`) to the name new items get
    /// (``FileNaming/safeName(of:)``, numbered if taken), and rewrites `[[Old name]]` links
    /// (also `[[Old name|…]]`, `[[Old name#…]]`) in every item to the new name. Only on request:
    /// a path never moves by surprise. `dryRun`: says what it would do and changes nothing.
    public static func rename(in writer: StoreWriter, dryRun: Bool) throws -> [SafeRename] {
        var files: [(path: String, content: Data)] = []
        try writer.queries.forEachLiveFile { files.append(($0, $1)) }
        var taken = Set(files.map(\.path))
        var renames: [SafeRename] = []
        for (path, _) in files {
            let name = String(ItemPath.fileName(of: path))
            let safe = FileNaming.safeName(of: name)
            guard safe != name else { continue }
            let folder = String(ItemPath.folder(of: path)) + "/"
            let target = folder + FileNaming.uniqued(safe) { taken.contains(folder + $0) }
            taken.insert(target)
            renames.append(SafeRename(from: path, to: target, rewrittenLinks: []))
        }
        guard !renames.isEmpty else { return [] }
        let links = renames.map { rename in
            (old: FileNaming.title(fromFileName: String(ItemPath.fileName(of: rename.from))),
             new: FileNaming.title(fromFileName: String(ItemPath.fileName(of: rename.to))))
        }
        var rewritten: [String: Data] = [:]
        for (path, content) in files {
            guard var text = String(validating: content, as: UTF8.self), text.contains("[[") else { continue }
            var changed = false
            for (index, link) in links.enumerated() {
                for end in ["]]", "|", "#", "^"] where text.contains("[[" + link.old + end) {
                    text = text.replacingOccurrences(of: "[[" + link.old + end, with: "[[" + link.new + end)
                    changed = true
                    if !renames[index].rewrittenLinks.contains(path) { renames[index].rewrittenLinks.append(path) }
                }
            }
            if changed { rewritten[path] = Data(text.utf8) }
        }
        guard !dryRun else { return renames }
        for (path, content) in rewritten.sorted(by: { $0.key < $1.key }) {
            guard let record = try writer.record(atPath: path) else { continue }
            _ = try writer.saveFile(content, of: record.item.id, kind: record.item.kind, at: path, basedOn: record.version, modified: Date())
        }
        for rename in renames {
            guard let record = try writer.record(atPath: rename.from) else { continue }
            _ = try writer.move(id: record.item.id, to: rename.to)
        }
        return renames
    }
}
