import Foundation
import Testing
import TestSupport
import TestTraits

/// Encrypted clouds through the real `shelf`, as the README shows them: linking with a
/// passphrase from a file, from SHELF_CLOUD_PASSPHRASE_FILE or typed at a prompt; mounts that
/// sync with the key their library keeps; changing the passphrase; moving a plain cloud with
/// `shelf cloud encrypt`; the recovery key.
@Suite(.serialized, .scratchFolders) struct EncryptedCloudCommandTests {
    static let passphrase = "correct horse battery staple 7f3a"

    /// A device with an empty library, and a file holding `passphrase` in its scratch folder.
    func device(passphrase: String = passphrase) throws -> (cli: ShelfCLI, passphraseFile: String) {
        let cli = try ShelfCLI()
        try #require(try cli.run("init", cli.library.path).status == 0)
        let file = cli.scratch.appendingPathComponent("passphrase-\(UUID().uuidString)").path
        try Data((passphrase + "\n").utf8).write(to: URL(fileURLWithPath: file))
        return (cli, file)
    }

    /// A on a new encrypted cloud (`--passphrase-file`), B joined with SHELF_CLOUD_PASSPHRASE_FILE;
    /// the cloud's folder and the recovery key A was shown.
    func encryptedPair() throws -> (a: ShelfCLI, b: ShelfCLI, cloud: String, recoveryKey: String) {
        let (a, fileA) = try device()
        var (b, fileB) = try device()
        let cloud = a.scratch.appendingPathComponent("cloud").path
        let made = try a.run("cloud", "link", cloud, "--encrypt", "--passphrase-file", fileA, "--device", "laptop")
        try #require(made.status == 0, "\(made)")
        let recoveryKey = try #require(Self.recoveryKey(in: made.stdout), "no recovery key shown: \(made.stdout)")
        b.environment["SHELF_CLOUD_PASSPHRASE_FILE"] = fileB
        let joined = try b.run("cloud", "link", cloud, "--device", "desk")
        try #require(joined.status == 0, "\(joined)")
        b.environment.removeValue(forKey: "SHELF_CLOUD_PASSPHRASE_FILE")
        return (a, b, cloud, recoveryKey)
    }

    /// The recovery key in `output`: 13 dash-joined groups of base32.
    static func recoveryKey(in output: String) -> String? {
        let pattern = "[A-Z2-7]{4}(-[A-Z2-7]{4}){12}"
        return output.range(of: pattern, options: .regularExpression).map { String(output[$0]) }
    }

    /// Adds a note to `cli`'s library (a one-note Markdown folder imported) and returns its path.
    @discardableResult
    func addNote(_ cli: ShelfCLI, _ name: String, _ text: String) throws -> String {
        let folder = cli.scratch.appendingPathComponent("new-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("Notes"), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: folder.appendingPathComponent("Notes/\(name).md"))
        let imported = try cli.run("import", folder.path)
        try #require(imported.status == 0, "\(imported)")
        return "Notes/\(name).md"
    }

    func synced(_ cli: ShelfCLI) throws {
        let synced = try cli.run("sync")
        try #require(synced.status == 0, "\(synced)")
    }

    /// The non-empty lines of `text`.
    static func lines(_ text: String) -> [Substring] { text.split(separator: "\n") }

    @Test func twoDevicesShareAnEncryptedCloudAndAWrongPassphraseLinksNothing() throws {
        let (a, b, cloud, _) = try encryptedPair()
        let note = try addNote(a, "Secret plan", "Written on the laptop, sealed in the cloud.\n")
        try synced(a)
        try synced(b)
        let shown = try b.run("show", note)
        #expect(shown.status == 0 && shown.stdout.contains("sealed in the cloud"), "\(shown)")
        let status = try b.run("cloud", "status")
        #expect(status.stdout.contains("Encrypted: yes"), "\(status)")

        let (c, wrong) = try device(passphrase: "not the passphrase")
        let refused = try c.run("cloud", "link", cloud, "--passphrase-file", wrong, "--device", "stranger")
        #expect(refused.status != 0)
        #expect(Self.lines(refused.stderr).count == 1 && refused.stderr.contains("passphrase does not open"), "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: c.library.appendingPathComponent("cloud-key.json").path))
        #expect(try c.run("status").stdout.contains("not linked"))

        // Without a file and without a terminal to type in: one line that says how.
        let unasked = try c.run("cloud", "link", cloud, "--device", "stranger")
        #expect(unasked.status != 0)
        #expect(Self.lines(unasked.stderr).count == 1 && unasked.stderr.contains("--passphrase-file"), "\(unasked)")
        #expect(try c.run("status").stdout.contains("not linked"))
    }

    @Test func theRecoveryKeyLinksADevice() throws {
        let (_, _, cloud, recoveryKey) = try encryptedPair()
        let (c, file) = try device(passphrase: recoveryKey.lowercased())
        let linked = try c.run("cloud", "link", cloud, "--passphrase-file", file, "--device", "rescued")
        #expect(linked.status == 0, "\(linked)")
        #expect(try c.run("cloud", "status").stdout.contains("Encrypted: yes"))
    }

    /// A mount of an encrypted library syncs with the key its library keeps: `shelf mount` is
    /// given no passphrase. The passphrase is nowhere on either device, in the daemon's
    /// arguments, in the status, or in the cloud.
    @Test func mountsSyncUnattendedAndThePassphraseIsNowhere() throws {
        let (a, b, cloud, _) = try encryptedPair()
        var daemonArguments = Data()
        var statusJSON = ""
        try a.withMount { mountA in
            try b.withMount { mountB in
                try ShelfCLI.expectArrives(Data("Edited on the laptop.\n".utf8), at: "Notes/Unattended.md",
                                           from: mountA, on: mountB, within: .seconds(20))
                let pid = try #require(try CrashRecoveryTests.daemonPID(library: b.library.path))
                daemonArguments = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data()
                let status = try b.run("cloud", "status", "--json")
                try #require(status.status == 0, "\(status)")
                statusJSON = status.stdout
            }
        }
        #expect(!daemonArguments.isEmpty)
        #expect(daemonArguments.range(of: Data(Self.passphrase.utf8)) == nil, "the mount's arguments hold the passphrase")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(statusJSON.utf8)) as? [String: Any])
        #expect(json["encrypted"] as? Bool == true, "\(statusJSON)")
        #expect(!statusJSON.contains(Self.passphrase))

        let places = [a.scratch.appendingPathComponent("config").path, a.library.path,
                      b.scratch.appendingPathComponent("config").path, b.library.path, cloud]
        #expect(FileManager.default.fileExists(atPath: b.library.appendingPathComponent("logs/mount.log").path))
        for place in places {
            let files = try SeveralDevicesTests.files(under: place)
            #expect(!files.isEmpty, "nothing in \(place)")
            for (path, bytes) in files {
                #expect(bytes.range(of: Data(Self.passphrase.utf8)) == nil, "\(place)/\(path) holds the passphrase")
            }
        }
    }

    /// The passphrase changes by rewrapping, on a mounted device too: B, which did not sync
    /// meanwhile, keeps syncing; a new device links with the new passphrase and not the old.
    @Test func aPassphraseChangeLeavesOfflineDevicesSyncingAndNewOnesNeedTheNewOne() throws {
        let (a, b, cloud, _) = try encryptedPair()
        let newFile = a.scratch.appendingPathComponent("new-passphrase").path
        try Data("a new passphrase, longer\n".utf8).write(to: URL(fileURLWithPath: newFile))
        // While A is mounted: the change writes only the cloud's keys.
        let changed = try a.withMount { _ in try a.run("cloud", "passphrase", "--passphrase-file", newFile) }
        #expect(changed.status == 0 && changed.stdout.contains("Changed the passphrase"), "\(changed)")

        let note = try addNote(a, "After the change", "Written after the passphrase changed.\n")
        try synced(a)
        try synced(b)
        #expect(try b.run("show", note).stdout.contains("after the passphrase changed"))

        let (c, oldFile) = try device()
        let refused = try c.run("cloud", "link", cloud, "--passphrase-file", oldFile, "--device", "new")
        #expect(refused.status != 0 && refused.stderr.contains("passphrase does not open"), "\(refused)")
        let linked = try c.run("cloud", "link", cloud, "--passphrase-file", newFile, "--device", "new")
        #expect(linked.status == 0, "\(linked)")
        #expect(try c.run("show", note).stdout.contains("after the passphrase changed"))
    }

    /// What the encryption commands refuse, each with one line, nothing changed.
    @Test func encryptionCommandsRefuseWhatTheyCannotDo() throws {
        let (plain, file) = try device()
        func refused(_ arguments: String..., saying phrase: String) throws {
            let result = try plain.run(arguments)
            #expect(result.status != 0 && Self.lines(result.stderr).count == 1 && result.stderr.contains(phrase),
                    "\(arguments): \(result)")
        }
        let newCloud = plain.scratch.appendingPathComponent("new-cloud").path
        try refused("cloud", "passphrase", "--passphrase-file", file, saying: "not linked")
        try refused("cloud", "encrypt", newCloud, "--passphrase-file", file, saying: "not linked")

        let cloud = plain.scratch.appendingPathComponent("cloud").path
        try #require(try plain.run("cloud", "link", cloud, "--device", "laptop").status == 0)
        #expect(try plain.run("cloud", "status").stdout.contains("Encrypted: no"))
        try refused("cloud", "passphrase", "--passphrase-file", file, saying: "not encrypted")
        try refused("cloud", "encrypt", cloud, "--passphrase-file", file, saying: "holds a cloud already")
        try plain.withMount { mountpoint in
            try refused("cloud", "encrypt", newCloud, "--passphrase-file", file, saying: "mounted at \(mountpoint)")
        }
        #expect(!FileManager.default.fileExists(atPath: newCloud))

        let (a, _, encrypted, _) = try encryptedPair()
        let again = try a.run("cloud", "encrypt", newCloud, "--passphrase-file", file)
        #expect(again.status != 0 && again.stderr.contains("encrypted already"), "\(again)")
        #expect(!FileManager.default.fileExists(atPath: newCloud))
        #expect(try a.run("cloud", "status", "--json").stdout.contains(encrypted))
    }

    /// `shelf cloud encrypt` moves two devices from a plain cloud to a new encrypted one: they
    /// converge on the same files without conflict copies, and the old cloud is left as it was.
    @Test func encryptMovesAPlainCloudToANewEncryptedOne() throws {
        let (a, file) = try device()
        let (b, fileB) = try device()
        let old = a.scratch.appendingPathComponent("old-cloud").path
        let new = a.scratch.appendingPathComponent("new-cloud").path
        try #require(try a.run("import", ShelfCLI.samples.appendingPathComponent("library").path).status == 0)
        try #require(try a.run("cloud", "link", old, "--device", "laptop").status == 0)
        try #require(try b.run("cloud", "link", old, "--device", "desk").status == 0)
        try addNote(b, "From the desk", "Only on the desk until A's move fetches it.\n")
        try synced(b)
        try synced(a)
        let pinned = "Notes/From the desk.md"
        try #require(try a.run("pin", pinned).status == 0)
        let oldCloud = try SeveralDevicesTests.files(under: old)

        let moved = try a.run("cloud", "encrypt", new, "--passphrase-file", file)
        try #require(moved.status == 0, "\(moved)")
        #expect(Self.recoveryKey(in: moved.stdout) != nil, "\(moved.stdout)")
        #expect(moved.stdout.contains("shelf cloud unlink") && moved.stdout.contains("shelf cloud link \(new)"), "\(moved.stdout)")
        #expect(moved.stdout.contains("old cloud at \(old) is left as it was"), "\(moved.stdout)")
        #expect(!(FileManager.default.subpaths(atPath: new + "/snapshots") ?? []).isEmpty, "no snapshot written")
        let status = try #require(try JSONSerialization.jsonObject(with: Data(try a.run("cloud", "status", "--json").stdout.utf8))
            as? [String: Any])
        #expect(status["encrypted"] as? Bool == true && status["cloud"] as? String == new, "\(status)")
        let evicted = try a.run("evict", pinned)
        #expect(evicted.status != 0 && evicted.stderr.contains("pinned"), "the pin did not move with the library: \(evicted)")

        try #require(try b.run("cloud", "unlink").status == 0)
        let joined = try b.run("cloud", "link", new, "--passphrase-file", fileB, "--device", "desk")
        try #require(joined.status == 0, "\(joined)")
        try synced(a)
        try synced(b)
        try synced(a)

        let exports = [a, b].map { $0.scratch.appendingPathComponent("export").path }
        for (cli, folder) in zip([a, b], exports) { try #require(try cli.run("export", folder).status == 0) }
        let filesA = try SeveralDevicesTests.files(under: exports[0])
        #expect(filesA.keys.contains("Notes/From the desk.md"))
        #expect(filesA == (try SeveralDevicesTests.files(under: exports[1])))
        #expect(!filesA.keys.contains { $0.contains("conflict") }, "\(filesA.keys.sorted())")
        #expect(try SeveralDevicesTests.files(under: old) == oldCloud, "the old cloud changed")
    }

    /// `cloud encrypt` onto a PostgreSQL cloud made as the README says (`setup-sql`): its empty
    /// schema becomes the encrypted cloud, which another device joins with the passphrase.
    @Test func encryptMovesAPlainCloudOntoANewPostgresCloud() throws {
        let postgres = PostgresCloudCommandTests()
        let (a, file) = try device()
        let (b, fileB) = try device()
        let (address, password) = try postgres.makeCloud(with: a)
        for cli in [a, b] { try postgres.storePassword(password, of: address, for: cli) }
        let note = try addNote(a, "Before the move", "Moved from a folder to the database, sealed.\n")
        try #require(try a.run("cloud", "link", a.scratch.appendingPathComponent("old-cloud").path, "--device", "laptop").status == 0)

        let moved = try a.run("cloud", "encrypt", address, "--passphrase-file", file)
        try #require(moved.status == 0, "\(moved)")
        #expect(moved.stdout.contains("shelf cloud link \(address)"), "\(moved.stdout)")
        let joined = try b.run("cloud", "link", address, "--passphrase-file", fileB, "--device", "desk")
        try #require(joined.status == 0, "\(joined)")
        #expect(try b.run("show", note).stdout.contains("to the database, sealed"))
        #expect(try b.run("cloud", "status").stdout.contains("Encrypted: yes"))
    }

    /// In a terminal the passphrase is asked without echo, twice for a new cloud and once for
    /// one there; two that differ are refused with one line and nothing is linked.
    @Test func aPassphraseTypedAtThePromptIsNotShownAndMustBeTypedTwiceTheSame() throws {
        let (a, _) = try device()
        let cloud = a.scratch.appendingPathComponent("cloud").path
        let mismatch = try Self.inTerminal(a, answering: [("Passphrase for the cloud: ", Self.passphrase + "\n"),
                                                          ("again: ", Self.passphrase + "x\n")],
                                           "cloud", "link", cloud, "--encrypt", "--device", "laptop")
        #expect(mismatch.status != 0 && mismatch.transcript.contains("the two passphrases typed differ"), "\(mismatch)")
        #expect(!mismatch.transcript.contains(Self.passphrase), "echoed: \(mismatch)")
        #expect(try a.run("status").stdout.contains("not linked"))

        let made = try Self.inTerminal(a, answering: [("Passphrase for the cloud: ", Self.passphrase + "\n"),
                                                      ("again: ", Self.passphrase + "\n")],
                                       "cloud", "link", cloud, "--encrypt", "--device", "laptop")
        #expect(made.status == 0 && Self.recoveryKey(in: made.transcript) != nil, "\(made)")
        #expect(!made.transcript.contains(Self.passphrase), "echoed: \(made)")
        #expect(made.echoesAfter, "\(made)")

        // Joining asks once.
        let (b, _) = try device()
        let joined = try Self.inTerminal(b, answering: [("Passphrase for the cloud: ", Self.passphrase + "\n")],
                                         "cloud", "link", cloud, "--device", "desk")
        #expect(joined.status == 0 && !joined.transcript.contains(Self.passphrase), "\(joined)")
        #expect(!joined.transcript.contains("again"), "\(joined)")

        // --encrypt where an encrypted cloud is already opens that one: asked once, not chosen anew.
        let (c, _) = try device()
        let opened = try Self.inTerminal(c, answering: [("Passphrase for the cloud: ", Self.passphrase + "\n")],
                                         "cloud", "link", cloud, "--encrypt", "--device", "attic")
        #expect(opened.status == 0 && !opened.transcript.contains("again"), "\(opened)")
    }

    /// Ctrl-C at the prompt ends the command as Ctrl-C does, and leaves the terminal echoing
    /// again (echo was off for the passphrase); nothing is linked.
    @Test func ctrlCAtThePromptEndsTheCommandWithTheTerminalEchoing() throws {
        let (a, _) = try device()
        let cloud = a.scratch.appendingPathComponent("cloud").path
        let interrupted = try Self.inTerminal(a, answering: [("Passphrase for the cloud: ", "secr\u{3}")],
                                              "cloud", "link", cloud, "--encrypt", "--device", "laptop")
        #expect(interrupted.status == -SIGINT, "\(interrupted)")
        #expect(interrupted.echoesAfter, "\(interrupted)")
        #expect(try a.run("status").stdout.contains("not linked"))
        #expect(!FileManager.default.fileExists(atPath: cloud))
    }

    struct TerminalRun: CustomStringConvertible {
        /// The exit status, or minus the signal that ended the command.
        var status: Int32
        /// Whether the terminal echoed typing once the command had ended.
        var echoesAfter: Bool
        var transcript: String
        var description: String { "exit \(status), echo \(echoesAfter ? "on" : "off") after: \(transcript.debugDescription)" }
    }

    /// Runs `shelf arguments` on a new pseudo-terminal (its controlling terminal, its standard
    /// streams), typing each answer's keys once its prompt shows; returns everything the terminal
    /// showed.
    static func inTerminal(_ cli: ShelfCLI, answering steps: [(prompt: String, answer: String)],
                           _ arguments: String...) throws -> TerminalRun {
        let script = """
            import json, os, pty, select, sys, termios
            steps, command = json.loads(sys.argv[1]), sys.argv[2:]
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(command[0], command)
            shown = b''
            def more():
                global shown
                ready, _, _ = select.select([fd], [], [], 30)
                if not ready:
                    sys.exit('no output for 30 s: %r' % shown)
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    chunk = b''
                shown += chunk
                return chunk
            seen = 0
            for prompt, answer in steps:
                while prompt.encode() not in shown[seen:]:
                    if not more():
                        break
                if prompt.encode() not in shown[seen:]:
                    break
                seen = shown.index(prompt.encode(), seen) + len(prompt)
                os.write(fd, answer.encode())
            while more():
                pass
            _, status = os.waitpid(pid, 0)
            echoes = bool(termios.tcgetattr(fd)[3] & termios.ECHO)
            sys.stdout.write('%d %d\\n' % (os.waitstatus_to_exitcode(status), echoes))
            sys.stdout.write(shown.decode('utf-8', 'replace'))
            """
        let steps = try JSONSerialization.data(withJSONObject: steps.map { [$0.prompt, $0.answer] })
        let ran = try cli.tool("python3", ["-c", script, String(decoding: steps, as: UTF8.self), ShelfCLI.executable.path] + arguments,
                               timeout: .seconds(90))
        try #require(ran.status == 0, "the terminal driver failed: \(ran)")
        let (ending, transcript) = try #require(ran.stdout.firstIndex(of: "\n").map {
            (ran.stdout[..<$0].split(separator: " ").compactMap { Int32($0) }, String(ran.stdout[ran.stdout.index(after: $0)...]))
        })
        try #require(ending.count == 2, "the terminal driver's first line: \(ran.stdout)")
        return TerminalRun(status: ending[0], echoesAfter: ending[1] == 1, transcript: transcript)
    }
}
