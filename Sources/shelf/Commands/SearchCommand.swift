import Foundation
import ArgumentParser
import ShelfModel
import ShelfStore

struct SearchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Full-text search over titles, authors, passages and notes.",
        discussion: """
            Every word must match; a word ending in * matches every word starting so (desperat*). \
            Exits 1 when nothing matches, as grep does.
            """)

    @OptionGroup var library: LibraryOptions

    @Argument(help: "Words to find; every word must match; `word*` matches a prefix.")
    var query: [String]

    @Option(help: "At most this many results (the output says when more matched).")
    var limit = 50

    @Flag(help: "Print a JSON array of {id, kind, title, path, snippet, passages: [{id, page, location}]}.")
    var json = false

    struct HitJSON: Encodable {
        var id, kind, title, path, snippet: String
        /// The book's passages holding a word of the query (empty for notes, and for books
        /// found by title, author or free text).
        var passages: [PassageJSON]
    }

    struct PassageJSON: Encodable {
        var id: String
        var page: Int?
        var location: String?
    }

    func validate() throws {
        guard limit > 0 else { throw ValidationError("--limit must be 1 or more.") }
    }

    func run() throws {
        let text = query.joined(separator: " ")
        guard let parsed = SearchQuery(text) else {
            throw CLIError("nothing to search for: give one or more words, e.g. `shelf search dune spice` or `shelf search desperat*`.")
        }
        let store = try library.open()
        // One more than asked tells whether the limit cut the results.
        var hits = try store.search(parsed, limit: limit + 1)
        let cut = hits.count > limit
        if cut { hits.removeLast() }
        if json {
            try printJSON(try hits.map { hit in
                HitJSON(id: hit.id.rawValue, kind: hit.kind.rawValue, title: hit.title, path: hit.path, snippet: hit.snippet,
                        passages: try matchingPassages(of: hit, in: store, query: parsed))
            })
        } else {
            for hit in hits {
                print("\(hit.path)\n    \(hit.snippet.replacingOccurrences(of: "\n", with: " "))")
            }
        }
        if cut {
            FileHandle.standardError.write(Data("shelf: showing the first \(limit) matches; more match. Pass --limit N to see more.\n".utf8))
        }
        if hits.isEmpty {
            if !json { FileHandle.standardError.write(Data("No matches for \"\(text)\".\n".utf8)) }
            throw ExitCode(1)
        }
    }

    private func matchingPassages(of hit: SearchHit, in store: LibraryStore, query: SearchQuery) throws -> [PassageJSON] {
        guard hit.kind == .book, case .book(let book)? = try store.record(id: hit.id)?.item else { return [] }
        return book.passages.filter { passage in
            [passage.text, passage.note, passage.aiSummary].contains { $0.map(query.matchesAnyTerm) ?? false }
        }.map { PassageJSON(id: $0.id.rawValue, page: $0.page, location: $0.location) }
    }
}
