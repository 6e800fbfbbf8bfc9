import PropertyBased
import ShelfMarkdown
import ShelfModel
import Testing
import TestTraits

/// Law 5: invalid files give a failure naming the right lines (1-based, in the whole file), never
/// a crash or a partial record.
@Suite(.scratchFolders) struct DiagnosticTests {
    private func failureLines(_ text: String, kind: ItemKind = .book) -> [Int] {
        switch MarkdownCodec.parse(text, kind: kind, fileTitle: "File") {
        case .success(let parsed):
            Issue.record("expected a failure, parsed \(parsed.item)")
            return []
        case .failure(let failure):
            #expect(failure.diagnostics.allSatisfy { !$0.message.isEmpty })
            return failure.diagnostics.map(\.line)
        }
    }

    @Test func brokenYAML() {
        #expect(failureLines("---\ntitle: Dune\nauthor: a: b\n---\n") == [3])
        #expect(failureLines("---\ntitle: Dune\ntags:\n  - a\n\t- b\n---\n") == [5])
        #expect(failureLines("\u{FEFF}---\r\ntitle: [Dune\r\n---\r\n").allSatisfy { (2...3).contains($0) })
    }

    @Test func badValuesOfShelfKeys() {
        #expect(failureLines("---\ntitle: Dune\ncurrent_page: many\n---\n") == [3])
        #expect(failureLines("---\nstatus: unknown-status\ntitle: Dune\n---\n") == [2])
        #expect(failureLines("---\ntitle: Dune\nrating: 7\ndate_added: 2025-02-30\n---\n") == [3, 4])
        #expect(failureLines("---\ntitle: [a, b]\n---\n") == [2])
        #expect(failureLines("---\nid: n\nfavorite: maybe\ncreated: yesterday\n---\n", kind: .note) == [3, 4])
    }

    @Test func missingClosingFence() {
        #expect(failureLines("---\ntitle: Dune\n\n# Dune\n") == [1])
        #expect(failureLines("---", kind: .note) == [1])
    }

    @Test func duplicateKeysNameTheRepeat() {
        #expect(failureLines("---\nid: a\ntitle: Dune\nid: b\n---\n") == [4])
        #expect(failureLines("---\ntitle: Dune\nextra:\n  k: 1\n  k: 2\n---\n") == [5])
    }

    @Test func passageProblems() {
        let head = "---\ntitle: Dune\n---\n# Dune\n\n## Passages\n"   // what follows starts on line 7
        #expect(failureLines(head + "### Chapter 1\n> text\n") == [7])
        #expect(failureLines(head + "### Page 4\n\n**Note**: no quote\n") == [9])
        #expect(failureLines(head + "### Page 4\n**Added**: 2025-12-29\n") == [8])
        #expect(failureLines(head + "### Page 4\n\n### Page 5\n> ok\n") == [7])
        #expect(failureLines(head + "Loose text\n### Page 4\n> q\n") == [7])
        #expect(failureLines(head + "### Page 4\n> q\n\n> second quote\n") == [10])
        #expect(failureLines(head + "### Page 4\n> q\n**Mood**: fine\n") == [9])
        #expect(failureLines(head + "### Page 4\n> q\n**Note**: a\n**Note**: b\n") == [10])
        #expect(failureLines(head + "### Page 4\n> q\n**Added**: soon\n") == [9])
        #expect(failureLines(head + "### Page 4\n> a ^p-1\n### Page 5\n> b ^p-1\n") == [10])
    }

    @Test func aStrayLineInAPassageIsToldTheAcceptedForm() throws {
        let text = "---\ntitle: Dune\n---\n## Passages\n### Page 1\n> a\n\n**Added**: 2025-12-29\nstray line\n"
        guard case .failure(let failure) = MarkdownCodec.parse(text, kind: .book, fileTitle: nil) else {
            Issue.record("expected a failure")
            return
        }
        let diagnostic = try #require(failure.diagnostics.first)
        #expect(diagnostic.line == 9)
        #expect(diagnostic.message.contains("`### Page 42`, its `> ` quote, a blank line, then"))
        #expect(diagnostic.message.contains("`**Note**: first line`, then more lines"))
    }

    @Test func everyRepeatOfABlockIDNamesItsFirstUse() {
        let text = "---\ntitle: Dune\n---\n## Passages\n### Page 1\n> a ^p-1\n### Page 2\n> b ^p-1\n### Page 3\n> c ^p-1\n"
        guard case .failure(let failure) = MarkdownCodec.parse(text, kind: .book, fileTitle: nil) else {
            Issue.record("a repeated block id must be refused")
            return
        }
        #expect(failure.diagnostics.map(\.line) == [8, 10])
        #expect(failure.diagnostics.allSatisfy { $0.message.contains("on line 6") })
    }

    @Test func problemsInFrontmatterAndBodyAreReportedTogether() {
        let text = "---\ntitle: Dune\ncurrent_page: many\n---\n# Dune\n\n## Passages\n\n### Chapter 1\n> q\n"
        #expect(failureLines(text) == [3, 9])
    }

    /// A bad value inserted between any two frontmatter entries is reported on its own line.
    @Test func badFrontmatterLineIsFoundWhereverItIs() async {
        let cases = Generator<(String, Int), Shrink.None<(String, Int)>>(run: { rng in
            var book = RecordGen.makeBook(&rng)
            book.rating = nil
            var lines = MarkdownCodec.render(.book(book)).components(separatedBy: "\n")
            let closing = lines.dropFirst().firstIndex(of: "---")!
            let entryStarts = (1...closing).filter { !lines[$0].hasPrefix(" ") }
            let index = RecordGen.pick(entryStarts, &rng)
            lines.insert("rating: lots", at: index)
            return (lines.joined(separator: "\n"), index + 1)
        })
        await propertyCheck(count: 200, input: cases) { text, line in
            #expect(failureLines(text) == [line], "\(text)")
        }
    }

    /// An unknown heading inserted before any passage, or after the last, is reported on its line.
    @Test func badPassageHeadingIsFoundWhereverItIs() async {
        let cases = Generator<(String, Int), Shrink.None<(String, Int)>>(run: { rng in
            var book = RecordGen.makeBook(&rng)
            book.appendix = ""
            var lines = MarkdownCodec.render(.book(book)).components(separatedBy: "\n")
            let passagesLine = lines.firstIndex(of: "## Passages")!
            let headings = lines.indices.filter { $0 > passagesLine && lines[$0].hasPrefix("### ") } + [lines.count - 1]
            let index = RecordGen.pick(headings, &rng)
            lines.insert(contentsOf: ["### Chapter 2", "> quote", ""], at: index)
            return (lines.joined(separator: "\n"), index + 1)
        })
        await propertyCheck(count: 200, input: cases) { text, line in
            #expect(failureLines(text) == [line], "\(text)")
        }
    }
}
