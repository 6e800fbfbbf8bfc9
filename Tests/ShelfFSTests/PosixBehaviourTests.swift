import Foundation
import Testing
import TestSupport
import TestTraits
import ShelfModel
import ShelfStore
@testable import ShelfFS

/// What programs rely on a filesystem for, through a real mount: files deleted while open,
/// hard links, the modes files are created with, owners, and the errno of names that cannot be.
@Suite(.serialized, .scratchFolders) struct PosixBehaviourTests {
    /// Temp files, SQLite and git packs write, unlink and go on using the descriptor.
    @Test func aPlainFileUnlinkedWhileOpenStaysReadableAndWritable() throws {
        let library = try MountableLibrary()
        try library.withMount { mount in
            let result = try mount.run("python3", ["-c", """
                import os, sys
                path = sys.argv[1]
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
                os.write(fd, b"kept after unlink")
                os.unlink(path)
                assert not os.path.exists(path), "the name is gone"
                print(os.pread(fd, 100, 0).decode())
                os.pwrite(fd, b"!", 17)
                print(os.pread(fd, 100, 0).decode())
                info = os.fstat(fd)
                print(info.st_nlink, info.st_size)
                os.ftruncate(fd, 4)
                os.fchmod(fd, 0o600)
                info = os.fstat(fd)
                print(info.st_size, oct(info.st_mode & 0o777))
                # A new file at the same name is another file.
                new = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
                os.write(new, b"new file")
                print(os.pread(fd, 100, 0).decode(), os.fstat(new).st_nlink, os.fstat(fd).st_size)
                os.close(new)
                os.close(fd)
                """, mount.path("scratch.tmp")])
            #expect(result.succeeded, "\(result)")
            #expect(result.stdout == "kept after unlink\nkept after unlink!\n0 18\n4 0o600\nkept 1 4\n")
            #expect(try mount.text("scratch.tmp") == "new file")
        }
    }

    @Test func anItemUnlinkedWhileOpenStaysReadableWithNoLinks() throws {
        let library = try MountableLibrary()
        let note = try library.addNote(content: "Still here.\n")
        try library.withMount { mount in
            let result = try mount.run("python3", ["-c", """
                import os, sys
                fd = os.open(sys.argv[1], os.O_RDONLY)
                print(os.fstat(fd).st_nlink)
                os.unlink(sys.argv[1])
                data = os.pread(fd, 4096, 0).decode()
                print("Still here." in data, os.fstat(fd).st_nlink)
                os.close(fd)
                """, mount.path(note.path)])
            #expect(result.succeeded, "\(result)")
            #expect(result.stdout == "1\nTrue 0\n")
        }
    }

    /// `ln`, `cp -al` and `rsync -H` in the plain area; items have one name each.
    @Test func hardLinksInThePlainAreaAreOneFile() throws {
        let library = try MountableLibrary()
        let note = try library.addNote()
        try library.withMount { mount in
            try mount.sh("mkdir -p attachments/sub && printf one > attachments/a && ln attachments/a attachments/sub/b")
            #expect(try mount.sh("stat -c '%i %h' attachments/a attachments/sub/b | uniq -c | awk '{print $1, $3}'") == "2 2\n",
                    "both names show one inode with two links")
            try mount.sh("printf two >> attachments/sub/b")
            #expect(try mount.text("attachments/a") == "onetwo", "a write through one name shows through the other")
            try mount.sh("rm attachments/a")
            #expect(try mount.sh("stat -c %h attachments/sub/b") == "1\n")
            #expect(try mount.text("attachments/sub/b") == "onetwo")

            try mount.sh("cp -al attachments copy && rsync -aH attachments/ synced/")
            #expect(try mount.sh("stat -c %h attachments/sub/b copy/sub/b") == "2\n2\n")
            #expect(try mount.sh("[ $(stat -c %i attachments/sub/b) = $(stat -c %i copy/sub/b) ] && echo same") == "same\n")
            #expect(try mount.sh("ln synced/sub/b synced/c && rsync -aH synced/ again/ && stat -c %h again/c again/sub/b")
                    == "2\n2\n", "rsync -H keeps the links it finds on the mount")

            try mount.sh("mkfifo fifo && ln fifo fifo-too && ln -s target symlink && ln symlink symlink-too")
            #expect(try mount.sh("stat -c '%i %h' fifo fifo-too | uniq -c | awk '{print $1, $3}'") == "2 2\n",
                    "other kinds of files have links too")
            #expect(try mount.sh("stat -c '%i %h' symlink symlink-too | uniq -c | awk '{print $1, $3}'") == "2 2\n")

            let item = "'\(note.path)'"
            let linkItem = try mount.shell("ln \(item) other-name")
            #expect(!linkItem.succeeded && linkItem.stderr.contains("Operation not permitted"), "\(linkItem)")
            let linkIntoNotes = try mount.shell("ln attachments/sub/b Notes/linked.md")
            #expect(!linkIntoNotes.succeeded && linkIntoNotes.stderr.contains("Operation not permitted"), "\(linkIntoNotes)")
            #expect(try mount.sh("ls Notes") == "\(MountPath(note.path).name)\n")
        }
        try library.withMount { mount in
            let names = try mount.sh("stat -c '%i %h' attachments/sub/b copy/sub/b | uniq -c | awk '{print $1, $3}'")
            #expect(names == "2 2\n", "after a remount the two names are still one inode")
        }
    }

    @Test func filesFoldersAndItemsKeepTheModeTheyAreCreatedWith() throws {
        let library = try MountableLibrary()
        try library.withMount { mount in
            try mount.sh("""
                umask 0 && mkdir -m 777 open && mkdir -m 2770 shared && touch wide && mkfifo -m 666 fifo
                umask 077 && touch private && mkdir closed
                umask 022 && touch usual
                """)
            #expect(try mount.sh("stat -c '%n %a' open shared wide fifo private closed usual") == """
                open 777
                shared 2770
                wide 666
                fifo 666
                private 600
                closed 700
                usual 644

                """)
            let created = try mount.run("python3", ["-c", """
                import os, sys
                fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                os.write(fd, b"A private note.\\n")
                os.close(fd)
                """, mount.path("Notes/Private.md")])
            #expect(created.succeeded, "\(created)")
            try library.waitUntilSaved()
            #expect(try mount.sh("stat -c %a Notes/Private.md") == "600\n")
        }
        try library.withMount { mount in
            let modes = try mount.sh("stat -c %a Notes/Private.md open")
            #expect(modes == "600\n777\n", "kept across a remount")
        }
    }

    /// The suite runs as root, as a mount that may give files away does.
    @Test func chownOfAnItemIsStoredAndShown() throws {
        let library = try MountableLibrary()
        let note = try library.addNote()
        let other = try library.addNote("Other")
        let item = "'\(note.path)'"
        try library.withMount { mount in
            try mount.sh("chown 4321:4322 \(item) && chgrp 4323 '\(other.path)'")
            #expect(try mount.sh("stat -c '%u %g' \(item) '\(other.path)'") == "4321 4322\n\(getuid()) 4323\n")
            #expect(try mount.sh("ls -ln Notes | awk 'NR > 1 {print $3, $4}'") == "\(getuid()) 4323\n4321 4322\n",
                    "a listing (Other.md, Plan.md) shows the owners too")
            try mount.sh("touch plain && chown 4321:4322 plain")
            #expect(try mount.sh("stat -c '%u %g' plain") == "4321 4322\n", "plain files keep their owner")
        }
        try library.withMount { mount in
            let owners = try mount.sh("stat -c '%u %g' \(item)")
            #expect(owners == "4321 4322\n", "kept across a remount")
            try mount.sh("chown $(id -u):$(id -g) \(item)")
        }
        #expect(try library.store.owners() == [other.item.id: FileOwner(uid: getuid(), gid: 4323)],
                "given back to the mount's owner, the note has no owner stored")
    }

    /// `--allow-other`: others get into the mount, and what they create is theirs.
    @Test func filesOtherUsersCreateAreTheirs() throws {
        let library = try MountableLibrary()
        try library.withMount(allowOther: true) { mount in
            #expect(try mount.sh("stat -c %A .") == "drwxr-xr-x\n", "the root lets others in")
            try mount.sh("mkdir -m 1777 shared && chmod 1777 Notes")
            let nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups"
            let created = try mount.shell("""
                \(nobody) sh -c 'ls >/dev/null && umask 077 && echo hi > shared/mine && mkdir shared/folder &&
                  printf "# Mine\\n" > Notes/Mine.md && chmod 640 Notes/Mine.md'
                """)
            #expect(created.succeeded, "\(created)")
            try library.waitUntilSaved()
            #expect(try mount.sh("stat -c '%u %g %a' shared/mine shared/folder Notes/Mine.md") == """
                65534 65534 600
                65534 65534 700
                65534 65534 640

                """)
        }
    }

    /// A path just under `PATH_MAX` from the mount's root works, though the library folder's
    /// own path would make the real one longer.
    @Test func pathsAsLongAsTheMountAllowsWork() throws {
        let library = try MountableLibrary()
        try library.withMount { mount in
            let result = try mount.run("python3", ["-c", """
                import os
                name = "d" * 254
                path = "/".join([name] * 16) + "/file"
                os.makedirs(os.path.dirname(path))
                with open(path, "w") as f:
                    f.write("deep")
                os.chmod(path, 0o600)
                os.link(path, path + "2")
                print(len(path), open(path).read(), oct(os.stat(path).st_mode & 0o777), os.stat(path + "2").st_nlink)
                os.rename(path + "2", path + "3")
                os.unlink(path + "3")
                os.unlink(path)
                """])
            #expect(result.succeeded, "\(result)")
            #expect(result.stdout == "4084 deep 0o600 2\n")
        }
    }

    @Test func namesThatCannotBeGetTheirOwnErrno() throws {
        let library = try MountableLibrary()
        let note = try library.addNote()
        try library.withMount { mount in
            let long = String(repeating: "x", count: 257)
            for script in ["stat \(long)", "stat Notes/\(long).md", "touch \(long)", "mkdir \(long)"] {
                let result = try mount.shell(script)
                #expect(!result.succeeded && result.stderr.contains("File name too long"), "\(script): \(result)")
            }
            let item = "'\(note.path)'"
            for script in ["mkdir \(item)", "mkfifo \(item)", "ln -s target \(item)"] {
                let result = try mount.shell(script)
                #expect(!result.succeeded && result.stderr.contains("File exists"), "\(script): \(result)")
            }
            let folder = try mount.shell("mkdir Notes/folder.md")
            #expect(!folder.succeeded && folder.stderr.contains("Operation not permitted"), "\(folder)")

            try mount.sh("TZ=UTC touch -a -d '2001-01-01 00:00:01' \(item) && TZ=UTC touch -m -d '2002-02-02 00:00:02' \(item)")
            #expect(try mount.sh("stat -c '%X %Y' \(item)") == "978307201 1012608002\n", "access and modification times apart")
            try mount.sh("ls -l Notes >/dev/null")
            #expect(try mount.sh("stat -c '%X %Y' \(item)") == "978307201 1012608002\n", "a listing shows them apart too")

            try mount.sh("mknod device c 1 7 && mknod block b 7 200")
            #expect(try mount.sh("stat -c '%F %t %T' device block") == "character special file 1 7\nblock special file 7 c8\n")
        }
    }
}
