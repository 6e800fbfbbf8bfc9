import GRDB
import ShelfModel

/// The `item_search` FTS5 table: what of an item is searchable, and how any user text becomes
/// a query FTS5 accepts.
///
/// It indexes every item row (trashed ones too, so trash and restore need not touch it); the
/// search joins back to `item` and keeps live items only.
enum SearchIndex {
    /// Indexes `item` under the row `serial`, replacing what was indexed there before. A save
    /// that changed no searchable text (a page number, a status) leaves the index alone: the
    /// rewrite of an FTS5 row is most of what a small save writes.
    static func reindex(_ item: Item, serial: Int64, in db: Database) throws {
        let document = Document(item)
        let indexed = try Row.fetchOne(db.cachedStatement(sql: "SELECT title, author, body FROM item_search WHERE rowid = ?"),
                                       arguments: [serial])
        if let indexed, indexed[ItemSearchColumns.title] as String? == document.title,
           indexed[ItemSearchColumns.author] as String? == document.author, indexed[ItemSearchColumns.body] as String? == document.body {
            return
        }
        try remove(serial: serial, in: db)
        try add(item, serial: serial, in: db)
    }

    /// Indexes a new row `serial`.
    static func add(_ item: Item, serial: Int64, in db: Database) throws {
        let document = Document(item)
        try db.cachedStatement(sql: "INSERT INTO item_search (rowid, title, author, body) VALUES (?, ?, ?, ?)")
            .execute(arguments: [serial, document.title, document.author, document.body])
    }

    static func remove(serial: Int64, in db: Database) throws {
        try db.cachedStatement(sql: "DELETE FROM item_search WHERE rowid = ?").execute(arguments: [serial])
    }

    /// Drops the index rows of every trashed item (before they are deleted for good).
    static func removeTrashed(in db: Database) throws {
        try db.execute(sql: """
            DELETE FROM item_search WHERE rowid IN (SELECT serial FROM item WHERE trashed_at IS NOT NULL)
            """)
    }

    /// Live items matching every word of `query`, best first, with a `[`…`]`-marked excerpt.
    static func search(_ query: SearchQuery, limit: Int, in db: Database) throws -> [SearchHit] {
        return try Row.fetchAll(db, sql: """
            SELECT item.id, item.kind, item.title, item.path,
                   snippet(item_search, -1, '[', ']', '…', 12) AS snippet
            FROM item_search JOIN item ON item.serial = item_search.rowid
            WHERE item_search MATCH ? AND item.trashed_at IS NULL
            ORDER BY item_search.rank LIMIT ?
            """, arguments: [query.matchExpression, limit]).map { hit in
            let id = ItemID(rawValue: hit[SearchHitColumns.id])
            return SearchHit(id: id, kind: try ItemQueries.kind(hit[SearchHitColumns.kind], of: id), title: hit[SearchHitColumns.title],
                             path: hit[SearchHitColumns.path], snippet: hit[SearchHitColumns.snippet])
        }
    }

    /// The indexed text of one item.
    private struct Document {
        var title: String
        var author: String
        var body: String

        init(_ item: Item) {
            title = item.title
            switch item {
            case .book(let book):
                author = book.author ?? ""
                let passageTexts = book.passages.flatMap { [$0.text, $0.note, $0.aiSummary].compactMap { $0 } }
                body = ([book.introduction] + passageTexts + [book.appendix])
                    .filter { !$0.isEmpty }.joined(separator: "\n\n")
            case .note(let note):
                author = ""
                body = note.content
            }
        }
    }
}
