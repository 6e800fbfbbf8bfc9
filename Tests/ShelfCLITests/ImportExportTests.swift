import Foundation
import Testing
import TestTraits

/// The issue's end-to-end check: init, import a Goodreads export with every quirk, export, read
/// every exported file with a standard frontmatter parser, and find nothing changes the second time.
@Suite(.scratchFolders) struct ImportExportTests {
    @Test func goodreadsImportThenExportParsesWithPythonFrontmatter() throws {
        let cli = try ShelfCLI()
        try cli.run("init", cli.library.path)
        let csv = cli.scratch.appendingPathComponent("goodreads.csv")
        let generator = ShelfCLI.samples.deletingLastPathComponent().appendingPathComponent("scripts/make-goodreads-csv.py")
        let made = try cli.tool("python3", generator.path, "60", csv.path)
        #expect(made.status == 0, "\(made.stderr)")

        let imported = try cli.run("import", csv.path)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.containsPhrase("60 added"))

        let export = cli.scratch.appendingPathComponent("export")
        #expect(try cli.run("export", export.path).status == 0)
        let check = try cli.tool("python3", "-c", Self.compareWithCSV, export.path, csv.path)
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.containsPhrase("checked 60 books"))

        let modificationTimes = try Self.modificationTimes(under: export)
        let again = try cli.run("import", csv.path)
        #expect(again.stdout.containsPhrase("0 added"))
        #expect(again.stdout.containsPhrase("0 updated"))
        #expect(again.stdout.containsPhrase("60 unchanged"))
        let reexport = try cli.run("export", export.path)
        #expect(reexport.status == 0)
        #expect(try Self.modificationTimes(under: export) == modificationTimes)
    }

    /// Loads every exported file with python-frontmatter and compares title, author and ISBN with the CSV row.
    static let compareWithCSV = #"""
import csv, frontmatter, pathlib, sys
export, source = pathlib.Path(sys.argv[1]), sys.argv[2]
rows = {}
with open(source, encoding="utf-8-sig", newline="") as handle:
    for row in csv.DictReader(handle):
        isbn = row["ISBN"].strip('="') or row["ISBN13"].strip('="') or None
        rows[row["Title"]] = (row["Author"], isbn)
seen = 0
for path in sorted((export / "Books").rglob("*.md")):
    post = frontmatter.load(path)
    title = post["title"]
    assert title in rows, "unexpected title %r in %s" % (title, path)
    author, isbn = rows.pop(title)
    assert post["author"] == author, (path, post["author"], author)
    assert post.get("isbn") == isbn, (path, post.get("isbn"), isbn)
    assert isinstance(post.get("isbn", ""), str), "ISBN must load as a string"
    seen += 1
assert not rows, "books missing from the export: %r" % list(rows)[:5]
print("checked %d books" % seen)
"""#

    static func modificationTimes(under folder: URL) throws -> [String: Date] {
        var times: [String: Date] = [:]
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.contentModificationDateKey])
        while let url = enumerator?.nextObject() as? URL {
            times[url.path] = try url.resourceValues(forKeys: [.contentModificationDateKey]).contentModificationDate
        }
        return times
    }

    @Test func highlightsFromReadwiseAndKOReaderShowInTheMountOnceAndReimportChangesNothing() throws {
        let cli = try ShelfCLI()
        try cli.run("init", cli.library.path)
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("ShelfImportTests/Fixtures")
        let sources = [fixtures.appendingPathComponent("readwise_export.csv").path, fixtures.appendingPathComponent("koreader").path]
        for source in sources {
            let imported = try cli.run("import", source)
            #expect(imported.status == 0, "\(imported)")
        }
        try cli.withMount { mountpoint in
            let books = try FileManager.default.contentsOfDirectory(atPath: mountpoint + "/Books")
            let name = try #require(books.first { $0.hasPrefix("Dune") }, "\(books)")
            let path = mountpoint + "/Books/" + name
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(text.components(separatedBy: "I must not fear.").count == 2, "the litany once, from both apps:\n\(text)")
            #expect(text.contains("## Passages") && text.contains("### Page 42") && text.contains("**Chapter**: Book One: Dune"), "\(text)")
            let parsed = try cli.tool("python3", "-c", "import frontmatter, sys; print(frontmatter.load(sys.argv[1])['title'])", path)
            #expect(parsed.succeeded && parsed.stdout.hasPrefix("Dune"), "\(parsed)")

            // Importing the same sources again, while mounted, changes nothing, not a byte of the file.
            for source in sources {
                let again = try cli.run("import", source)
                #expect(again.status == 0 && again.stdout.containsPhrase("0 added") && again.stdout.containsPhrase("0 updated"), "\(again)")
            }
            #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
        }
    }

    @Test func badImportInputGetsOneClearLineAndNoChange() throws {
        let cli = try ShelfCLI()
        try cli.run("init", cli.library.path)
        let binary = cli.scratch.appendingPathComponent("cover.png")
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52]).write(to: binary)
        let csv = ShelfCLI.samples.appendingPathComponent("goodreads_library_export.csv").path

        let cases: [([String], String)] = [
            (["import", binary.path], "not"),
            (["import", csv, "--format", "librarything"], "librarything"),
            (["import", csv, "--format", "csv", "--map", "Title"], "Title"),
            (["import", csv, "--format", "csv", "--map", "No Such Column=title"], "No Such Column"),
            (["import", cli.scratch.appendingPathComponent("missing.csv").path], "missing.csv"),
        ]
        for (arguments, mention) in cases {
            let result = try cli.run(arguments)
            #expect(result.status != 0, "\(arguments) should fail")
            let lines = result.stderr.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n")
            #expect(lines.count == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(mention), "\(arguments): \(result.stderr)")
        }
        #expect(try cli.run("list", "--json").stdout.contains("\"id\"") == false)
    }
}
