import Foundation
import Testing
import TestSupport
import TestTraits
import ShelfModel
import ShelfStore
@testable import ShelfFS

/// The tools people keep a vault with, run for real on a mount: git, tar and rsync walk the
/// tree, replace files by unlink + create, and must find a clean, stable tree.
@Suite(.serialized, .scratchFolders) struct VaultToolsTests {
    /// git with a fixed identity, no pager, no user or system config.
    private static let git = "env GIT_CONFIG_NOSYSTEM=1 HOME=/nonexistent GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t git -c core.pager=cat -c init.defaultBranch=main"

    /// The id of the live item at each path.
    private func ids(_ library: MountableLibrary, _ paths: [String]) throws -> [String: ItemID] {
        var ids: [String: ItemID] = [:]
        for path in paths {
            guard let record = try library.store.record(atPath: path) else { throw MissingItem(path: path) }
            ids[path] = record.item.id
        }
        return ids
    }

    @Test func gitWorkflowKeepsATreeCleanAndItemsTheirIdentity() throws {
        let library = try MountableLibrary()
        let book = try library.addBook()
        try library.withMount { mount in
            // Notes written by hand: no `id:` line, so only their path tells who they are.
            try mount.sh("printf 'Line one\\n' > 'Notes/Quotes to revisit.md' && printf 'Ideas\\n' > Notes/Ideas.md && mkdir -p .obsidian && printf '{}' > .obsidian/app.json")
            try library.waitUntilSaved()
            let paths = [book.path, "Notes/Quotes to revisit.md", "Notes/Ideas.md"]
            let before = try ids(library, paths)
            let git = Self.git
            func clean(_ step: String) throws {
                let status = try mount.sh("\(git) status --porcelain --untracked-files=all")
                #expect(status.isEmpty, "after \(step): \(status)")
            }
            try mount.sh("\(git) init -q && \(git) add -A && \(git) commit -qm init")
            #expect(!(try mount.sh("\(git) ls-files")).contains(".shelf"), "the status folder is not committed")
            try clean("commit")

            try mount.sh("echo edit >> 'Notes/Quotes to revisit.md' && \(git) stash -q")
            try clean("stash")
            try mount.sh("\(git) stash pop -q")
            #expect(try mount.text("Notes/Quotes to revisit.md") == "Line one\nedit\n")
            try mount.sh("\(git) checkout -- .")
            try clean("checkout -- .")
            try mount.sh("echo edit >> Notes/Ideas.md && \(git) reset -q --hard")
            try clean("reset --hard")

            // A branch that changes one note and deletes another; switching back and forth
            // replaces and recreates them.
            try mount.sh("\(git) checkout -q -b other && echo changed >> Notes/Ideas.md && \(git) rm -q 'Notes/Quotes to revisit.md' && \(git) commit -qam change")
            try clean("commit on a branch")
            try mount.sh("\(git) checkout -q main")
            try clean("switch to main")
            #expect(try mount.text("Notes/Ideas.md") == "Ideas\n")
            try mount.sh("\(git) checkout -q other && \(git) checkout -q main")
            try clean("switch there and back")
            try mount.sh("\(git) gc -q", timeout: .seconds(30))
            try clean("gc")

            try library.waitUntilSaved()
            #expect(try ids(library, paths) == before, "every item kept its id")
            #expect(try library.store.trashedItems().isEmpty, "nothing went to the trash")
            #expect(try library.store.record(atPath: "Notes/Quotes to revisit.md")?.content == Data("Line one\n".utf8))
        }
    }

    @Test func unlinkThenCreateKeepsTheItemAndItsHistory() throws {
        let library = try MountableLibrary()
        try library.withMount { mount in
            try mount.sh("printf 'first\\n' > Notes/Hand.md")
            try library.waitUntilSaved()
            let id = try #require(try library.store.record(atPath: "Notes/Hand.md")).item.id
            try mount.sh("printf 'second\\n' > /tmp/shelf-vault-copy.$$ && rm Notes/Hand.md && cp /tmp/shelf-vault-copy.$$ Notes/Hand.md && rm /tmp/shelf-vault-copy.$$")
            try library.waitUntilSaved()
            let record = try #require(try library.store.record(atPath: "Notes/Hand.md"))
            #expect(record.item.id == id, "rm x; cp y x is the same item")
            #expect(record.content == Data("second\n".utf8))
            #expect(try library.store.history(id: id).contains { $0.version < record.version }, "its history goes on")
            #expect(try library.store.trashedItems().isEmpty)
            // Only the same path brings the deleted item back.
            try mount.sh("rm Notes/Hand.md && printf 'third\\n' > Notes/Other.md")
            try library.waitUntilSaved()
            #expect(try library.store.record(atPath: "Notes/Other.md")?.item.id != id, "another path is another item")
        }
    }

    @Test func tarAndASecondRsyncFindNothingChanging() throws {
        let library = try MountableLibrary()
        try library.addBook()
        try library.addNote()
        let scratch = try TemporaryFolder()
        try library.withMount { mount in
            try mount.sh("mkdir -p .obsidian Notes/att && printf '{}' > .obsidian/app.json && printf png > Notes/att/a.png")
            try library.waitUntilSaved()
            let backup = scratch.child("backup").path
            let archive = scratch.child("vault.tgz").path
            let tar = try mount.shell("tar czf '\(archive)' -C . .", timeout: .seconds(30))
            #expect(tar.succeeded, "tar exits 0: \(tar)")
            #expect(!(try mount.sh("tar tzf '\(archive)'")).contains(".shelf"))
            try mount.sh("rsync -a ./ '\(backup)/'", timeout: .seconds(30))
            let second = try mount.sh("rsync -a --itemize-changes --stats ./ '\(backup)/'", timeout: .seconds(30))
            // An itemized change is `YXcstpoguax name`: Y one of `<>ch.*`, X one of `fdLDS`.
            let itemized = second.split(separator: "\n").filter { line in
                line.count > 12 && "<>ch.*".contains(line.first!) && "fdLDS".contains(line.dropFirst().first!)
                    && line.dropFirst(11).first == " "
            }
            #expect(itemized.isEmpty, "the second rsync changes nothing: \(second)")
            #expect(second.contains("Number of regular files transferred: 0"), "\(second)")
            #expect(!FileManager.default.fileExists(atPath: backup + "/.shelf"))
        }
    }
}

private struct MissingItem: Error, CustomStringConvertible {
    var path: String
    var description: String { "no item at \(path)" }
}
