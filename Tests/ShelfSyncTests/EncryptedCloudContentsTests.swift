import Foundation
import Logging
import PostgresNIO
import ShelfStore
import Synchronization
import Testing
import TestDevices
import TestSupport
import TestTraits
@testable import ShelfSync

/// What an encrypted cloud still shows whoever holds it (issue #25): sizes, counts, times and
/// opaque ids, nothing of the library.
///
/// Two devices build one library (books with authors and passages, notes with and without
/// frontmatter, an attachment and an `.obsidian` setting, a rename, a delete, a conflict) and
/// sync it fully; then a byte search of the cloud — every file of the folder and every name in
/// it, or a `pg_dump` of the PostgreSQL cloud's schema — looks for each title, author, path,
/// line of text, the attachment's bytes and both device names, in every form Shelf could write
/// them (as they are, with JSON's escaped slashes, as hex the way a dump shows `bytea`, as
/// base64 at each alignment). The same search over a plain cloud of the same library finds
/// every one of them first, so a search that finds nothing is shown able to find something.
@Suite(.scratchFolders) struct EncryptedCloudContentsTests {
    static let annaName = "anna-laptop-7q"
    static let benName = "ben-phone-3x"

    // MARK: What the cloud shows

    @Test(arguments: [CloudKind.encryptedFolder, .encryptedPostgres])
    func theCloudShowsNoneOfTheLibrary(cloud encrypted: CloudKind) throws {
        // The same library in the plain cloud of the same backend: the search finds it all.
        let plain = try Self.syncedLibrary(on: Self.plainTwin(of: encrypted))
        let plainCloud = try Self.whatTheCloudHolds(plain.devices)
        for secret in plain.secrets {
            #expect(!Self.sightings(of: secret, in: plainCloud).isEmpty,
                    "the search finds \(secret.label) in the plain \(plain.devices.kind) cloud")
        }

        let sealed = try Self.syncedLibrary(on: encrypted)
        #expect(sealed.secrets.map(\.label) == plain.secrets.map(\.label), "the same library, the same search")
        let sealedCloud = try Self.whatTheCloudHolds(sealed.devices)
        #expect(Self.byteCount(sealedCloud) > 4096, "the encrypted cloud holds the library, sealed")
        for secret in sealed.secrets {
            let seen = Self.sightings(of: secret, in: sealedCloud)
            #expect(seen.isEmpty, "\(secret.label) shows in the encrypted cloud: \(seen)")
        }
    }

    /// A device's push wakes the others with a `NOTIFY` that says nothing: its payload is empty,
    /// in an encrypted cloud as in a plain one (any role may listen on any channel).
    @Test(arguments: [CloudKind.postgres, .encryptedPostgres])
    func theNotifyOfAPushCarriesNothing(cloud kind: CloudKind) throws {
        let devices = try Devices(cloud: kind)
        let anna = try devices.device(Self.annaName)
        let cloud = try #require(try devices.cloud(for: Self.annaName) as? PostgresCloud)
        let listener = try ChannelListener(server: try PostgresServer.shared(), channel: cloud.channel)
        defer { listener.close() }

        try anna.write("Notes/Marmalade Ledger Wq.md", "the quince jar went to Halvorsen on Thursday\n")
        try anna.sync()
        let announced = eventually(within: .seconds(30), listener.heardAny)
        #expect(announced, "the push was announced")
        let payloads = listener.payloads
        let withData = payloads.filter(Self.isNotEmpty)
        #expect(!payloads.isEmpty)
        #expect(withData.isEmpty, "\(payloads)")
    }

    // MARK: The library

    /// One library, made and fully synced by two devices of a new cloud of `kind`, and the
    /// strings that are its own.
    struct SyncedLibrary {
        let devices: Devices
        let secrets: [Secret]
    }

    /// Something the library holds that the cloud's keeper must not read.
    struct Secret {
        let label: String
        let bytes: Data

        init(_ label: String, _ bytes: Data) {
            self.label = label
            self.bytes = bytes
        }

        init(_ label: String, _ text: String) { self.init(label, Data(text.utf8)) }
    }

    static let orchard = """
        ---
        title: Quiet Orchard of Vellmarsh
        author: Ysolde Qarrington
        ---
        # Quiet Orchard of Vellmarsh

        ## Passages

        ### Page 12
        > the lanterns hummed over Vellmarsh like patient bees ^p-1

        **Note**: ask Halvorsen whether the ferryman chapter was cut

        """
    static let almanac = """
        ---
        title: Brassfeather Almanac
        author: Orrin Sketchwell
        ---
        # Brassfeather Almanac

        ## Passages

        ### Location 40-44
        > tides keep their own ledger along the Brassfeather shoals ^p-1

        """
    static let ledger = """
        ---
        title: Marmalade Ledger Wq
        tags: [pantry-wq]
        ---
        the quince jar went to Halvorsen on Thursday

        """
    static let lichen = "counting lichen on the north wall of Saltmere\n"
    static let draft = "a zephyrine paragraph nobody should read\n"
    static let itinerary = "day one: Tarrow station\nday two: undecided\n"
    static let annasDayTwo = "day two: Kelvedon ferry by the early boat"
    static let bensDayTwo = "day two: Ombersley gardens after lunch"
    static let settings = "{\"accentColor\":\"#b4d455\",\"theme\":\"nightshade-vk\"}"
    /// A scanned receipt: a marker line, then bytes no text holds.
    static let receipt: Data = {
        var generator = SeededGenerator(seed: 0x5EC2E7)
        return Data("%PDF-1.7\n% receipt QUINCE-PRESERVES-8841\n".utf8)
            + Data((0..<3000).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }()

    static let orchardPath = "Books/Quiet Orchard of Vellmarsh.md"
    static let almanacPath = "Books/Brassfeather Almanac.md"
    static let almanacRenamed = "Books/Tidewater Shoals Almanac.md"
    static let ledgerPath = "Notes/Marmalade Ledger Wq.md"
    static let lichenPath = "Notes/Loose lichen thoughts.md"
    static let draftPath = "Notes/Discarded Zephyrine draft.md"
    static let itineraryPath = "Notes/Shared itinerary Tarrow.md"
    static let receiptPath = "Attachments/scan-receipt-zq.pdf"
    static let settingsPath = ".obsidian/app.json"

    /// The library, built on a new cloud of `kind` by anna and ben: each writes part of it, anna
    /// renames a book, ben deletes a note, and both edit one line of a shared note before
    /// syncing, which leaves a conflict copy; then they sync until neither moves anything.
    static func syncedLibrary(on kind: CloudKind) throws -> SyncedLibrary {
        let devices = try Devices(cloud: kind)
        let anna = try devices.device(annaName)
        let ben = try devices.device(benName)
        let almanacID = try anna.write(almanacPath, almanac)
        try anna.write(orchardPath, orchard)
        try anna.write(ledgerPath, ledger)
        try anna.writePlain(receiptPath, receipt)
        try ben.write(lichenPath, lichen)
        let draftID = try ben.write(draftPath, draft)
        try ben.write(itineraryPath, itinerary)
        try ben.writePlain(settingsPath, Data(settings.utf8))
        try devices.settle(anna, ben)

        _ = try anna.store.move(id: almanacID, to: almanacRenamed)
        try ben.store.trash(id: draftID)
        try devices.settle(anna, ben)

        // Both edit the second line before either syncs: ben's, newer, keeps the note.
        let now = Date()
        try anna.write(itineraryPath, "day one: Tarrow station\n\(annasDayTwo)\n", modified: now)
        try ben.write(itineraryPath, "day one: Tarrow station\n\(bensDayTwo)\n", modified: now.addingTimeInterval(5))
        try anna.sync()
        try ben.sync()
        try devices.settle(anna, ben)

        // The library is what the scenario says, on both devices.
        let files = try anna.files()
        #expect(try ben.files() == files)
        #expect(ben.plainFiles() == anna.plainFiles())
        #expect(anna.plainFiles()[receiptPath] == receipt)
        #expect(anna.plainFiles()[settingsPath] == Data(settings.utf8))
        #expect(files[almanacRenamed] == Data(almanac.utf8) && files[almanacPath] == nil, "the rename travelled")
        #expect(files[draftPath] == nil, "the delete travelled")
        #expect(files[itineraryPath] == Data("day one: Tarrow station\n\(bensDayTwo)\n".utf8))
        let copies = files.keys.filter(isConflictCopy)
        #expect(copies.count == 1, "\(files.keys.sorted())")
        let copy = try #require(copies.first)
        #expect(copy.contains(annaName), "the copy is named after the device whose edit it keeps: \(copy)")
        #expect(files.count == 6, "\(files.keys.sorted())")

        var secrets = [
            Secret("device name \(annaName)", annaName), Secret("device name \(benName)", benName),
            Secret("a book's title", "Quiet Orchard of Vellmarsh"), Secret("a book's author", "Ysolde Qarrington"),
            Secret("the renamed book's title", "Brassfeather Almanac"), Secret("the renamed book's author", "Orrin Sketchwell"),
            Secret("a highlight", "the lanterns hummed over Vellmarsh like patient bees"),
            Secret("a passage's note line", "ask Halvorsen whether the ferryman chapter was cut"),
            Secret("the renamed book's highlight", "tides keep their own ledger along the Brassfeather shoals"),
            Secret("a note's title", "Marmalade Ledger Wq"), Secret("a note's tag", "pantry-wq"),
            Secret("a note's line", "the quince jar went to Halvorsen on Thursday"),
            Secret("the note without frontmatter", "counting lichen on the north wall of Saltmere"),
            Secret("the deleted note's text", "a zephyrine paragraph nobody should read"),
            Secret("the conflicting note's first line", "day one: Tarrow station"),
            Secret("anna's conflicting line", annasDayTwo), Secret("ben's conflicting line", bensDayTwo),
            Secret("a setting", "nightshade-vk"),
            Secret("the attachment's text", "QUINCE-PRESERVES-8841"),
            Secret("the attachment's bytes", receipt.subdata(in: 1000..<1064)),
            Secret("a folder name", "Attachments"), Secret("a folder name", ".obsidian"),
        ]
        let paths = Set(files.keys).union([almanacPath, draftPath, receiptPath, settingsPath]).sorted()
        for path in paths {
            // The copy's name holds a time, so it is named by what it is.
            let what = isConflictCopy(path) ? "the conflict copy" : path
            secrets.append(Secret("the path of \(what)", path))
            secrets.append(Secret("the file name of \(what)", String(path.split(separator: "/").last!)))
        }
        return SyncedLibrary(devices: devices, secrets: secrets)
    }

    static func isNotEmpty(_ text: String) -> Bool { !text.isEmpty }

    static func isConflictCopy(_ path: String) -> Bool { path.contains("(conflict ") }

    static func plainTwin(of kind: CloudKind) -> CloudKind {
        kind.isPostgres ? .postgres : .folder
    }

    // MARK: Searching the cloud

    /// One thing read from a cloud, by what it is.
    struct Haystack {
        let name: String
        let bytes: Data
    }

    /// Everything the cloud of `devices` holds, as its keeper sees it: every file of the folder
    /// (hidden ones too) and every name in it, or a `pg_dump` of the cloud's schema.
    static func whatTheCloudHolds(_ devices: Devices) throws -> [Haystack] {
        if let address = devices.postgresAddress {
            return [Haystack(name: "pg_dump", bytes: try dump(schema: address.cloud, into: devices.folder))]
        }
        let root = devices.cloudFolder(for: annaName)
        let manager = FileManager.default
        var found: [Haystack] = []
        var names: [String] = []
        for path in try #require(manager.subpaths(atPath: root.path)).sorted() {
            names.append(path)
            var isFolder: ObjCBool = false
            guard manager.fileExists(atPath: root.appendingPathComponent(path).path, isDirectory: &isFolder), !isFolder.boolValue
            else { continue }
            found.append(Haystack(name: path, bytes: try Data(contentsOf: root.appendingPathComponent(path))))
        }
        #expect(found.count >= 10, "the cloud folder holds the library's files: \(names)")
        return found + [Haystack(name: "the names of the files", bytes: Data(names.joined(separator: "\n").utf8))]
    }

    /// `pg_dump` (PostgreSQL 15's, as the superuser) of the cloud's schema on the test server.
    static func dump(schema: String, into folder: TemporaryFolder) throws -> Data {
        let server = try PostgresServer.shared()
        let file = folder.child("dump-\(schema).sql")
        let result = try CommandRunner.run("/usr/lib/postgresql/15/bin/pg_dump",
                                           ["-h", server.host, "-p", "\(server.port)", "-U", "postgres", "-d", TestClouds.database,
                                            "-n", schema, "-f", file.path],
                                           in: "/", environment: ["PGPASSWORD": server.superuserPassword, "PGSSLMODE": "disable",
                                                                  "PATH": "/usr/bin:/bin"],
                                           timeout: .seconds(60))
        #expect(result.succeeded, "\(result)")
        let dump = try Data(contentsOf: file)
        #expect(String(decoding: dump, as: UTF8.self).contains("COPY \(schema).batch"), "the dump holds the cloud's batches")
        return dump
    }

    static func byteCount(_ haystacks: [Haystack]) -> Int { haystacks.reduce(0) { $0 + $1.bytes.count } }

    /// Where `secret` shows in `haystacks`, in any form it could be written in: `file (form)`.
    static func sightings(of secret: Secret, in haystacks: [Haystack]) -> [String] {
        var seen: [String] = []
        for (form, needle) in forms(of: secret.bytes) {
            for haystack in haystacks where haystack.bytes.range(of: needle) != nil {
                seen.append("\(haystack.name) (\(form))")
            }
        }
        return seen
    }

    /// `bytes` as they are, with JSON's escaped slashes, each as lower-case hex (how `pg_dump`
    /// writes `bytea`), and as base64 at each of its three alignments (the characters that
    /// come from `bytes` alone).
    static func forms(of bytes: Data) -> [(String, Data)] {
        let escaped = Data(bytes.flatMap { $0 == UInt8(ascii: "/") ? [UInt8(ascii: "\\"), $0] : [$0] })
        var forms: [(String, Data)] = [("as is", bytes), ("hex", Data(bytes.hex.utf8))]
        if escaped != bytes { forms += [("JSON-escaped", escaped), ("JSON-escaped, hex", Data(escaped.hex.utf8))] }
        for offset in 0..<3 {
            let encoded = (Data(repeating: 0, count: offset) + bytes).base64EncodedString()
            let middle = encoded.dropFirst(offset == 0 ? 0 : 4).dropLast(4)
            if middle.count >= 8 { forms.append(("base64 at offset \(offset)", Data(middle.utf8))) }
        }
        return forms
    }

    // MARK: Tampering (PostgreSQL cloud)

    /// a pushes three batches (One, Two, Three) to an encrypted PostgreSQL cloud; b has read
    /// none of them. Returns the cloud's schema and a's device id too.
    private func threeBatches() throws -> (devices: Devices, a: Device, b: Device, schema: String, writer: String) {
        let (devices, a, b) = try EncryptedCloudTests.threeBatches(on: .encryptedPostgres)
        let schema = try #require(devices.postgresAddress).cloud
        let writer = try #require(try a.store.cloudLink()?.device)
        return (devices, a, b, schema, writer)
    }

    /// Runs `sql` on the test server as its superuser, in the clouds' database.
    @discardableResult
    private func administer(_ sql: String) throws -> String {
        try PostgresServer.shared().execute(sql, database: TestClouds.database).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Flips the lowest bit of the middle byte of `column` in the rows of `table` that `filter` picks.
    private func flipBit(in table: String, column: String, where filter: String, schema: String) throws -> String {
        try administer("""
            UPDATE \(schema).\(table) SET \(column) = set_byte(\(column), octet_length(\(column)) / 2,
                                                              get_byte(\(column), octet_length(\(column)) / 2) # 1)
            WHERE \(filter) RETURNING 1
            """)
    }

    private func expectHeldBack(_ number: Int64, on b: Device, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let waiting = try #require(try b.store.cloudLink()?.waiting, sourceLocation: sourceLocation)
        #expect(waiting.contains("batch \(number) of device a is refused"), "\(waiting)", sourceLocation: sourceLocation)
        #expect(waiting.contains("does not open with this cloud's key"), "\(waiting)", sourceLocation: sourceLocation)
    }

    @Test func aFlippedBitInABatchRowHoldsItBackAndSaysSo() throws {
        let (_, _, b, schema, writer) = try threeBatches()
        let batch2 = "device = '\(writer)' AND number = 2"
        #expect(try flipBit(in: "batch", column: "body", where: batch2, schema: schema) == "1")

        try b.sync()
        #expect(try b.store.record(atPath: "Notes/One.md") != nil)
        #expect(try b.store.record(atPath: "Notes/Two.md") == nil, "nothing of the altered batch is applied")
        #expect(try b.store.record(atPath: "Notes/Three.md") == nil, "what follows it waits")
        try expectHeldBack(2, on: b)

        // Held back, not passed over: once the row is as a wrote it, it and what follows arrive.
        #expect(try flipBit(in: "batch", column: "body", where: batch2, schema: schema) == "1")
        try b.sync()
        #expect(try b.text("Notes/Two.md") == "Two\n")
        #expect(try b.text("Notes/Three.md") == "Three\n")
        #expect(try b.store.cloudLink()?.waiting == nil)
    }

    /// A device row that does not open is listed as damaged; the other devices' records read.
    @Test func aFlippedBitInADeviceRowMarksOnlyThatDevice() throws {
        let (_, _, b, schema, writer) = try threeBatches()
        #expect(try flipBit(in: "device", column: "body", where: "id = '\(writer)'", schema: schema) == "1")
        let listed = try b.engine.cloud.devices()
        #expect(listed.damaged == [writer])
        #expect(listed.readable.map(\.name) == ["b"])
        try b.sync()
        #expect(try b.text("Notes/Three.md") == "Three\n", "sync goes on")
    }

    @Test func anOlderBatchRowReplayedUnderANewerNumberIsRefused() throws {
        let (_, _, b, schema, writer) = try threeBatches()
        let original = try administer("SELECT encode(body, 'hex') FROM \(schema).batch WHERE device = '\(writer)' AND number = 3")
        #expect(original.count > 100)
        #expect(try administer("""
            UPDATE \(schema).batch SET body = (SELECT body FROM \(schema).batch WHERE device = '\(writer)' AND number = 1)
            WHERE device = '\(writer)' AND number = 3 RETURNING 1
            """) == "1")

        try b.sync()
        #expect(try b.store.record(atPath: "Notes/One.md") != nil)
        #expect(try b.store.record(atPath: "Notes/Two.md") != nil)
        #expect(try b.store.record(atPath: "Notes/Three.md") == nil, "nothing of the replayed batch is applied")
        try expectHeldBack(3, on: b)

        #expect(try administer("""
            UPDATE \(schema).batch SET body = decode('\(original)', 'hex') WHERE device = '\(writer)' AND number = 3 RETURNING 1
            """) == "1")
        try b.sync()
        #expect(try b.text("Notes/Three.md") == "Three\n")
    }

    @Test func aFlippedBitInAContentRowIsRefusedAndTheItemStaysAPlaceholder() throws {
        let (_, _, b, schema, _) = try threeBatches()
        try b.sync()
        #expect(try administer("SELECT count(*) FROM \(schema).content") == "3")
        #expect(try flipBit(in: "content", column: "bytes", where: "hash = (SELECT min(hash) FROM \(schema).content)",
                            schema: schema) == "1")

        var refused = 0
        for name in ["One", "Two", "Three"] {
            let id = try #require(try b.store.record(atPath: "Notes/\(name).md")?.item.id)
            do {
                try b.engine.download(id)
                #expect(try b.store.record(id: id)?.text == "\(name)\n")
            } catch let error as CloudError {
                #expect(Self.isDamagedContent(error), "\(error)")
                #expect(try b.store.summary(id: id)?.isPlaceholder == true, "nothing was written to the library")
                refused += 1
            }
        }
        #expect(refused == 1)
    }

    static func isDamagedContent(_ error: CloudError) -> Bool {
        guard case .damaged(_, let reason) = error else { return false }
        return reason.contains("does not open with this cloud's key")
    }
}

/// A connection of its own to the test server that listens on one channel and keeps every
/// notification's payload.
final class ChannelListener: Sendable {
    private let connection: PostgresConnection
    private let received = Mutex<[String]>([])
    private static let logger = Logger(label: "shelf.tests.listener")

    init(server: PostgresServer, channel: String) throws {
        connection = try PostgresConnection.connect(
            on: PostgresConnection.defaultEventLoopGroup.any(),
            configuration: .init(host: server.host, port: server.port, username: "postgres", password: server.superuserPassword,
                                 database: TestClouds.database, tls: .disable),
            id: 97, logger: Self.logger).wait()
        connection.addListener(channel: channel) { [self] _, notification in
            received.withLock { $0.append(notification.payload) }
        }
        _ = try connection.query("LISTEN \(unescaped: PostgresSchema.quoted(channel))", logger: Self.logger).wait()
    }

    var payloads: [String] { received.withLock { $0 } }
    func heardAny() -> Bool { received.withLock { !$0.isEmpty } }

    func close() { _ = try? connection.close().wait() }
}
