import Foundation
import TestSupport
import ShelfModel
import ShelfStore
@testable import ShelfImport

/// The URL of a file in `Fixtures/`.
func fixture(_ name: String) -> URL {
    Bundle.module.resourceURL!.appendingPathComponent("Fixtures").appendingPathComponent(name)
}

extension LibraryStore {
    /// Every live book, by title.
    func booksByTitle() throws -> [String: Book] {
        var books: [String: Book] = [:]
        for summary in try summaries(kind: .book) {
            if case .book(let book)? = try record(id: summary.id)?.item { books[book.title] = book }
        }
        return books
    }
}
