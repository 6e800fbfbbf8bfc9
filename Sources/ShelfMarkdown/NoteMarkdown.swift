import ShelfModel

/// A note ⇄ its Markdown file: frontmatter keys `id, title, favorite, created, modified, tags`,
/// then the unknown keys in their order; everything after the closing `---` line is the
/// content, verbatim. `favorite` is always written; `created`/`modified` as
/// `2025-12-29T10:15:00Z`.
enum NoteMarkdown {
    static func render(_ note: Note) -> String {
        var frontmatter = FrontmatterWriter()
        frontmatter.string("id", note.id.rawValue)
        frontmatter.string("title", note.title)
        frontmatter.literal("favorite", note.favorite ? "true" : "false")
        frontmatter.literal("created", note.created.map(Timestamp.format))
        frontmatter.literal("modified", note.modified.map(Timestamp.format))
        frontmatter.strings("tags", note.tags)
        note.extraProperties.forEach { frontmatter.property($0) }
        return frontmatter.finished() + note.content
    }

    static func parse(_ document: SplitDocument, fileTitle: String?) -> Result<ParsedItem, ParseFailure> {
        var fields = FrontmatterReader(document)
        let id = fields.identity()
        let title = fields.text("title")
        let favorite = fields.bool("favorite")
        let created = fields.timestamp("created")
        let modified = fields.timestamp("modified")
        let tags = fields.texts("tags")
        let extras = fields.extraProperties()
        guard fields.diagnostics.isEmpty else {
            return .failure(ParseFailure(inFileOrder: fields.diagnostics))
        }
        guard let noteTitle = title ?? fileTitle else {
            return .failure(ParseFailure(diagnostics: [Diagnostic(
                line: 1, message: "the note has no title; add `title: …` to the frontmatter")]))
        }
        let note = Note(id: id.value, title: noteTitle,
                        content: document.source.slice(lines: document.bodyStart..<document.source.lines.count),
                        favorite: favorite ?? false, created: created, modified: modified, tags: tags,
                        extraProperties: extras)
        return .success(ParsedItem(item: .note(note), declaredID: id.declared))
    }
}
