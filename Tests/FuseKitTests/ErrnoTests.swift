import Glibc
import ShelfSystem
import Testing
@testable import FuseKit
import TestTraits

/// The one place a thrown error becomes the number the kernel answers with.
@Suite(.scratchFolders) struct ErrnoTests {
    @Test func aFailedSystemCallAnswersWithItsOwnNumber() {
        #expect(open("/proc/no-such-file", O_RDONLY) == -1)
        let failed = SystemCallError("open /proc/no-such-file")
        #expect(Errno(for: failed) == .noEntry)
    }

    @Test func anErrorOfNoKnownNumberAnswersEIO() {
        struct Unexpected: Error {}
        #expect(Errno(for: Unexpected()) == .ioError)
        #expect(Errno(for: Errno.busy) == .busy)
    }
}
