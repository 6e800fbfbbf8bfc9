import ShelfModel

/// A book ⇄ its Markdown file: frontmatter keys `id, title, author, isbn, status, current_page,
/// total_pages, rating, date_added, date_finished, tags, source_id`, then the unknown keys in
/// their order; then the body (`BookBody`).
enum BookMarkdown {
    static func render(_ book: Book) -> String {
        var frontmatter = FrontmatterWriter()
        frontmatter.string("id", book.id.rawValue)
        frontmatter.string("title", book.title)
        frontmatter.string("author", book.author)
        frontmatter.quotedString("isbn", book.isbn)
        frontmatter.literal("status", book.status?.rawValue)
        frontmatter.literal("current_page", book.currentPage.map(String.init))
        frontmatter.literal("total_pages", book.totalPages.map(String.init))
        frontmatter.literal("rating", book.rating.map(ratingText))
        frontmatter.literal("date_added", book.dateAdded.map(Timestamp.day))
        frontmatter.literal("date_finished", book.dateFinished.map(Timestamp.day))
        frontmatter.strings("tags", book.tags)
        frontmatter.string("source_id", book.sourceID)
        book.extraProperties.forEach { frontmatter.property($0) }
        var text = TextBuffer(capacity: 1024 + 256 * book.passages.count)
        text.append(frontmatter.finished())
        BookBody.render(book, into: &text)
        return text.string
    }

    static func parse(_ document: SplitDocument, fileTitle: String?) -> Result<ParsedItem, ParseFailure> {
        var fields = FrontmatterReader(document)
        let id = fields.identity()
        let title = fields.text("title")
        let author = fields.text("author")
        let isbn = fields.text("isbn")
        // Synonyms (`currently-reading`, `finished`) are read as the status they name; the file
        // keeps the word written until the book is rendered again.
        let status = fields.typed("status", expecting: "one of " + ReadingStatus.allCases.map(\.rawValue).joined(separator: ", ")
                                    + " (or currently-reading, finished, want-to-read, dnf)",
                                  ReadingStatus.init(naming:))
        let currentPage = fields.count("current_page")
        let totalPages = fields.count("total_pages")
        let rating = fields.typed("rating", expecting: "a number from 0.5 to 5 (leave it out for unrated)") { text in
            Double(text).flatMap { (0.5...5).contains($0) ? $0 : nil }
        }
        let dateAdded = fields.calendarDate("date_added")
        let dateFinished = fields.calendarDate("date_finished")
        let tags = fields.texts("tags")
        let sourceID = fields.text("source_id")
        let extras = fields.extraProperties()
        let body = BookBody.parse(document)

        var diagnostics = fields.diagnostics
        if case .failure(let failure) = body { diagnostics += failure.diagnostics }
        guard diagnostics.isEmpty, case .success(let content) = body else {
            return .failure(ParseFailure(inFileOrder: diagnostics))
        }
        guard let bookTitle = title ?? content.headingTitle ?? fileTitle else {
            return .failure(ParseFailure(diagnostics: [Diagnostic(
                line: 1, message: "the book has no title; add `title: …` to the frontmatter or a `# Title` heading")]))
        }
        let book = Book(id: id.value, title: bookTitle, author: author, isbn: isbn, status: status,
                        currentPage: currentPage, totalPages: totalPages, rating: rating,
                        dateAdded: dateAdded, dateFinished: dateFinished, tags: tags, sourceID: sourceID,
                        passages: content.passages, extraProperties: extras,
                        introduction: content.introduction, appendix: content.appendix)
        return .success(ParsedItem(item: .book(book), declaredID: id.declared))
    }

    /// `4` for a whole rating, `4.5` otherwise.
    static func ratingText(_ rating: Double) -> String {
        rating == rating.rounded() && abs(rating) < 1e15 ? String(Int(rating)) : rating.description
    }
}

extension FrontmatterReader {
    /// The `id:` of the file, or a fresh one when it has none.
    mutating func identity() -> (value: ItemID, declared: Bool) {
        guard let text = typed("id", expecting: "a non-empty text", { $0.isEmpty ? nil : $0 }) else {
            return (.generate(), false)
        }
        return (ItemID(text), true)
    }
}
