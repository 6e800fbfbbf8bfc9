import Foundation
import ShelfModel
import ShelfStore
@testable import ShelfImport

/// The URL of a file in `Fixtures/`.
func fixture(_ name: String) -> URL {
    Bundle.module.resourceURL!.appendingPathComponent("Fixtures").appendingPathComponent(name)
}

/// A fresh folder under the system's temporary folder, removed by `cleanUp`.
struct TemporaryFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("shelf-import-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func cleanUp() { try? FileManager.default.removeItem(at: url) }

    /// Writes `text` to `name` in the folder and returns its URL.
    func file(_ name: String, _ text: String) throws -> URL {
        let file = url.appendingPathComponent(name)
        try Data(text.utf8).write(to: file)
        return file
    }
}

/// A new, empty library in a temporary folder.
func makeLibrary(_ folder: TemporaryFolder) throws -> LibraryStore {
    try LibraryStore.create(at: folder.url.appendingPathComponent("library", isDirectory: true))
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
