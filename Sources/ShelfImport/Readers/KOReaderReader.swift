import Foundation
import ShelfStore
import ShelfModel

/// Reads KOReader's data: the `metadata.<ext>.lua` sidecar in each book's `.sdr` folder (a
/// device's whole folder, or one sidecar), or the JSON file of its highlight exporter.
///
/// Sidecars are Lua, and are read by `LuaTableParser`, never run. Both of KOReader's layouts
/// are read: `annotations` (2024 on: text, note, chapter, pageno, datetime, pos0, color) and
/// the older `highlight` (by page) with `bookmarks`, where a note is a bookmark's text that is
/// not KOReader's own `Page 12 … @ date` label. A highlight's key is its position (`pos0`),
/// else its time. The book's `summary` gives its status, star rating and review; `doc_props`
/// its title, authors, ISBN, keywords (as tags), series, language and description.
enum KOReaderReader {
    static func read(_ file: SourceFile) throws -> SourceReading<SourceBook> {
        let url = file.url
        if MarkdownFolderImport.isFolder(url) {
            let files = sidecars(in: url)
            guard !files.isEmpty else {
                throw ImportError.notFormat(path: url.path, format: .koreader, reason: "the folder holds no .sdr folder with a metadata.*.lua file")
            }
            var reading = SourceReading<SourceBook>()
            for file in files {
                let name = String(file.path.dropFirst(url.path.count + 1))
                do {
                    try readSidecar(file, name: name, into: &reading)
                } catch let error as LuaSyntaxError {
                    reading.problems.append(ImportProblem(file: name, line: error.line, message: error.message + "; the book was skipped"))
                }
            }
            return reading
        }
        if url.pathExtension == "lua" {
            var reading = SourceReading<SourceBook>()
            do {
                try readSidecar(url, name: url.lastPathComponent, into: &reading)
            } catch let error as LuaSyntaxError {
                throw ImportError.malformed(path: url.path, line: error.line, reason: error.message)
            }
            return reading
        }
        return try readJSONExport(file)
    }

    /// The sidecars under `folder`, in path order.
    static func sidecars(in folder: URL) -> [URL] {
        guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { return [] }
        var found: [URL] = []
        for case let file as URL in walker where file.deletingLastPathComponent().pathExtension == "sdr" {
            let name = file.lastPathComponent
            if name.hasPrefix("metadata."), name.hasSuffix(".lua") { found.append(file) }
        }
        return found.sorted { $0.path < $1.path }
    }

    static func isJSONExport(_ text: String) -> Bool {
        text.first(where: { !$0.isWhitespace }) == "{" && (text.contains("\"entries\"") || text.contains("\"documents\""))
    }

    // MARK: - Sidecars

    private static func readSidecar(_ file: URL, name: String, into reading: inout SourceReading<SourceBook>) throws {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw ImportError.fileUnreadable(path: file.path, reason: ErrorReason.of(error))
        }
        let table = try LuaTableParser.parse(data)
        let props = table["doc_props"]?.table
        let folderTitle = file.deletingLastPathComponent().deletingPathExtension().lastPathComponent
        let title = nonEmpty(props?["title"]?.string) ?? nonEmpty(table["stats"]?.table?["title"]?.string) ?? folderTitle
        var book = SourceBook(title: title, origin: ImportProblem(file: name, line: 1, message: ""))
        book.authors = (props?["authors"]?.string ?? table["stats"]?.table?["authors"]?.string ?? "")
            .split(whereSeparator: \.isNewline).map { $0.trimmed() }.filter { !$0.isEmpty }
        book.isbn = (props?["identifiers"]?.string ?? "").split(whereSeparator: \.isNewline)
            .lazy.compactMap { CellValues.isbn(String($0.split(separator: ":").last ?? "")) }.first
        book.reading.tags = (props?["keywords"]?.string ?? "").split(whereSeparator: \.isNewline).map { $0.trimmed() }.filter { !$0.isEmpty }
        book.description = nonEmpty(props?["description"]?.string.map(HTMLToMarkdown.convert))
        if let series = nonEmpty(props?["series"]?.string) {
            book.reading.properties.append(Property(key: "series", value: .string(series)))
            if let index = props?["series_index"]?.number {
                book.reading.properties.append(Property(key: "series_index", value: index == index.rounded() ? .int(Int(index)) : .double(index)))
            }
        }
        if let language = nonEmpty(props?["language"]?.string) {
            book.reading.properties.append(Property(key: "languages", value: .list([.string(language)])))
        }
        let summary = table["summary"]?.table
        book.reading.status = summary?["status"]?.string.flatMap(status)
        if let stars = summary?["rating"]?.number, (1...5).contains(stars) { book.reading.rating = stars }
        if let review = nonEmpty(summary?["note"]?.string) { book.reading.properties.append(Property(key: "review", value: .string(review))) }
        if let percent = table["percent_finished"]?.number {
            if let pages = table["doc_pages"]?.int, pages > 0 {
                book.reading.totalPages = pages
                book.reading.currentPage = Int((percent * Double(pages)).rounded())
            } else {
                book.reading.properties.append(Property(key: "progress_percent", value: .int(Int((percent * 100).rounded()))))
            }
        }
        if let annotations = table["annotations"]?.table {
            readAnnotations(annotations, into: &book, bookmarks: &reading.bookmarks)
        } else {
            readHighlights(table["highlight"]?.table ?? LuaTable(), bookmarks: table["bookmarks"]?.table ?? LuaTable(),
                           into: &book, plainBookmarks: &reading.bookmarks)
        }
        reading.books.append(book)
    }

    /// KOReader's summary status: `reading`, `complete`, `abandoned` (and `on-hold` for paused).
    private static func status(_ text: String) -> ReadingStatus? {
        switch text.lowercased() {
        case "complete", "finished": .read
        case "reading", "on-hold", "on hold": .reading
        case "abandoned": .abandoned
        case "new", "tbr": .toRead
        default: nil
        }
    }

    /// The newer layout: one list of highlights and bookmarks; a bookmark has no `pos0`.
    private static func readAnnotations(_ annotations: LuaTable, into book: inout SourceBook, bookmarks: inout Int) {
        for (_, item) in annotations.orderedItems {
            guard let entry = item.table else { continue }
            let isHighlight = entry["pos0"] != nil || entry["drawer"] != nil
            let note = nonEmpty(entry["note"]?.string)
            let text = isHighlight ? entry["text"]?.string?.trimmed() ?? "" : ""
            guard !text.isEmpty || note != nil else {
                bookmarks += 1
                continue
            }
            let datetime = entry["datetime"]?.string
            let position = entry["pos0"]?.string ?? entry["page"]?.string ?? datetime ?? "page \(entry["pageno"]?.int ?? 0)"
            book.passages.append(SourcePassage(
                key: "koreader:" + position, text: text, note: note, page: entry["pageno"]?.int ?? entry["page"]?.int,
                chapter: nonEmpty(entry["chapter"]?.string), color: nonEmpty(entry["color"]?.string),
                dateAdded: datetime.flatMap(CalendarDate.init(parsing:))))
        }
    }

    /// The older layout: highlights listed by page, and bookmarks whose text is KOReader's
    /// label unless the reader wrote a note there.
    private static func readHighlights(_ highlights: LuaTable, bookmarks: LuaTable, into book: inout SourceBook,
                                       plainBookmarks: inout Int) {
        let marks = bookmarks.orderedItems.compactMap { $0.value.table }
        var usedMarks = Set<Int>()
        for (page, list) in highlights.orderedItems {
            for (_, item) in list.table?.orderedItems ?? [] {
                guard let entry = item.table, let text = nonEmpty(entry["text"]?.string) else { continue }
                let datetime = entry["datetime"]?.string
                let mark = marks.indices.first { !usedMarks.contains($0) && marks[$0]["datetime"]?.string == datetime }
                if let mark { usedMarks.insert(mark) }
                let note = mark.flatMap { mark in
                    nonEmpty(marks[mark]["text"]?.string).flatMap { isLabel($0, of: [text, marks[mark]["notes"]?.string ?? ""]) ? nil : $0 }
                }
                book.passages.append(SourcePassage(
                    key: "koreader:" + (entry["pos0"]?.string ?? datetime ?? "page \(page)"), text: text, note: note, page: page,
                    chapter: nonEmpty(entry["chapter"]?.string), dateAdded: datetime.flatMap(CalendarDate.init(parsing:))))
            }
        }
        let highlighted = book.passages.map(\.text)
        for index in marks.indices where !usedMarks.contains(index) {
            // A highlight found only among the bookmarks: its text is the bookmark's `notes`.
            let ownText = marks[index]["highlighted"]?.bool == true ? nonEmpty(marks[index]["notes"]?.string)
                .flatMap { text in highlighted.contains(text) ? nil : text } : nil
            let note = nonEmpty(marks[index]["text"]?.string)
                .flatMap { isLabel($0, of: [marks[index]["notes"]?.string ?? ""] + highlighted) ? nil : $0 }
            guard ownText != nil || note != nil else {
                plainBookmarks += 1
                continue
            }
            let datetime = marks[index]["datetime"]?.string
            book.passages.append(SourcePassage(
                key: "koreader:" + (marks[index]["pos0"]?.string ?? marks[index]["page"]?.string ?? datetime ?? "bookmark \(index)"),
                text: ownText ?? "", note: note,
                page: marks[index]["page"]?.int, chapter: nonEmpty(marks[index]["chapter"]?.string),
                dateAdded: datetime.flatMap(CalendarDate.init(parsing:))))
        }
    }

    /// Whether a bookmark's `text` is KOReader's own label rather than the reader's note:
    /// `Page 12 "quoted text" @ 2020-01-02 10:11:12`, or — without the date, as other versions
    /// write it — `Page 57 ` followed by the highlighted text (`highlighted`: the highlight's
    /// text and the bookmark's `notes`), or the highlighted text alone.
    static func isLabel(_ text: String, of highlighted: [String]) -> Bool {
        if text.wholeMatch(of: /Page \S+( .*)? @ \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}/.dotMatchesNewlines()) != nil { return true }
        let quoted = highlighted.map(comparable).filter { !$0.isEmpty }
        guard !quoted.isEmpty else { return false }
        var body = Substring(text)
        if let match = body.prefixMatch(of: #/Page \S+ /#) { body = body[match.range.upperBound...] }
        if let match = body.firstMatch(of: #/ @ \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/#) { body = body[..<match.range.lowerBound] }
        return quoted.contains(comparable(String(body)))
    }

    /// Text with runs of whitespace as one space and the quotes a label may add removed.
    private static func comparable(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            .trimmingCharacters(in: CharacterSet(charactersIn: "\"“”«»"))
    }

    // MARK: - JSON export

    /// `{title, author, entries: [{text, note, page, chapter, time, color}]}`, or several of
    /// those under `documents`.
    private static func readJSONExport(_ file: SourceFile) throws -> SourceReading<SourceBook> {
        let url = file.url
        let data = try file.textData()
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw ImportError.notFormat(path: url.path, format: .koreader, reason: "it is not a JSON object")
        }
        let documents = root["documents"] as? [[String: Any]] ?? [root]
        var reading = SourceReading<SourceBook>()
        for (number, document) in documents.enumerated() {
            guard let title = nonEmpty(document["title"] as? String), let entries = document["entries"] as? [[String: Any]] else {
                reading.problems.append(ImportProblem(line: 0, message: "document \(number + 1) has no title or no entries and was skipped"))
                continue
            }
            var book = SourceBook(title: title, origin: ImportProblem(line: 0, message: ""))
            book.authors = ((document["author"] as? String) ?? "").split(whereSeparator: \.isNewline)
                .map { $0.trimmed() }.filter { !$0.isEmpty }
            for entry in entries {
                let text = (entry["text"] as? String)?.trimmed() ?? ""
                let note = nonEmpty(entry["note"] as? String)
                guard !text.isEmpty || note != nil else {
                    reading.bookmarks += 1
                    continue
                }
                let page = entry["page"] as? Int
                let time = entry["time"] as? Int
                book.passages.append(SourcePassage(
                    key: "koreader:\(time ?? 0)-\(page ?? 0)", text: text, note: note, page: page,
                    chapter: nonEmpty(entry["chapter"] as? String), color: nonEmpty(entry["color"] as? String),
                    dateAdded: time.map { CalendarDate(Date(timeIntervalSince1970: TimeInterval($0))) }))
            }
            reading.books.append(book)
        }
        return reading
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let trimmed = text?.trimmed(), !trimmed.isEmpty else { return nil }
        return trimmed
    }
}
