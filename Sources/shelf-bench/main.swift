// Times the codec on a book with 500 passages: render (target < 1 ms) and parse (target < 2 ms).
// Prints one JSON line per measurement; scripts/bench-core turns them into the table in docs/.
import Foundation
import ShelfMarkdown
import ShelfModel
import ShelfSystem

/// A book shaped like a heavily highlighted real one: multi-line passages, notes, summaries.
func sampleBook(passages count: Int) -> Book {
    let passages = (0..<count).map { index in
        Passage(id: PassageID("p-\(String(index, radix: 16))"), page: index / 2 + 1,
                location: "\(index * 15)-\(index * 15 + 4)",
                text: "Passage \(index): the spice must flow, and the sleeper must awaken;\nfear is the mind-killer — \"quoted\" #\(index).",
                note: index % 3 == 0 ? "My note on \(index): compare with chapter \(index % 17)." : nil,
                aiSummary: index % 2 == 0 ? "A summary of passage \(index) in one sentence." : nil,
                dateAdded: CalendarDate(year: 2025, month: 1 + index % 12, day: 1 + index % 28))
    }
    return Book(title: "Dune", author: "Frank Herbert", isbn: "0441013597", status: .reading,
                currentPage: 120, totalPages: 412, rating: 4.5, dateAdded: CalendarDate(year: 2025, month: 12, day: 29),
                tags: ["scifi", "classics"], passages: passages,
                extraProperties: [Property(key: "publisher", value: .string("Ace"))],
                introduction: "Notes before the passages.\n\n", appendix: "## Afterthoughts\n\nStill thinking.\n")
}

/// Median wall time of `body` over `runs` runs, after a warm-up.
func median(runs: Int, _ body: () -> Void) -> Duration {
    for _ in 0..<10 { body() }
    let clock = ContinuousClock()
    let times = (0..<runs).map { _ in clock.measure(body) }.sorted()
    return times[runs / 2]
}

func microseconds(_ duration: Duration) -> Double {
    duration.timeInterval * 1e6
}

let item = Item.book(sampleBook(passages: 500))
let text = MarkdownCodec.render(item)
guard case .success(let parsed) = MarkdownCodec.parse(text, kind: .book, fileTitle: nil), parsed.item == item else {
    fatalError("the benchmark book does not round-trip; fix the codec before timing it")
}
let renderTime = median(runs: 200) { _ = MarkdownCodec.render(item) }
let parseTime = median(runs: 200) { _ = MarkdownCodec.parse(text, kind: .book, fileTitle: nil) }
print(#"{"benchmark":"render book, 500 passages","bytes":\#(text.utf8.count),"median_us":\#(microseconds(renderTime)),"target_us":1000}"#)
print(#"{"benchmark":"parse book, 500 passages","bytes":\#(text.utf8.count),"median_us":\#(microseconds(parseTime)),"target_us":2000}"#)
