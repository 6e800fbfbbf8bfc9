import Foundation
import ArgumentParser
import ShelfStore

struct SearchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Full-text search over titles, authors, passages and notes.")

    @OptionGroup var library: LibraryOptions

    @Argument(help: "Words to find; every word must match.")
    var query: [String]

    @Option(help: "At most this many results.")
    var limit = 50

    @Flag(help: "Print a JSON array of {id, kind, title, path, snippet}.")
    var json = false

    struct HitJSON: Encodable {
        var id, kind, title, path, snippet: String
    }

    func run() throws {
        let text = query.joined(separator: " ")
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw CLIError("nothing to search for: give one or more words, e.g. `shelf search dune spice`.")
        }
        let hits = try library.open().search(text, limit: limit)
        if json {
            try printJSON(hits.map { HitJSON(id: $0.id.rawValue, kind: $0.kind.rawValue, title: $0.title, path: $0.path, snippet: $0.snippet) })
        } else {
            for hit in hits {
                print("\(hit.path)\n    \(hit.snippet.replacingOccurrences(of: "\n", with: " "))")
            }
            if hits.isEmpty { print("No matches for \"\(text)\".") }
        }
    }
}
