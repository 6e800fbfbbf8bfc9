import Foundation
import Testing
import TestSupport
import TestTraits

/// The rule every suite's `.scratchFolders` applies, run on scopes of its own: a test's scratch
/// folders go when it passes and stay when it fails.
@Suite(.scratchFolders) struct ScratchFoldersTests {
    @Test(arguments: [false, true]) func aTemporaryFolderStaysOnlyWhenItsTestFails(failing: Bool) throws {
        let scope = ScratchScope()
        let url = try ScratchScope.$current.withValue(scope) { try TemporaryFolder().url }
        #expect(FileManager.default.fileExists(atPath: url.path), "released inside the scope, the folder waits for the test's end")
        if failing { scope.markFailed() }
        let (kept, becauseFailed) = scope.finish()
        defer { try? FileManager.default.removeItem(at: url) }
        if failing || ScratchScope.keepsEverything {
            #expect(kept == [url] && becauseFailed == failing)
            #expect(FileManager.default.fileExists(atPath: url.path))
        } else {
            #expect(kept.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: url.path), "a passing test's folder is removed")
        }
    }

    /// A program still working in the folder (a mount daemon pushing after its unmount) is
    /// waited for, so the folder is not made again after its removal; a tree deeper than
    /// `PATH_MAX` (the long-path tests make one) goes too.
    @Test func aPassingTestsFolderGoesAfterItsProgramsAndWhateverItsDepth() throws {
        let scope = ScratchScope()
        let url = try ScratchScope.$current.withValue(scope) { try TemporaryFolder().url }
        let deepTree = """
            import os
            fd = os.open(".", os.O_RDONLY)
            for _ in range(20):
                os.mkdir("d" * 250, dir_fd=fd)
                fd = os.open("d" * 250, os.O_RDONLY, dir_fd=fd)
            """
        let made = try CommandRunner.run("/usr/bin/python3", ["-c", deepTree], in: url.path, timeout: .seconds(10))
        try #require(made.succeeded, "\(made)")
        // A program that writes into the folder a moment after the test is done with it.
        let lateWriterEnded = DispatchSemaphore(value: 0)
        Thread {
            _ = try? CommandRunner.run("/bin/sh", ["-c", "sleep 1; mkdir -p \(url.path)/written-late"], in: "/",
                                       timeout: .seconds(30))
            lateWriterEnded.signal()
        }.start()
        try #require(eventually(within: .seconds(10)) { !ProcessProbe.processes(namingInCommandLine: url.path).isEmpty },
                     "the late writer runs")
        _ = scope.finish()
        #expect(lateWriterEnded.wait(timeout: .now() + 30) == .success)
        #expect(!FileManager.default.fileExists(atPath: url.path) || ScratchScope.keepsEverything,
                "removed after the program that wrote into it ended")
        if ScratchScope.keepsEverything { _ = try? CommandRunner.run("/bin/rm", ["-rf", url.path], in: "/", timeout: .seconds(60)) }
    }

    @Test func aTemporaryFolderOutsideAScopeGoesWithItsOwner() throws {
        let url = try ScratchScope.$current.withValue(nil) { try TemporaryFolder().url }
        #expect(FileManager.default.fileExists(atPath: url.path) == ScratchScope.keepsEverything)
        try? FileManager.default.removeItem(at: url)
    }
}
