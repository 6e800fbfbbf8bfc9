import Foundation
import ShelfMarkdown
import ShelfStore
import Testing
import TestSupport
import TestTraits

/// `shelf watch --json` reports what happens to items, whoever does it.
@Suite(.serialized, .scratchFolders) struct WatchCommandTests {
    struct Event: Decodable, Equatable {
        var event: String
        var path: String
        var from: String?
        var device: String?
        var reason: String?
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
            let watcher = try startWatch(cli, json: json, writingTo: output)
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

    /// Issue #22: a conflict copy and a stop of sync are told with why, not only that.
    @Test func aConflictAndAStoppedSyncAreReportedWithWhy() throws {
        let a = try ShelfCLI()
        let b = try ShelfCLI()
        let cloud = a.scratch.appendingPathComponent("cloud")
        let path = "Notes/Stoic themes.md"
        try a.run("init", a.library.path)
        try a.run("import", ShelfCLI.samples.appendingPathComponent("library").path)
        try a.run("cloud", "link", cloud.path, "--device", "laptop")
        try b.run("init", b.library.path)
        try b.run("cloud", "link", cloud.path, "--device", "desk")
        #expect(try b.run("download", path).status == 0)
        let output = b.scratch.appendingPathComponent("watch.jsonl")
        let watcher = try startWatch(b, writingTo: output)
        defer { kill(watcher.processIdentifier, SIGKILL) }

        // Both devices rewrite the note whole while apart: no line merges, so one keeps a copy.
        for (device, words) in [(a, "The laptop's version.\n"), (b, "The desk's version.\n")] {
            let store = try LibraryStore.open(at: device.library)
            try store.write { writer in
                let record = try #require(try writer.record(atPath: path))
                _ = try writer.saveFile(Data(words.utf8), of: record.item.id, kind: .note, at: path,
                                        basedOn: record.version, modified: Date())
            }
        }
        #expect(try a.run("sync").status == 0)
        #expect(try b.run("sync").status == 0)
        #expect(try eventually(within: .seconds(10)) { try events(in: output).contains { $0.event == "conflict" } })
        let conflict = try #require(try events(in: output).first { $0.event == "conflict" })
        #expect(conflict.path.hasPrefix("Notes/Stoic themes (conflict"))
        #expect(conflict.reason?.contains("edited on two devices at once") == true)

        // The cloud folder goes away (a share not mounted): sync stops, and says so; it comes back.
        let away = a.scratch.appendingPathComponent("cloud-away")
        try FileManager.default.moveItem(at: cloud, to: away)
        #expect(try b.run("sync").status != 0)
        #expect(try eventually(within: .seconds(10)) { try events(in: output).contains { $0.event == "sync" } })
        let stopped = try #require(try events(in: output).first { $0.event == "sync" })
        #expect(stopped.reason?.hasPrefix("sync stopped: the cloud at \(cloud.path) is not there") == true)
        try FileManager.default.moveItem(at: away, to: cloud)
        #expect(try b.run("sync").status == 0)
        #expect(try eventually(within: .seconds(10)) {
            try events(in: output).contains { $0.event == "sync" && $0.reason == "sync resumed" }
        })
    }

    /// `shelf watch` (`--json` unless told) of `cli`'s library, once it is past its start (it
    /// begins at the feed's end).
    private func startWatch(_ cli: ShelfCLI, json: Bool = true, writingTo output: URL) throws -> Process {
        try Data().write(to: output)
        let watcher = Process()
        watcher.executableURL = ShelfCLI.executable
        watcher.arguments = ["watch", "--library", cli.library.path] + (json ? ["--json"] : [])
        watcher.environment = cli.environment
        watcher.standardOutput = try FileHandle(forWritingTo: output)
        watcher.standardError = FileHandle.nullDevice
        try watcher.run()
        // It is there once it sleeps between its looks.
        guard ProcessProbe.waitUntilSleeping(watcher.processIdentifier, in: "nanosleep") else {
            kill(watcher.processIdentifier, SIGKILL)
            throw WatchDidNotStart()
        }
        return watcher
    }

    private struct WatchDidNotStart: Error, CustomStringConvertible {
        var description: String { "shelf watch did not reach its loop" }
    }

    private func events(in output: URL) throws -> [Event] {
        try String(contentsOf: output, encoding: .utf8).split(separator: "\n").compactMap {
            try? JSONDecoder().decode(Event.self, from: Data($0.utf8))
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
        let watcher = try startWatch(b, writingTo: output)
        defer { kill(watcher.processIdentifier, SIGKILL) }

        func saw(_ expected: Event) throws -> Bool {
            try eventually(within: .seconds(10)) {
                try events(in: output).contains { Event(event: $0.event, path: $0.path, from: $0.from, device: $0.device) == expected }
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
