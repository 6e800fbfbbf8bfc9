import Testing
@testable import ShelfFS
import TestTraits

@Suite(.scratchFolders) struct PathRulesTests {
    @Test(arguments: ["Books/Dune - Frank Herbert.md", "Notes/Idea.md", "Books/Shelf 1/Dune.md", "Notes/a/b/c.md"])
    func itemPaths(_ path: String) {
        #expect(PathRules.isItemPath(MountPath(path)))
    }

    @Test(arguments: ["Books/4913", "Books/.Dune.md.swp", "Books/Dune.md~", "Notes/sedAbC123", "Notes/.goutputstream-XYZ12",
                      "Notes/x.md___jb_tmp___", "Notes/x.md___jb_old___", "Notes/.#x.md", "Dune.md", ".trash/x.md",
                      "Notes/.obsidian/x.md", "Books/.md", "attachments/x.md", "Books"])
    func plainPaths(_ path: String) {
        #expect(!PathRules.isItemPath(MountPath(path)))
    }

    @Test func pathParts() {
        let path = MountPath("Books/Shelf 1/Dune.md")
        #expect(path.name == "Dune.md")
        #expect(path.parent == MountPath("Books/Shelf 1"))
        #expect(path.parent.parent.parent == .root)
        #expect(MountPath.root.appending("Books") == MountPath("Books"))
        #expect(path.isInside(MountPath("Books")))
        #expect(!MountPath("Bookshelf/x.md").isInside(MountPath("Books")))
        #expect(path.replacingPrefix(MountPath("Books/Shelf 1"), with: MountPath("Books/Read")) == MountPath("Books/Read/Dune.md"))
    }
}
