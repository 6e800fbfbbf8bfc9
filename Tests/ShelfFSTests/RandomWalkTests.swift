import Foundation
import Testing
import TestSupport
import TestTraits
import ShelfModel
import ShelfStore
@testable import ShelfFS

/// xfstests' fsx through a real mount: `scripts/fsx.py` applies a random walk of file operations
/// to item files and to a shadow copy in a plain folder, and compares the two after every step;
/// after an unmount and a fresh mount of the same library, every file must still read as its
/// shadow. Fixed seeds here; `scripts/soak` walks longer (`FORGET=1`: while the kernel forgets).
@Suite(.serialized, .scratchFolders) struct RandomWalkTests {
    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/fsx.py").path

    @Test(arguments: [11, 12, 13])
    func itemFilesReadBackExactlyAsWrittenUnderAnySequence(seed: Int) throws {
        try walk(seed: seed)
    }

    /// Editors' atomic saves between writes, and descriptors held open across them (fsx's
    /// `-c`): a save ending after a rename over its file, or after the same file's next save,
    /// once gave the name to a new inode that read the version before, and writes through the
    /// file left behind were merged over the newer one.
    @Test(arguments: [["--only", "replace,rewrite,pwrite,truncate,session,two_descriptors"], ["--reopen", "8"]])
    func itemFilesReadBackExactlyThroughSavesThatOverlap(options: [String]) throws {
        try walk(seed: 21, options: options)
    }

    /// The same walk while the kernel forgets cached files every moment, as memory pressure
    /// makes it: a file forgotten between a writer's close and its save, or while its first
    /// save lands, once lost its unsaved bytes or got a second inode showing older ones.
    @Test func itemFilesReadBackExactlyWhileTheKernelForgetsThem() throws {
        let forgetting = try KernelForgetting()
        defer { forgetting.stop() }
        try walk(seed: 12)
    }

    private func walk(seed: Int, options: [String] = []) throws {
        let library = try MountableLibrary()
        let note = try library.addNote()
        let book = try library.addBook()
        let shadow = library.folder.appendingPathComponent("shadow").path
        try library.withMount { mount in
            let walk = try mount.run("python3", [Self.script, "--mount", mount.mountpoint, "--shadow", shadow,
                                                 "--seed", String(seed), "--steps", "300"] + options + [note.path, book.path],
                                     timeout: .seconds(120))
            #expect(walk.succeeded, "\(walk.stderr)")
        }
        try library.withMount { mount in
            let verify = try mount.run("python3", [Self.script, "--mount", mount.mountpoint, "--shadow", shadow, "--verify"],
                                       timeout: .seconds(30))
            #expect(verify.succeeded, "after a remount: \(verify.stderr)")
        }
    }
}
