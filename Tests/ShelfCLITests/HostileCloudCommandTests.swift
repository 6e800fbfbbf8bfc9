import Foundation
import Testing
import TestSupport
import TestTraits

/// What a person sees when someone else writes into their cloud folder: the batch is held back
/// and named in `shelf cloud status`, exports go on, and forget-device drops it. And a library
/// that took such items before the checks: export reports them, a mount repairs it.
@Suite(.serialized, .scratchFolders) struct HostileCloudCommandTests {
    static let hostilePath = "../../../../../tmp/x/pwned-note.md"

    @Test func aHostileBatchIsHeldBackNamedInTheStatusAndForgettingItsDeviceDropsIt() throws {
        let a = try ShelfCLI()
        let b = try ShelfCLI()
        let cloud = a.scratch.appendingPathComponent("cloud")
        try a.run("init", a.library.path)
        try a.run("import", ShelfCLI.samples.appendingPathComponent("library").path)
        try b.run("init", b.library.path)
        #expect(try a.run("cloud", "link", cloud.path, "--device", "laptop").succeeded)

        // A batch like a real one, pointing at real content, from a device nobody linked.
        let hash = try #require(FileManager.default.subpaths(atPath: cloud.path + "/content")?
            .map { ($0 as NSString).lastPathComponent }.first { $0.count == 64 })
        let evil = "0badbad0-0000-4000-8000-000000000001"
        try FileManager.default.createDirectory(at: cloud.appendingPathComponent("log/\(evil)"), withIntermediateDirectories: true)
        try Data(#"{"id":"\#(evil)","joined":0,"name":"evil"}"#.utf8).write(to: cloud.appendingPathComponent("devices/\(evil).json"))
        let change = #"{"attributes":{},"device":"\#(evil)","hash":"\#(hash)","id":"\#(evil)-1-0","item":"6f1c2e4a-1111-4222-8333-944445555666","kind":"note","modified":1700000000,"operation":"put","path":"\#(Self.hostilePath)","permissions":2559,"size":10,"time":1700000000,"title":"Pwned"}"#
        try Data(#"{"changes":[\#(change)],"device":"\#(evil)","number":1}"#.utf8)
            .write(to: cloud.appendingPathComponent("log/\(evil)/000000000001.json"))

        let linked = try b.run("cloud", "link", cloud.path, "--device", "desk")
        #expect(linked.succeeded, "\(linked)")
        try b.run("sync")
        let status = try b.run("cloud", "status", "--json")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let waiting = try #require(json["waiting"] as? String, "\(status)")
        #expect(waiting.contains("batch 1 of device evil is refused") && waiting.contains(Self.hostilePath)
                    && waiting.contains("forget-device \(evil)"), "\(waiting)")
        #expect(try b.run("cloud", "status").stdout.contains("Held back: "))
        #expect(!(try b.run("list", "--json").stdout.contains("pwned")), "nothing of it is applied")
        let export = try b.run("export", b.scratch.appendingPathComponent("export").path)
        #expect(export.succeeded, "\(export)")

        let forgot = try b.run("cloud", "forget-device", "evil")
        #expect(forgot.succeeded, "\(forgot)")
        try b.run("sync")
        let after = try #require(try JSONSerialization.jsonObject(with: Data(try b.run("cloud", "status", "--json").stdout.utf8)) as? [String: Any])
        #expect(after["waiting"] == nil, "\(after)")
        #expect(!(try b.run("list", "--json").stdout.contains("pwned")))
    }

    @Test func exportReportsAnItemAtAnInvalidPathAndAMountRepairsTheLibrary() throws {
        try ShelfCLI.withSampleLibrary { cli, _ in
            let listed = try cli.run("list", "--json").stdout
            let items = try #require(try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [[String: Any]])
            let id = try #require(items.first?["id"] as? String)
            try LibraryDatabase.execute("UPDATE item SET path = ? WHERE id = ?", [Self.hostilePath, id], inLibrary: cli.library)

            let folder = cli.scratch.appendingPathComponent("export")
            let export = try cli.run("export", folder.path)
            #expect(!export.succeeded)
            #expect(export.stdout.contains("not exported: \(Self.hostilePath)"), "\(export)")
            #expect(export.stderr.contains("1 item not exported") && export.stderr.contains("mount the library once")
                        && !export.stderr.contains("writable"), "\(export)")
            let written = FileManager.default.subpaths(atPath: folder.path)?.filter { $0.hasSuffix(".md") } ?? []
            #expect(written.count == items.count - 1, "every other file is written")

            try cli.withMount { _ in }
            let trash = try cli.run("trash", "list")
            #expect(trash.stdout.contains(id) && trash.stdout.contains("is not valid"), "\(trash)")
            #expect(try cli.run("export", folder.path).succeeded)
        }
    }
}
