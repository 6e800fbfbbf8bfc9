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

    @Test func aTemporaryFolderOutsideAScopeGoesWithItsOwner() throws {
        let url = try ScratchScope.$current.withValue(nil) { try TemporaryFolder().url }
        #expect(FileManager.default.fileExists(atPath: url.path) == ScratchScope.keepsEverything)
        try? FileManager.default.removeItem(at: url)
    }
}
