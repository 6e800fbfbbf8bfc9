import Foundation
import Glibc
import Testing
import TestSupport
import TestTraits
import ShelfSystem

/// How the mount learns which files programs hold locked, and that it fails closed.
@Suite(.scratchFolders) struct KernelFileLocksTests {
    /// Both kinds of lock a program takes, `flock` and an `fcntl` record lock, show by inode.
    @Test(arguments: ["flock", "fcntl"])
    func aLockedFileIsFoundByItsInode(kind: String) throws {
        let folder = try TemporaryFolder()
        let file = try folder.file("locked", "bytes\n")
        var info = stat()
        try #require(stat(file.path, &info) == 0)
        let fd = open(file.path, O_RDWR)
        try #require(fd >= 0)
        defer { close(fd) }
        #expect(!KernelFileLocks.isLocked(file.path))
        if kind == "flock" {
            try #require(flock(fd, LOCK_EX) == 0)
        } else {
            var lock = Glibc.flock()
            lock.l_type = Int16(F_WRLCK)
            lock.l_whence = Int16(SEEK_SET)
            try #require(fcntl(fd, F_SETLK, &lock) == 0)
        }
        #expect(try KernelFileLocks.lockedInodes(onDevice: info.st_dev).contains(UInt64(info.st_ino)))
        #expect(KernelFileLocks.isLocked(file.path))
    }

    /// A lock table that cannot be read is no answer: the caller is told why (the mount then
    /// holds back every change from the cloud; SyncEngineTests shows the engine's side).
    @Test func anUnreadableLockTableFailsClosed() throws {
        let folder = try TemporaryFolder()
        let missing = folder.child("locks").path
        #expect {
            _ = try KernelFileLocks.lockedInodes(onDevice: 0, table: missing)
        } throws: { error in
            "\(error)".contains(missing) && "\(error)".contains("any file may be locked")
        }
    }
}
