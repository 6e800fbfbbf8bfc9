import Foundation
import Testing
import TestSupport
import TestTraits

/// README's benchmark figures are the ones the benchmark pages hold: no number in that list is
/// typed, and a page whose shape changed is caught here rather than left behind in the README.
@Suite(.scratchFolders) struct ReadmeFiguresTests {
    static let repository = ShelfCLI.samples.deletingLastPathComponent()

    @Test func theReadmesBenchmarkFiguresAreThoseOfTheirPages() throws {
        let check = try CommandRunner.run("/usr/bin/python3", ["scripts/readme-benchmarks", "--check"], in: Self.repository.path,
                                          timeout: .seconds(30))
        #expect(check.succeeded, "\(check)")
    }

    /// The check can fail: a figure typed over a generated one is found.
    @Test func aFigureTypedIntoTheListIsCaught() throws {
        let copy = try TemporaryFolder()
        for path in ["README.md", "docs", "scripts"] {
            try FileManager.default.copyItem(at: Self.repository.appendingPathComponent(path), to: copy.child(path))
        }
        let readme = copy.child("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let start = try #require(text.range(of: "<!-- benchmarks: written by scripts/readme-benchmarks -->"))
        let typed = text.replacingCharacters(in: start.upperBound..<start.upperBound, with: "\n- Mount: 0.01x of everything.")
        try typed.write(to: readme, atomically: true, encoding: .utf8)
        let check = try CommandRunner.run("/usr/bin/python3", ["scripts/readme-benchmarks", "--check"], in: copy.url.path,
                                          timeout: .seconds(30))
        #expect(!check.succeeded && check.stderr.contains("differ from docs/bench-*.md"), "\(check)")
    }
}
