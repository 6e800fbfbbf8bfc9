import Foundation
import Testing
import TestSupport
import TestTraits

/// `shelf export` as a backup of everything the mount shows, and `shelf import` of a folder as
/// a restore that never undoes work done in Shelf since.
@Suite(.scratchFolders) struct BackupRestoreTests {
    /// What a tree holds, path by path: a folder, a symlink's target, or a file's bytes.
    private static func tree(at root: String) throws -> [String: String] {
        try TestMount.perform(on: root, timeout: .seconds(20)) {
            var tree: [String: String] = [:]
            let manager = FileManager.default
            for case let path as String in manager.enumerator(atPath: root) ?? FileManager.DirectoryEnumerator() {
                let full = root + "/" + path
                let type = try manager.attributesOfItem(atPath: full)[.type] as? FileAttributeType
                switch type {
                case .typeDirectory?: tree[path] = "folder"
                case .typeSymbolicLink?: tree[path] = "symlink " + (try manager.destinationOfSymbolicLink(atPath: full))
                default: tree[path] = try Data(contentsOf: URL(fileURLWithPath: full)).base64EncodedString()
                }
            }
            return tree
        }
    }

    /// Plain files people keep in a vault, written through the mount.
    private static let vaultFiles = """
        mkdir -p .obsidian/plugins Notes/attachments Books/Shelf/Empty && printf '{"theme":"dark"}' > .obsidian/app.json \
        && printf '*.tmp\\n' > .gitignore && head -c 3000 /dev/urandom > Notes/attachments/cover.png \
        && ln -s attachments/cover.png Notes/cover-link && printf 'hand written\\n' > Notes/Hand.md \
        && printf 'hidden\\n' > Notes/.draft.md
        """

    @Test func exportRestoresTheWholeMountedTreeByteForByte() throws {
        let source = try ShelfCLI()
        try source.run("init", source.library.path)
        try source.run("import", ShelfCLI.samples.appendingPathComponent("library").path)
        let original = try source.withMount { mountpoint in
            let made = try source.tool("/bin/sh", "-c", "cd '\(mountpoint)' && \(Self.vaultFiles)")
            #expect(made.succeeded, "\(made)")
            #expect(try source.run("status").status == 0, "every save is committed")
            return try Self.tree(at: mountpoint)
        }
        #expect(original[".obsidian/app.json"] != nil && original["Notes/cover-link"] == "symlink attachments/cover.png")
        #expect(original["Books/Shelf/Empty"] == "folder")

        let backup = source.scratch.appendingPathComponent("backup").path
        let exported = try source.run("export", backup)
        #expect(exported.status == 0, "\(exported)")
        #expect(exported.stdout.contains("Exported 8 items, 5 other files and 7 folders to \(backup)"), "it says what it wrote: \(exported.stdout)")
        var backupTree = try Self.tree(at: backup)
        #expect(backupTree.removeValue(forKey: ".shelf-export.json") != nil)
        #expect(backupTree == original, "the export is the tree the mount shows")

        let restored = try ShelfCLI()
        try restored.run("init", restored.library.path)
        let imported = try restored.run("import", backup)
        #expect(imported.status == 0 && imported.stdout.contains("8 added"), "\(imported)")
        #expect(imported.stdout.contains("5 other files of the export restored"), "\(imported.stdout)")
        let restoredTree = try restored.withMount { try Self.tree(at: $0) }
        #expect(restoredTree == original, "a restore gives back the same tree, byte for byte")
        let again = try restored.run("import", backup)
        #expect(again.stdout.contains("0 added, 0 updated, 8 unchanged") && !again.stdout.contains("restored"), "\(again)")

        // Restored into a library that is mounted, and looked at before: the mount shows the
        // plain files at once, not its earlier look at those folders.
        let mounted = try ShelfCLI()
        try mounted.run("init", mounted.library.path)
        try mounted.withMount { mountpoint in
            #expect(try Self.tree(at: mountpoint)[".obsidian/app.json"] == nil)
            #expect(!FileManager.default.fileExists(atPath: mountpoint + "/.obsidian/app.json"))
            let whileMounted = try mounted.run("import", backup)
            #expect(whileMounted.status == 0 && whileMounted.stdout.contains("5 other files of the export restored"),
                    "\(whileMounted)")
            var shown: [String: String] = [:]
            #expect(try eventually(within: .seconds(10)) {
                shown = try Self.tree(at: mountpoint)
                return shown == original
            }, "the mount shows the restore: \(shown.keys.sorted()) against \(original.keys.sorted())")
        }
    }

    @Test func reimportKeepsWhatWasEditedInShelfUnlessAskedToOverwrite() throws {
        let cli = try ShelfCLI()
        try cli.run("init", cli.library.path)
        let samples = ShelfCLI.samples.appendingPathComponent("library").path
        try cli.run("import", samples)
        let note = "Notes/Quotes to revisit.md"
        try cli.withMount { mountpoint in
            let edited = try cli.tool("/bin/sh", "-c", "printf 'edited in Shelf\\n' >> '\(mountpoint)/\(note)'")
            #expect(edited.succeeded, "\(edited)")
            #expect(try cli.run("status").status == 0)
        }
        let editedText = try cli.run("show", note).stdout
        #expect(editedText.hasSuffix("edited in Shelf\n"))

        let again = try cli.run("import", samples)
        #expect(again.status == 0 && again.stdout.contains("0 updated"), "\(again)")
        #expect(again.stdout.contains("kept \(note): edited in Shelf since it was last imported"), "it says so: \(again.stdout)")
        #expect(try cli.run("show", note).stdout == editedText, "the edit is kept")

        let forced = try cli.run("import", "--overwrite-edits", samples)
        #expect(forced.status == 0 && forced.stdout.contains("1 updated"), "\(forced)")
        let sample = try String(contentsOfFile: samples + "/" + note, encoding: .utf8)
        #expect(try cli.run("show", note).stdout == sample, "an explicit flag overwrites")
    }
}
