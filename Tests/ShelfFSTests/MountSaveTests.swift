import Foundation
import Testing
import TestSupport
import TestTraits
import ShelfModel
import ShelfStore
@testable import ShelfFS

/// Editors' save patterns through a real mount: each must keep the item's identity, update the
/// record, read back exactly the bytes written and leave no temp file behind.
@Suite(.serialized, .scratchFolders) struct MountSaveTests {
    /// Shell scripts that change `current_page: 12` into `current_page: 99` in the file `$F`.
    static let savePatterns: [(name: String, script: String)] = [
        ("sed -i", #"sed -i 's/current_page: 12/current_page: 99/' "$F""#),
        ("python atomic replace", #"""
            python3 -c 'import os, sys, tempfile
            path = sys.argv[1]
            text = open(path).read().replace("current_page: 12", "current_page: 99")
            fd, temp = tempfile.mkstemp(dir=os.path.dirname(path))
            with os.fdopen(fd, "w") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temp, path)' "$F"
            """#),
        ("python r+ and truncate", #"""
            python3 -c 'import sys
            with open(sys.argv[1], "r+") as f:
                text = f.read().replace("current_page: 12", "current_page: 99")
                f.seek(0)
                f.write(text)
                f.truncate()' "$F"
            """#),
        ("vim backupcopy=no", #"vim -Es -u NONE -c 'set backupcopy=no' -c '%s/current_page: 12/current_page: 99/' -c 'wq' "$F""#),
        ("vim defaults (4913 probe)", #"vim -Es -u NONE -c '%s/current_page: 12/current_page: 99/' -c 'wq' "$F""#),
        ("gedit output stream", #"""
            sed 's/current_page: 12/current_page: 99/' "$F" > "$(dirname "$F")/.goutputstream-AB12CD" &&
            mv "$(dirname "$F")/.goutputstream-AB12CD" "$F"
            """#),
        ("vim backupcopy=yes", #"vim -Es -u NONE -c 'set backupcopy=yes' -c '%s/current_page: 12/current_page: 99/' -c 'wq' "$F""#),
        ("JetBrains safe write", #"""
            mv "$F" "${F}___jb_old___" &&
            sed 's/current_page: 12/current_page: 99/' "${F}___jb_old___" > "${F}___jb_tmp___" &&
            mv "${F}___jb_tmp___" "$F" && rm "${F}___jb_old___"
            """#),
        // nano needs a terminal: Python gives it a pty and types search-and-replace (^\),
        // replace all (a), then ^X, which saves on exit with -t — each key once nano's screen
        // shows it is ready for it.
        ("nano through a terminal", #"""
            python3 - "$F" <<'PY'
            import os, pty, select, sys, time
            pid, terminal = pty.fork()
            if pid == 0:
                os.environ["TERM"] = "xterm"
                os.execvp("nano", ["nano", "-t", "--ignorercfiles", sys.argv[1]])
            screen = b""
            def wait_for(text):
                global screen
                deadline = time.time() + 10
                while text not in screen:
                    ready, _, _ = select.select([terminal], [], [], max(0, deadline - time.time()))
                    if not ready:
                        sys.exit(f"nano never showed {text!r}")
                    screen += os.read(terminal, 65536)
            def press(keys, then):
                global screen
                screen = b""
                os.write(terminal, keys)
                wait_for(then)
            wait_for(b"current_page")
            press(b"\x1c", b"Search")
            press(b"current_page: 12\r", b"Replace with")
            press(b"current_page: 99\r", b"All")
            press(b"a", b"Replaced")
            os.write(terminal, b"\x18")
            while True:
                try:
                    if not os.read(terminal, 65536):
                        break
                except OSError:
                    break
            _, status = os.waitpid(pid, 0)
            sys.exit(os.waitstatus_to_exitcode(status))
            PY
            """#),
        ("cp over", #"sed 's/current_page: 12/current_page: 99/' "$F" > /tmp/shelf-cp-$$ && cp /tmp/shelf-cp-$$ "$F" && rm /tmp/shelf-cp-$$"#),
    ]

    @Test(arguments: savePatterns.map(\.name))
    func editorSaveKeepsIdentity(_ pattern: String) throws {
        let script = try #require(Self.savePatterns.first { $0.name == pattern }).script
        let library = try MountableLibrary()
        let book = try library.addBook()
        let written = try library.withMount { mount in
            let before = try mount.sh("ls -a Books")
            try mount.sh("F='\(book.path)'\n" + script)
            try library.waitUntilSaved()
            let written = try mount.bytes(book.path)
            #expect(String(decoding: written, as: UTF8.self).contains("current_page: 99"))
            let stored = try #require(try library.store.record(atPath: book.path))
            #expect(stored.item.id == book.item.id)
            guard case .book(let saved) = stored.item else { Issue.record("not a book"); return written }
            #expect(saved.currentPage == 99)
            #expect(saved.passages.map(\.id) == { if case .book(let b) = book.item { b.passages.map(\.id) } else { [] } }())
            #expect(Array(stored.text.utf8) == written)
            #expect(try mount.sh("ls -a Books") == before, "a temp file stayed behind")
            #expect(try library.store.trashedItems().isEmpty)
            return written
        }
        let reread = try library.withMount { mount in try mount.bytes(book.path) }
        #expect(reread == written, "after a remount the file reads as written")
    }

    @Test func tempFileWrittenAfterItsRenameSavesAtClose() throws {
        let library = try MountableLibrary()
        let note = try library.addNote()
        try library.withMount { mount in
            let script = """
            import os, sys
            path = sys.argv[1]
            text = open(path).read()
            fd, temp = __import__("tempfile").mkstemp(dir=os.path.dirname(path))
            os.write(fd, text.encode())
            os.replace(temp, path)
            os.write(fd, b"Written after the rename.\\n")
            os.close(fd)
            """
            let result = try mount.run("python3", ["-c", script, note.path])
            #expect(result.succeeded, "\(result)")
            try library.waitUntilSaved()
            let stored = try #require(try library.store.record(id: note.item.id))
            #expect(stored.text == note.text + "Written after the rename.\n")
            #expect(try mount.text(note.path) == stored.text)
            let listing = try mount.sh("ls -a Notes")
            #expect(listing == ".\n..\nPlan.md\n", "\(listing)")
        }
    }

    @Test func plainFilesKeepTheirBytesAndAttributes() throws {
        let library = try MountableLibrary()
        try library.withMount { mount in
            try mount.sh("mkdir -p .obsidian && printf '{}' > .obsidian/app.json && setfattr -n user.color -v blue .obsidian/app.json")
            try mount.sh("ln -s 'me@host.42' 'Notes/.#Plan.md'")
            #expect(try mount.sh("getfattr --only-values -n user.color .obsidian/app.json") == "blue")
            #expect(try mount.sh("readlink 'Notes/.#Plan.md'") == "me@host.42\n")
            let real = library.store.plainFilesFolder.appendingPathComponent(".obsidian/app.json")
            #expect(try String(contentsOf: real, encoding: .utf8) == "{}")
        }
    }

    @Test func appendToNoteKeepsBytes() throws {
        let library = try MountableLibrary()
        let note = try library.addNote()
        try library.withMount { mount in
            try mount.sh("printf 'More text.\\n' >> '\(note.path)'")
            try library.waitUntilSaved()
            let written = try mount.text(note.path)
            #expect(written == note.text + "More text.\n")
            let stored = try #require(try library.store.record(id: note.item.id))
            #expect(stored.text == written)
            guard case .note(let saved) = stored.item else { Issue.record("not a note"); return }
            #expect(saved.content.hasSuffix("More text.\n"))
        }
    }

    @Test func invalidSaveIsKeptAsDraftUntilAValidSave() throws {
        let library = try MountableLibrary()
        let book = try library.addBook()
        try library.withMount { mount in
            try mount.sh(#"sed -i 's/current_page: 12/current_page: many/' '\#(book.path)'"#)
            #expect(try mount.text(book.path).contains("current_page: many"))
            let error = try mount.sh("getfattr --only-values -n user.shelf.error '\(book.path)'")
            #expect(error.contains("current_page"))
            #expect(try mount.sh("cat .shelf/errors.txt").contains(book.path))
            let stored = try #require(try library.store.record(id: book.item.id))
            guard case .book(let kept) = stored.item else { Issue.record("not a book"); return }
            #expect(kept.currentPage == 12)

            try mount.sh(#"sed -i 's/current_page: many/current_page: 13/' '\#(book.path)'"#)
            #expect(!(try mount.shell("getfattr -n user.shelf.error '\(book.path)'").succeeded))
            #expect(try mount.sh("cat .shelf/errors.txt").isEmpty)
            guard case .book(let fixed) = try #require(try library.store.record(id: book.item.id)).item else { Issue.record("unexpected case"); return }
            #expect(fixed.currentPage == 13)
        }
    }

    @Test func newFilesBecomeItems() throws {
        let library = try MountableLibrary()
        try library.withMount { mount in
            // A new file is saved once its writer closes it and keeps its bytes: its id is in
            // the store and `user.shelf.id`, not written into a file nobody asked Shelf to change.
            try mount.sh("printf 'Hello.\\n' > Notes/Fresh.md")
            try library.waitUntilSaved()
            let note = try #require(try library.store.record(atPath: "Notes/Fresh.md"))
            #expect(note.item.title == "Fresh")
            guard case .note(let fresh) = note.item else { Issue.record("not a note"); return }
            #expect(fresh.content == "Hello.\n")
            #expect(note.text == "Hello.\n")
            #expect(try mount.text("Notes/Fresh.md") == "Hello.\n")
            #expect(try mount.sh("getfattr --only-values -n user.shelf.id Notes/Fresh.md") == note.item.id.rawValue)
            // One write and close: a new book, its bytes kept as written.
            try mount.sh("mkdir -p 'Books/Shelf 1'")
            let result = try mount.run("python3", ["-c", "open('Books/Shelf 1/Emma.md', 'w').write('---\\ntitle: Emma\\nauthor: Jane Austen\\n---\\n')"])
            #expect(result.succeeded, "\(result)")
            try library.waitUntilSaved()
            let book = try #require(try library.store.record(atPath: "Books/Shelf 1/Emma.md"))
            #expect(book.item.title == "Emma")
            #expect(book.draftDiagnostics == nil)
            #expect(book.text == "---\ntitle: Emma\nauthor: Jane Austen\n---\n")
            #expect(try mount.text("Books/Shelf 1/Emma.md") == book.text)
        }
    }

    @Test func removeSendsToTrashAndRestoreBringsBack() throws {
        let library = try MountableLibrary()
        let note = try library.addNote()
        try library.withMount { mount in
            try mount.sh("cat '\(note.path)' > /dev/null && rm '\(note.path)'")
            #expect(try library.store.trashedItems().map(\.id) == [note.item.id])
            #expect(!(try mount.sh("ls Notes")).contains("Plan.md"))
            let cli = try library.reopened()
            try cli.write { _ = try $0.restore(id: note.item.id) }
            // Generous: a loaded 2-core machine once took longer than 2 s here (the speed is the benchmark's).
            #expect(try eventually(within: .seconds(10)) { try mount.sh("ls Notes").contains("Plan.md") })
            #expect(try mount.text(note.path) == note.text)
        }
    }

    @Test func renamesMoveTheSameItem() throws {
        let library = try MountableLibrary()
        let note = try library.addNote()
        try library.withMount { mount in
            try mount.sh("mkdir Notes/Old && mv Notes/Plan.md Notes/Old/Renamed.md && mv Notes/Old Notes/Archive")
            let moved = try #require(try library.store.record(id: note.item.id))
            #expect(moved.path == "Notes/Archive/Renamed.md")
            #expect(moved.item.title == "Plan")
            #expect(try mount.text("Notes/Archive/Renamed.md") == moved.text)
            // Out of the library as a plain file, and back in with its id.
            try mount.sh("mkdir .trash && mv Notes/Archive/Renamed.md .trash/Renamed.md")
            #expect(try library.store.record(id: note.item.id) == nil)
            #expect(try mount.text(".trash/Renamed.md") == moved.text)
            try mount.sh("mv .trash/Renamed.md Notes/Back.md")
            #expect(try library.store.record(id: note.item.id)?.path == "Notes/Back.md")
        }
    }

    /// A program that took a file's size before a change from elsewhere and reads after it — as
    /// Foundation, Node and git do, reading exactly the size `fstat` gave — reads the version it
    /// sized, whole: the change comes as another file at the name, as a rename over it would on
    /// a disk, and the file the program holds keeps its bytes.
    @Test func aReaderThatSizedAFileBeforeAChangeElsewhereReadsThatVersionWhole() throws {
        let library = try MountableLibrary()
        let note = try library.addNote()
        try library.withMount { mount in
            let path = mount.path(note.path)
            let file = try mount.perform { open(path, O_RDONLY) }
            try #require(file >= 0)
            defer { close(file) }
            let sized = try mount.perform { () -> Int in
                var info = stat()
                return fstat(file, &info) == 0 ? Int(info.st_size) : -1
            }
            #expect(sized == note.text.utf8.count)

            try changeElsewhere(note, of: library, seenThrough: mount) { $0 += "A longer line from elsewhere.\n" }
            #expect(try wholeText(of: file, in: mount) == note.text, "the open file reads the version it sized")
        }
    }

    /// A program writing a file that a change from elsewhere replaced meanwhile saves into the
    /// item; a program that opened the item's new file keeps reading what it opened, whole.
    @Test func aSaveThroughAReplacedFileLeavesTheFileOthersOpenedAsItWas() throws {
        let library = try MountableLibrary()
        let note = try library.addNote()
        try library.withMount { mount in
            let path = mount.path(note.path)
            let writer = try mount.perform { open(path, O_WRONLY | O_APPEND) }
            try #require(writer >= 0)
            let updated = try changeElsewhere(note, of: library, seenThrough: mount) { $0 = "From elsewhere.\n\n" + $0 }
            let reader = try mount.perform { open(path, O_RDONLY) }
            try #require(reader >= 0)
            defer { close(reader) }

            let appended = "Appended through the old file.\n"
            #expect(try mount.perform { appended.withCString { write(writer, $0, strlen($0)) } } == appended.utf8.count)
            #expect(try mount.perform { close(writer) } == 0)
            #expect(try eventually(within: .seconds(10)) { try mount.text(note.path).contains(appended) },
                    "the write reached the item")
            #expect(try wholeText(of: reader, in: mount) == updated.text, "the file opened before the save reads as opened")
        }
    }

    /// Changes note `note`'s text with `edit` from another process, and waits until the mount
    /// shows the new version at its name.
    @discardableResult
    private func changeElsewhere(_ note: ItemRecord, of library: MountableLibrary, seenThrough mount: TestMount,
                                 _ edit: (inout String) -> Void) throws -> ItemRecord {
        guard case .note(var changed) = note.item else { Issue.record("the sample is a note"); return note }
        edit(&changed.content)
        let updated = try library.reopened().update(.note(changed))
        #expect(try eventually(within: .seconds(10)) { try mount.text(note.path) == updated.text },
                "the name shows the new version")
        return updated
    }

    /// Everything open file `file` reads from its start.
    private func wholeText(of file: Int32, in mount: TestMount) throws -> String {
        let bytes = try mount.perform { () -> [UInt8] in
            var bytes = [UInt8](repeating: 0, count: 1 << 16)
            let count = pread(file, &bytes, bytes.count, 0)
            return Array(bytes.prefix(max(count, 0)))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Changes from another process show in the mount without a remount (how soon is a
    /// benchmark's claim; the deadline here only keeps a hang from passing).
    @Test func changesFromAnotherProcessShowWithoutARemount() throws {
        let library = try MountableLibrary()
        let note = try library.addNote()
        try library.withMount { mount in
            #expect(try mount.text(note.path) == note.text)
            let cli = try library.reopened()
            guard case .note(var changed) = note.item else { Issue.record("unexpected case"); return }
            changed.content = "Changed by the CLI.\n"
            let updated = try cli.update(.note(changed))
            #expect(try eventually(within: .seconds(10)) { try mount.text(note.path) == updated.text })
            // Listed once and again (the second listing may come from the kernel's cache), then
            // changed elsewhere: the listing follows.
            #expect(try mount.sh("ls Notes; ls Notes") == "Plan.md\nPlan.md\n")
            let added = try cli.insert(.note(Note(title: "From CLI", content: "x\n")))
            #expect(eventually(within: .seconds(10)) { (try? mount.sh("ls Notes")) == "From CLI.md\nPlan.md\n" })
            #expect(eventually(within: .seconds(10)) { (try? mount.text(added.path)) == added.text })
            try cli.write { try $0.trash(id: added.item.id) }
            #expect(eventually(within: .seconds(10)) { (try? mount.sh("ls Notes")) == "Plan.md\n" })
        }
    }

    @Test func parallelWritersAndReaders() throws {
        let library = try MountableLibrary()
        let notes = try (0..<8).map { try library.addNote("Note \($0)", content: "start\n") }
        let shared = try library.addNote("Shared", content: "shared\n")
        try library.withMount { mount in
            // Python threads rather than `sh &`/`wait`: the test process's blocked SIGCHLD is
            // inherited by children, which makes `wait` hang.
            // The shared note is saved five times (write a temp file, rename it over) while eight
            // readers read it: each read must be one whole version, never a half-written file.
            // (Rewriting in place with O_TRUNC is not atomic on any filesystem: a reader opened
            // before the truncation may see the short file, as on ext4.)
            let script = """
            import os, sys, threading
            shared, paths = sys.argv[1], sys.argv[2:]
            original = open(shared).read()
            versions = [original] + [original.replace("shared", "shared %d" % n) for n in range(1, 6)]
            bad, lock = [], threading.Lock()
            def append(path):
                for n in range(1, 6):
                    with open(path, "a") as f: f.write("line %d\\n" % n)
            def rewrite():
                for text in versions[1:]:
                    with open(shared + ".tmp", "w") as f: f.write(text)
                    os.replace(shared + ".tmp", shared)
            def read():
                for _ in range(20):
                    with open(shared) as f: text = f.read()
                    if text not in versions:
                        with lock: bad.append(text)
            threads = [threading.Thread(target=append, args=(p,)) for p in paths]
            threads += [threading.Thread(target=read) for _ in paths] + [threading.Thread(target=rewrite)]
            for t in threads: t.start()
            for t in threads: t.join()
            print(len(bad), "bad reads", bad[:1])
            """
            let result = try mount.run("python3", ["-c", script, shared.path] + notes.map(\.path), timeout: .seconds(30))
            #expect(result.succeeded, "\(result)")
            #expect(result.stdout == "0 bad reads []\n")
            try library.waitUntilSaved()
            let final = try #require(try library.store.record(id: shared.item.id))
            #expect(final.text == shared.text.replacingOccurrences(of: "shared", with: "shared 5"))
            for note in notes {
                let stored = try #require(try library.store.record(id: note.item.id))
                #expect(stored.text.hasSuffix("line 1\nline 2\nline 3\nline 4\nline 5\n"))
            }
        }
    }
}
