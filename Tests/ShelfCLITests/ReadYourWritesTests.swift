import Foundation
import Testing
import TestTraits

/// Once `close()` on an item file returns, its `user.shelf.*` attributes and every `shelf`
/// command see that save — although the daemon learns of the close only through inotify, a
/// moment later. Rounds alternate valid and invalid saves, so a stale answer shows either way.
@Suite(.serialized, .scratchFolders) struct ReadYourWritesTests {
    static let rounds = 200

    /// Python that saves `rounds` times (one write, one close) and checks after each close.
    /// `check` is the body of `check(round, valid, data)`; it raises on a stale answer.
    static func driver(_ check: String) -> String {
        """
        import os, subprocess, sys
        path, shelf, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
        def check(round, valid, data):
        \(check.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n"))
        # A long note: its commit (parse, full-text index) takes longer than starting a command.
        body = "Read more books, and slowly. " * 20000
        for round in range(rounds):
            valid = round % 2 == 0
            data = (f"---\\ntitle: Goals\\nfavorite: {'true' if valid else 'maybe'}\\n---\\nRound {round}.\\n{body}\\n").encode()
            with open(path, "wb") as file:
                file.write(data)
            check(round, valid, data)
        """
    }

    func withMountedNote(_ body: (ShelfCLI, String) throws -> Void) throws {
        try ShelfCLI.withSampleLibrary { cli, mountpoint in
            let mounted = try cli.run("mount", mountpoint, timeout: .seconds(40))
            try #require(mounted.status == 0, "\(mounted.stderr)")
            try body(cli, mountpoint + "/Notes/Reading goals 2026.md")
        }
    }

    @Test func attributesShowTheSaveThatCloseEnded() throws {
        try withMountedNote { cli, file in
            let script = Self.driver("""
                try:
                    error = os.getxattr(path, "user.shelf.error")
                except OSError:
                    error = None
                if valid != (error is None):
                    raise SystemExit(f"round {round}: user.shelf.error is {error!r} right after a {'valid' if valid else 'invalid'} save")
                """)
            let result = try cli.tool("python3", "-c", script, file, ShelfCLI.executable.path, String(Self.rounds),
                                      timeout: .seconds(120))
            #expect(result.status == 0, "\(result.stderr)")
        }
    }

    @Test func commandsSeeTheSaveThatCloseEnded() throws {
        try withMountedNote { cli, file in
            let script = Self.driver("""
                shown = subprocess.run([shelf, "show", "Notes/Reading goals 2026.md"], capture_output=True).stdout
                if shown != data:
                    raise SystemExit(f"round {round}: shelf show printed {shown[-40:]!r}, the file was saved as {data[-40:]!r}")
                """)
            let result = try cli.tool("python3", "-c", script, file, ShelfCLI.executable.path, String(Self.rounds),
                                      timeout: .seconds(180))
            #expect(result.status == 0, "\(result.stderr)")
        }
    }

    /// Many files closed at once leave a queue of saves behind them; an export started right
    /// after the last close must still contain every one.
    @Test func exportSeesEverySaveClosedBeforeIt() throws {
        try withMountedNote { cli, file in
            let notes = (file as NSString).deletingLastPathComponent
            let export = cli.scratch.appendingPathComponent("export").path
            let script = """
                import os, subprocess, sys
                notes, shelf, export = sys.argv[1], sys.argv[2], sys.argv[3]
                body = "A longer thought about the week's reading. " * 2000
                for round in range(10):
                    written = {}
                    for number in range(30):
                        name = f"Batch {number}.md"
                        written[name] = f"Round {round}, note {number}.\\n{body}\\n".encode()
                        with open(os.path.join(notes, name), "wb") as file:
                            file.write(written[name])
                    subprocess.run([shelf, "export", export], check=True, capture_output=True)
                    for name, data in written.items():
                        with open(os.path.join(export, "Notes", name), "rb") as file:
                            if file.read() != data:
                                raise SystemExit(f"round {round}: the export has an older {name}")
                """
            let result = try cli.tool("python3", "-c", script, notes, ShelfCLI.executable.path, export,
                                      timeout: .seconds(180))
            #expect(result.status == 0, "\(result.stderr)")
        }
    }
}
