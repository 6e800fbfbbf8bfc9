import ArgumentParser
import Foundation
import ShelfStore

struct RenameCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rename",
        abstract: "Give item files named before Shelf's link-safe naming names that are valid Obsidian link targets.",
        discussion: """
            New items never get `# ^ [ ] |` or `\\ : * ? " < >` in their file names; files named \
            earlier keep their paths until you run this. Each such file moves to the name a new \
            item would get (`Dune (Dune, #1) - Frank Herbert.md` → `Dune (Dune, 1) - Frank Herbert.md`), \
            and `[[…]]` links to it in every item are rewritten. A running mount shows the moves at once.
            """)

    @OptionGroup var library: LibraryOptions

    @Flag(help: "Move every item file whose name breaks Obsidian links (required: says what this command does).")
    var safeNames = false

    @Flag(help: "Print what would move and change nothing.")
    var dryRun = false

    func run() throws {
        guard safeNames else {
            throw CLIError("say what to rename: `shelf rename --safe-names` (add --dry-run to see the moves first)")
        }
        let store = try library.open()
        let renames = try store.write { try SafeNames.rename(in: $0, dryRun: dryRun) }
        for rename in renames {
            let links = rename.rewrittenLinks.isEmpty ? "" : " (links rewritten in \(rename.rewrittenLinks.joined(separator: ", ")))"
            print("\(rename.from) → \(rename.to)\(links)")
        }
        let verb = dryRun ? "would move" : "moved"
        print(renames.isEmpty ? "Every item file name is already a valid link target." : "\(verb) \(renames.count) item file\(renames.count == 1 ? "" : "s")")
    }
}
