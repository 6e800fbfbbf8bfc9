import Foundation
import Glibc
import ShelfStore
import Testing
import TestDevices
@testable import ShelfSync
import TestTraits

/// Attachments, settings and folders — the mount's plain files — through the cloud.
@Suite(.scratchFolders) struct PlainFileSyncTests {
    @Test(arguments: CloudKind.allCases)
    func attachmentsSettingsAndFoldersTravelAndTempFilesDoNot(cloud: CloudKind) throws {
        let devices = try Devices(cloud: cloud)
        let a = try devices.device("a")
        let b = try devices.device("b")
        let picture = Data((0..<2048).map { UInt8($0 % 251) })
        let time = Date(timeIntervalSince1970: 1_700_000_000.5)
        try a.writePlain("Notes/attachments/map.png", picture, modified: time)
        try a.writePlain(".obsidian/app.json", Data("{\"theme\":\"dark\"}".utf8))
        try a.writePlain(".obsidian/workspace.json", Data("{\"open\":[]}".utf8))
        try a.writePlain("Notes/.Plan.md.swp", Data("vim".utf8))
        try FileManager.default.createDirectory(at: a.store.plainFilesFolder.appendingPathComponent("Books/To read"),
                                                withIntermediateDirectories: true)
        try devices.settle(a, b)

        let files = b.plainFiles()
        #expect(files["Notes/attachments/map.png"] == picture)
        #expect(files[".obsidian/app.json"] == Data("{\"theme\":\"dark\"}".utf8))
        #expect(files["Books/To read"] == Data(), "an empty folder (a shelf) travels too")
        #expect(files[".obsidian/workspace.json"] == nil, "per-device layout stays")
        #expect(files["Notes/.Plan.md.swp"] == nil, "editor swap files stay")
        let copied = try FileManager.default.attributesOfItem(
            atPath: b.store.plainFilesFolder.appendingPathComponent("Notes/attachments/map.png").path)
        #expect((copied[.modificationDate] as? Date).map { abs($0.timeIntervalSince(time)) < 0.001 } == true)

        try FileManager.default.removeItem(at: b.store.plainFilesFolder.appendingPathComponent("Notes/attachments/map.png"))
        try devices.settle(b, a)
        #expect(a.plainFiles()["Notes/attachments/map.png"] == nil)
        #expect(try b.sync() == SyncEngine.Report(), "nothing echoes")
    }

    /// A plain file whose name the cloud's rules refuse (a control character in it) stays on its
    /// device, and modes travel as permission bits: what one device sends, the others accept.
    @Test func whatOtherDevicesWouldRefuseIsNotSent() throws {
        let devices = try Devices()
        let a = try devices.device("a")
        let b = try devices.device("b")
        try a.writePlain("Notes/bell\u{7}.txt", Data("ding".utf8))
        try a.writePlain("Notes/tool.sh", Data("#!/bin/sh\n".utf8))
        chmod(a.store.plainFilesFolder.appendingPathComponent("Notes/tool.sh").path, 0o4755)
        try devices.settle(a, b)

        #expect(try b.engine.status()?.waiting == nil)
        #expect(b.plainFiles()["Notes/bell\u{7}.txt"] == nil)
        #expect(b.plainFiles()["Notes/tool.sh"] == Data("#!/bin/sh\n".utf8))
        let mode = try FileManager.default.attributesOfItem(
            atPath: b.store.plainFilesFolder.appendingPathComponent("Notes/tool.sh").path)[.posixPermissions] as? Int
        #expect(mode == 0o755)
    }

    @Test(arguments: CloudKind.allCases)
    func aShelfignoreKeepsWhatItListsOnThisDevice(cloud: CloudKind) throws {
        let devices = try Devices(cloud: cloud)
        let a = try devices.device("a")
        let b = try devices.device("b")
        try a.writePlain(".shelfignore", Data("# big exports stay here\n*.pdf\ncache/*\n".utf8))
        try a.writePlain("Notes/scan.pdf", Data("pdf".utf8))
        try a.writePlain("cache/index.bin", Data("bin".utf8))
        try a.writePlain("Notes/keep.txt", Data("txt".utf8))
        try devices.settle(a, b)
        let files = b.plainFiles()
        #expect(files["Notes/keep.txt"] == Data("txt".utf8))
        #expect(files["Notes/scan.pdf"] == nil && files["cache/index.bin"] == nil && files[".shelfignore"] == nil,
                "\(files.keys.sorted())")
    }

    @Test func concurrentChangesOfOneFileKeepTheNewestAndOneCopyEverywhere() throws {
        let devices = try Devices(delayed: true)
        let a = try devices.device("a")
        let b = try devices.device("b")
        try a.writePlain(".obsidian/app.json", Data("base".utf8))
        try devices.settle(a, b)

        try a.writePlain(".obsidian/app.json", Data("from a".utf8))
        #expect(try a.sync().pushed == 1)
        try b.writePlain(".obsidian/app.json", Data("from b".utf8))
        #expect(try b.sync().pushed == 1)
        try devices.settle(a, b)

        let files = a.plainFiles()
        #expect(files == b.plainFiles())
        #expect(files[".obsidian/app.json"] == Data("from b".utf8), "b's change was made last")
        let copies = files.filter { $0.key.hasPrefix(".obsidian/app (conflict ") }
        #expect(copies.count == 1 && copies.values.first == Data("from a".utf8), "\(files.keys.sorted())")
    }

    @Test(arguments: CloudKind.allCases)
    func aChangeHereNotSentYetIsKeptBesideTheOneArriving(cloud: CloudKind) throws {
        let devices = try Devices(cloud: cloud)
        let a = try devices.device("a")
        let b = try devices.device("b")
        try a.writePlain("Notes/data.csv", Data("1\n".utf8))
        try devices.settle(a, b)
        try b.writePlain("Notes/data.csv", Data("b's\n".utf8), modified: Date().addingTimeInterval(-60))
        try a.writePlain("Notes/data.csv", Data("a's\n".utf8))
        try a.sync()
        try devices.settle(b, a)

        for device in [a, b] {
            let files = device.plainFiles()
            #expect(files["Notes/data.csv"] == Data("a's\n".utf8))
            #expect(files.filter { $0.key.hasPrefix("Notes/data (conflict ") }.values.first == Data("b's\n".utf8),
                    "\(files.keys.sorted())")
        }
    }
}
