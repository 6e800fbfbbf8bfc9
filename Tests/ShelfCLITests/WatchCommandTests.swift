import Foundation
import ShelfMarkdown
import ShelfStore
import Testing
import TestSupport

/// `shelf watch --json` reports what happens to items, whoever does it.
@Suite(.serialized, .scratchFolders) struct WatchCommandTests {
    struct Event: Decodable, Equatable {
        var event: String
        var path: String
        var from: String?
        var device: String?
    }

    /// Issue #22: `shelf watch` printed `error Books/X.md` without the reason.
    @Test func anInvalidSaveIsReportedWithItsLineAndMessage() throws {
        let cli = try ShelfCLI()
        try cli.run("init", cli.library.path)
        try cli.run("import", ShelfCLI.samples.appendingPathComponent("library").path)
        let store = try LibraryStore.open(at: cli.library)
        let path = "Books/Meditations - Marcus Aurelius.md"
        let id = try #require(try store.record(atPath: path)).item.id
        for json in [true, false] {
            let output = cli.scratch.appendingPathComponent("watch-\(json).out")
            FileManager.default.createFile(atPath: output.path, contents: nil)
            let watcher = Process()
            watcher.executableURL = ShelfCLI.executable
            watcher.arguments = ["watch", "--library", cli.library.path] + (json ? ["--json"] : [])
            watcher.environment = cli.environment
            watcher.standardOutput = try FileHandle(forWritingTo: output)
            watcher.standardError = FileHandle.nullDevice
            try watcher.run()
            defer { kill(watcher.processIdentifier, SIGKILL) }
            // The watch starts at the feed's end, whenever it gets there: save again until it tells.
            let expected = json ? #""reason":"line 29: unexpected line in a passage"#
                                : "error\t\(path)\tline 29: unexpected line in a passage"
            #expect(try eventually(within: .seconds(20)) {
                try store.write {
                    _ = try $0.saveDraft(id: id, bytes: Data("invalid \(UUID())".utf8),
                                         diagnostics: [Diagnostic(line: 29, message: "unexpected line in a passage")])
                }
                return try eventually(within: .milliseconds(500)) {
                    try String(contentsOf: output, encoding: .utf8).contains(expected)
                }
            })
        }
    }

    @Test func reportsDownloadsRenamesErrorsAdditionsAndRemovals() throws {
        let a = try ShelfCLI()
        let b = try ShelfCLI()
        let cloud = a.scratch.appendingPathComponent("cloud").path
        try a.run("init", a.library.path)
        try a.run("import", ShelfCLI.samples.appendingPathComponent("library").path)
        try a.run("cloud", "link", cloud, "--device", "laptop")
        try b.run("init", b.library.path)
        try b.run("cloud", "link", cloud, "--device", "desk")

        let output = b.scratch.appendingPathComponent("watch.jsonl")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        let watcher = Process()
        watcher.executableURL = ShelfCLI.executable
        watcher.arguments = ["watch", "--json", "--library", b.library.path]
        watcher.environment = b.environment
        watcher.standardOutput = try FileHandle(forWritingTo: output)
        watcher.standardError = FileHandle.nullDevice
        try watcher.run()
        defer { kill(watcher.processIdentifier, SIGKILL) }
        // The watch starts at the feed's end: it is there once it sleeps between its looks.
        try #require(ProcessProbe.waitUntilSleeping(watcher.processIdentifier, in: "nanosleep"),
                     "shelf watch did not reach its loop")

        func saw(_ expected: Event) throws -> Bool {
            try eventually(within: .seconds(10)) {
                let lines = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
                return lines.split(separator: "\n").contains { line in
                    (try? JSONDecoder().decode(Event.self, from: Data(line.utf8))) == expected
                }
            }
        }

        #expect(try b.run("download", "Notes/Stoic themes.md").status == 0)
        #expect(try saw(Event(event: "downloaded", path: "Notes/Stoic themes.md", device: "desk")))

        try b.withMount { mount in
            try FileManager.default.moveItem(atPath: mount + "/Notes/Stoic themes.md", toPath: mount + "/Notes/Stoics.md")
            #expect(try saw(Event(event: "renamed", path: "Notes/Stoics.md", from: "Notes/Stoic themes.md", device: "desk")))

            try Data("---\ntitle: [broken\n---\n".utf8).write(to: URL(fileURLWithPath: mount + "/Notes/Stoics.md"))
            #expect(try saw(Event(event: "error", path: "Notes/Stoics.md", device: "desk")))

            try Data("A new note.\n".utf8).write(to: URL(fileURLWithPath: mount + "/Notes/New.md"))
            #expect(try saw(Event(event: "added", path: "Notes/New.md", device: "desk")))

            try FileManager.default.removeItem(atPath: mount + "/Notes/New.md")
            #expect(try saw(Event(event: "removed", path: "Notes/New.md", device: "desk")))
        }
    }
}
