import Foundation
import Synchronization
import Testing
import TestSupport
import TestTraits

/// Eight devices, each its own library and `shelf mount` daemon syncing through one cloud, all
/// editing at once from threads of their own, the way people with several machines and
/// editors do: every edit is read-modify-write of a whole file through the device's mount,
/// as every editor saves. Nothing may hang, every device must end with the same files, and no
/// edit may be lost.
@Suite(.serialized, .scratchFolders) struct ManyDevicesTests {
    enum Cloud: String, CaseIterable { case folder, postgres, encryptedFolder }

    static let deviceCount = 8
    static let notes = ["Notes/Shared 0.md", "Notes/Shared 1.md", "Notes/Shared 2.md"]
    /// Each device owns one paragraph of every shared note (paragraphs apart, as in any note
    /// several people keep).
    static func paragraph(_ device: Int, _ text: String) -> String { "d\(device): \(text)" }
    static var startingText: String {
        (0..<deviceCount).map { paragraph($0, "start") }.joined(separator: "\n\n") + "\n"
    }

    /// A device: its CLI (library, config) and where it is mounted.
    struct Device: Sendable {
        let number: Int
        let mountpoint: String

        /// Reads `path` through the mount, with a deadline.
        func read(_ path: String) throws -> String {
            let file = mountpoint + "/" + path
            return try TestMount.perform(on: mountpoint) { try String(contentsOfFile: file, encoding: .utf8) }
        }

        /// Writes `text` to `path` as an editor saves: in place (`O_TRUNC`, then write), or
        /// through a temp file renamed over it (vim's default, VS Code).
        func write(_ text: String, to path: String, atomically: Bool) throws {
            let file = mountpoint + "/" + path
            try TestMount.perform(on: mountpoint) { try Data(text.utf8).write(to: URL(fileURLWithPath: file), options: atomically ? .atomic : []) }
        }

        /// Rewrites this device's paragraph of `path` to `text` (read, change, write back).
        func rewriteOwnParagraph(of path: String, to text: String, atomically: Bool) throws {
            let lines = try read(path).split(separator: "\n", omittingEmptySubsequences: false).map { line in
                line.hasPrefix("d\(number): ") ? Substring(ManyDevicesTests.paragraph(number, text)) : line
            }
            try write(lines.joined(separator: "\n"), to: path, atomically: atomically)
        }

        /// The names in `Notes/`, with a deadline.
        func notes() throws -> [String] {
            let folder = mountpoint + "/Notes"
            return try TestMount.perform(on: mountpoint) { try FileManager.default.contentsOfDirectory(atPath: folder).sorted() }
        }

        /// Every file of `Notes/` and its bytes; one removed between listing and reading (a
        /// conflict copy retired meanwhile) is left out.
        func snapshot() throws -> [String: String] {
            var files: [String: String] = [:]
            for name in try notes() {
                do {
                    files[name] = try read("Notes/" + name)
                } catch CocoaError.fileReadNoSuchFile {
                    continue
                }
            }
            return files
        }
    }

    /// The text of each device's last edit of each note.
    final class LastEdits: Sendable {
        let edits = Mutex<[String: [Int: String]]>([:])
    }

    /// 25 rewrites of `device`'s own paragraph of a shared note picked at random (seeded by
    /// the device), at the pace of someone typing.
    static func editOwnParagraphs(on device: Device, noting lastEdits: LastEdits) throws {
        var random = SeededGenerator(seed: UInt64(device.number + 1))
        for round in 1...25 {
            let path = notes[Int.random(in: 0..<notes.count, using: &random)]
            let text = "edit \(round)"
            try device.rewriteOwnParagraph(of: path, to: text, atomically: device.number % 2 == 1)
            lastEdits.edits.withLock { $0[path, default: [:]][device.number] = text }
            Thread.sleep(forTimeInterval: Double.random(in: 0.05...0.3, using: &random))
        }
    }

    /// `count` devices linked to one new cloud of `kind`, each mounted (taken down whatever
    /// happens); device 0 brought the shared notes.
    func withDevices(_ kind: Cloud, count: Int = deviceCount, _ body: ([Device]) throws -> Void) throws {
        let clis = try (0..<count).map { _ in try ShelfCLI() }
        let vault = clis[0].scratch.appendingPathComponent("vault/Notes")
        try FileManager.default.createDirectory(at: vault, withIntermediateDirectories: true)
        for path in Self.notes {
            try Data(Self.startingText.utf8).write(to: vault.appendingPathComponent(String(path.dropFirst("Notes/".count))))
        }
        let address: String
        var encryption: [String] = []
        switch kind {
        case .folder:
            address = clis[0].scratch.appendingPathComponent("cloud").path
        case .encryptedFolder:
            address = clis[0].scratch.appendingPathComponent("cloud").path
            let passphrase = clis[0].scratch.appendingPathComponent("passphrase")
            try Data("eight devices, one secret\n".utf8).write(to: passphrase)
            encryption = ["--passphrase-file", passphrase.path]
        case .postgres:
            let postgres = PostgresCloudCommandTests()
            let (url, password) = try postgres.makeCloud(with: clis[0])
            for cli in clis { try postgres.storePassword(password, of: url, for: cli) }
            address = url
        }
        for (number, cli) in clis.enumerated() {
            try #require(try cli.run("init", cli.library.path).status == 0)
            if number == 0 { try #require(try cli.run("import", vault.deletingLastPathComponent().path).status == 0) }
            let makes = number == 0 && kind == .encryptedFolder ? ["--encrypt"] : []
            let linked = try cli.run(["cloud", "link", address, "--device", "d\(number)"] + makes + encryption)
            try #require(linked.status == 0, "\(linked)")
        }
        try mountAll(clis[...], mounted: [], body)
    }

    private func mountAll(_ clis: ArraySlice<ShelfCLI>, mounted: [Device], _ body: ([Device]) throws -> Void) throws {
        guard let cli = clis.first else { return try body(mounted) }
        try cli.withMount { mountpoint in
            try mountAll(clis.dropFirst(), mounted: mounted + [Device(number: mounted.count, mountpoint: mountpoint)], body)
        }
    }

    /// Waits until every device shows the same `Notes/` and `accept` holds for it; the last
    /// snapshots are returned either way, for the checks to describe.
    func converge(_ devices: [Device], within deadline: Duration = .seconds(60),
                  accept: ([String: String]) -> Bool) throws -> (converged: Bool, snapshots: [[String: String]]) {
        var snapshots: [[String: String]] = []
        let converged = try eventually(within: deadline) {
            snapshots = try devices.map { try $0.snapshot() }
            return Set(snapshots).count == 1 && accept(snapshots[0])
        }
        return (converged, snapshots)
    }

    /// An editor left open on one device writes back what it read, with its own edit, after
    /// another device changed the file: both edits stay when they touch different paragraphs,
    /// and one conflict copy keeps the other side when they touch the same one.
    @Test func aSaveReadBeforeAChangeElsewhereMergesWithIt() throws {
        try withDevices(.folder, count: 2) { devices in
            let (a, b) = (devices[0], devices[1])
            let path = Self.notes[0]
            #expect(try converge(devices, accept: Self.holdsTheNotes).converged)

            // Different paragraphs: B's stale buffer carries the old d0, and A's d0 stays.
            let scratch = FileManager.default.temporaryDirectory
            let stale = try OpenEditor(b.mountpoint + "/" + path, scratch: scratch)
            try a.rewriteOwnParagraph(of: path, to: "from a", atomically: false)
            let shown = try eventually(within: .seconds(10)) { try b.read(path).contains("d0: from a\n") }
            #expect(shown, "b's mount shows a's edit (and has served it)")
            try stale.save(replacingLineStarting: "d1: ", with: "d1: from b", atomically: false)
            let merged = try converge(devices) { files in
                let text = files[String(path.dropFirst("Notes/".count))] ?? ""
                return text.contains("d0: from a\n") && text.contains("d1: from b\n")
            }
            #expect(merged.converged, "both edits in the note on both devices: \(merged.snapshots)")
            #expect(try a.notes().count == Self.notes.count, "no conflict copy")

            // The same paragraph: the save wins, the other side is kept once.
            let staleAgain = try OpenEditor(b.mountpoint + "/" + path, scratch: scratch)
            try a.rewriteOwnParagraph(of: path, to: "again from a", atomically: true)
            let shownAgain = try eventually(within: .seconds(10)) { try b.read(path).contains("d0: again from a\n") }
            #expect(shownAgain)
            try staleAgain.save(replacingLineStarting: "d0: ", with: "d0: overruled by b", atomically: true)
            let resolved = try converge(devices) { files in
                files[String(path.dropFirst("Notes/".count))]?.contains("d0: overruled by b\n") == true
                    && files.count == Self.notes.count + 1
            }
            #expect(resolved.converged, "\(resolved.snapshots)")
            let copies = (resolved.snapshots.first ?? [:]).filter { $0.key.contains("(conflict") }
            #expect(copies.count == 1 && copies.values.first?.contains("d0: again from a\n") == true, "\(copies)")

            // Nothing underneath: the save reads back byte for byte.
            let own = try a.read(path).replacingOccurrences(of: "d2: start", with: "d2:   spaced  \t as typed")
            try a.write(own, to: path, atomically: false)
            #expect(try a.read(path) == own)
        }
    }

    /// Editors that autosave write their whole buffer every moment while someone elsewhere saves
    /// the same paragraph: a device's successive saves are one line of history, so only the
    /// newest edit of each side can lose, and at most one copy is left — of the older side.
    ///
    /// Its predicates are named functions, not closures: inside a closure, Swift 6.3.1 numbers the
    /// closures an `#expect` expansion makes with a second counter, so one of them and a closure
    /// of the body got one symbol, and the last `converge` ran the other's predicate, which could
    /// never hold by then.
    @Test func autosavesAgainstASaveElsewhereLeaveAtMostOneCopy() throws {
        try withDevices(.folder, count: 2) { devices in
            let (a, b) = (devices[0], devices[1])
            #expect(try converge(devices, accept: Self.holdsTheNotes).converged)
            func draft(_ text: String, of read: String) -> String {
                read.replacingOccurrences(of: #"(?m)^d0: .*$"#, with: "d0: \(text)", options: .regularExpression)
            }
            func copies(of path: String, in files: [String: String]) -> [String: String] {
                let name = String(path.dropFirst("Notes/".count).dropLast(".md".count))
                return files.filter { $0.key.hasPrefix(name + " (conflict") }
            }

            // A autosaves five times, B saves once in the middle: A's last save is the newest.
            let path = Self.notes[0]
            let (readByA, readByB) = (try a.read(path), try b.read(path))
            for round in 1...5 {
                try a.write(draft("a types \(round)", of: readByA), to: path, atomically: false)
                if round == 3 { try b.write(draft("b once", of: readByB), to: path, atomically: true) }
                Thread.sleep(forTimeInterval: 0.2)  // an editor's autosave pace, not a wait
            }
            func aWinsWithOneCopy(_ files: [String: String]) -> Bool {
                files[String(path.dropFirst("Notes/".count))]?.contains("d0: a types 5\n") == true
                    && copies(of: path, in: files).count <= 1
            }
            let first = try converge(devices, accept: aWinsWithOneCopy)
            #expect(first.converged, "A's newest save wins everywhere, with at most one copy: \(Self.differences(first.snapshots))")
            let firstCopies = copies(of: path, in: first.snapshots.first ?? [:])
            #expect(firstCopies.count <= 1 && firstCopies.values.allSatisfy { $0.contains("d0: b once\n") }, "\(firstCopies)")

            // Both autosave ten times, interleaved: B's last save is the newest, and A's newest
            // draft — the tip of its line — is the one copy.
            let other = Self.notes[1]
            let (otherByA, otherByB) = (try a.read(other), try b.read(other))
            for round in 1...10 {
                try a.write(draft("a drafts \(round)", of: otherByA), to: other, atomically: round % 2 == 0)
                try b.write(draft("b drafts \(round)", of: otherByB), to: other, atomically: round % 2 == 1)
                Thread.sleep(forTimeInterval: 0.125)
            }
            func bWinsWithOneCopy(_ files: [String: String]) -> Bool {
                files[String(other.dropFirst("Notes/".count))]?.contains("d0: b drafts 10\n") == true
                    && copies(of: other, in: files).count <= 1
            }
            let second = try converge(devices, accept: bWinsWithOneCopy)
            #expect(second.converged, "B's newest save wins everywhere, with at most one copy: \(Self.differences(second.snapshots))")
            let secondCopies = copies(of: other, in: second.snapshots.first ?? [:])
            #expect(secondCopies.count == 1 && secondCopies.values.allSatisfy { $0.contains("d0: a drafts 10\n") },
                    "one copy, of A's newest draft: \(secondCopies)")
        }
    }

    /// Whether `files` are the shared notes and nothing else. A named function, as every predicate
    /// that meets an `#expect` in one test body: see the autosave test.
    static func holdsTheNotes(_ files: [String: String]) -> Bool { files.count == notes.count }

    /// The paragraphs of `expected` (per note, per device, the last edit) that `files` lack,
    /// each as a whole line: a file that lost its last newline lacks its last paragraph.
    static func missing(_ expected: [String: [Int: String]], in files: [String: String]) -> [String] {
        expected.sorted { $0.key < $1.key }.flatMap { path, edits in
            let text = files[String(path.dropFirst("Notes/".count))] ?? ""
            return edits.sorted { $0.key < $1.key }.map { Self.paragraph($0.key, $0.value) + "\n" }
                .filter { !text.contains($0) }.map { "\(path): \($0.debugDescription)" }
        }
    }

    /// Each file that not every snapshot shows alike, with what each shows (nil: not listed);
    /// all of the first snapshot where they agree.
    static func differences(_ snapshots: [[String: String]]) -> [String: [String?]] {
        let names = Set(snapshots.flatMap(\.keys))
        let differing = names.compactMap { name -> (String, [String?])? in
            let seen = snapshots.map { $0[name] }
            return Set(seen).count > 1 ? (name, seen) : nil
        }
        guard differing.isEmpty else { return Dictionary(uniqueKeysWithValues: differing) }
        return (snapshots.first ?? [:]).mapValues { [$0] }
    }

    @Test(arguments: Cloud.allCases)
    func eightDevicesEditingAtOnceConvergeWithEveryEditAndOneCopyPerLoser(cloud: Cloud) throws {
        try withDevices(cloud) { try editAtOnceThenContest($0) }
    }

    func editAtOnceThenContest(_ devices: [Device]) throws {
        #expect(try converge(devices, accept: Self.holdsTheNotes).converged, "every device has the shared notes")

        // Everyone edits their own paragraph of the shared notes, from their own thread.
        let lastEdits = LastEdits()
        let editors = devices.map { device in
            ProbedThread("device \(device.number)") { try Self.editOwnParagraphs(on: device, noting: lastEdits) }
        }
        for editor in editors { try editor.finish(within: .seconds(120)) }
        let expected = lastEdits.edits.withLock { $0 }
        func holdsEveryLastEdit(_ files: [String: String]) -> Bool { Self.missing(expected, in: files).isEmpty }
        let (converged, snapshots) = try converge(devices, accept: holdsEveryLastEdit)
        #expect(converged, "every device shows the same notes, each with every device's last edit; missing from the first device's: \(Self.missing(expected, in: snapshots.first ?? [:])); \(Self.differences(snapshots))")
        #expect(snapshots.first?.keys.sorted() == Self.notes.map { String($0.dropFirst("Notes/".count)) }.sorted(),
                "edits that merge leave no conflict copy")

        // A contested round: every device rewrites the same paragraph of one note, one after
        // the other, all from what they read before anyone wrote. The last word wins; every
        // other device's word is kept once, as a conflict copy.
        let contested = Self.notes[0]
        let read = try devices.map { try $0.read(contested) }
        for (device, text) in zip(devices, read) {
            let rewritten = text.replacingOccurrences(of: #"(?m)^d0: .*$"#, with: "d0: contested by d\(device.number)",
                                                     options: .regularExpression)
            try device.write(rewritten, to: contested, atomically: device.number % 2 == 1)
        }
        let winner = "d0: contested by d\(Self.deviceCount - 1)\n"
        let expectedLosers = Set((0..<(Self.deviceCount - 1)).map { "d0: contested by d\($0)" })
        func losers(_ copies: [String: String]) -> [String] {
            copies.values.compactMap { text in text.split(separator: "\n").first { $0.hasPrefix("d0: contested by d") }.map(String.init) }
        }
        let (settled, final) = try converge(devices) { files in
            let copies = files.filter { $0.key.contains("(conflict") }
            return files[String(contested.dropFirst("Notes/".count))]?.contains(winner) == true
                && copies.count == Self.deviceCount - 1 && Set(losers(copies)) == expectedLosers
        }
        let copies = (final.first ?? [:]).filter { $0.key.contains("(conflict") }
        #expect(settled, "the newest edit wins everywhere, and every other device's is kept once: \(copies.sorted { $0.key < $1.key })")
    }
}
