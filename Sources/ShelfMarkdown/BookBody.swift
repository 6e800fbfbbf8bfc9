import ShelfModel

/// The body of a book file, below the frontmatter:
///
/// ```
/// # <title>                ← line breaks in the title become spaces (`title:` is the truth)
///                          ← one blank line
/// <introduction>           ← verbatim, possibly empty
/// ## Passages
///                          ← one blank line before each passage block
/// <passage block>          ← see `PassageMarkdown`
///
/// <passage block>
///
/// <appendix>               ← verbatim, from its `## ` heading to the end of the file
/// ```
///
/// The heading is generated from `title:`; its text is read only when the frontmatter has no
/// title (an edit to the heading alone does not rename the book).
///
/// Parsing is a single pass over the lines. It accepts more than it writes: blank lines before
/// the title, a body without a title heading (all of it is then the introduction), any number of
/// blank lines between passage blocks and between a quote and its fields, fields in any order,
/// `>text` without a space. It refuses, with the line, what it could only guess at: an unknown
/// `### ` heading, a passage without a quote, any other line between passages.
enum BookBody {
    static let passagesHeading: StaticString = "## Passages"

    /// What the body holds besides the frontmatter's fields.
    struct Content {
        var headingTitle: String?
        var introduction = ""
        var passages: [Passage] = []
        var appendix = ""
    }

    static func render(_ book: Book, into out: inout TextBuffer) {
        out.append("# ")
        out.append(book.title.replacingLineBreaksWithSpaces())
        out.append("\n\n")
        out.append(book.introduction)
        out.append(passagesHeading)
        out.appendNewline()
        for passage in book.passages {
            out.appendNewline()
            PassageMarkdown.render(passage, into: &out)
        }
        if !book.appendix.isEmpty {
            out.appendNewline()
            out.append(book.appendix)
        }
    }

    static func parse(_ document: SplitDocument) -> Result<Content, ParseFailure> {
        let source = document.source
        let lines = source.lines
        var content = Content()
        var index = document.bodyStart
        while index < lines.count, lines[index].isBlank { index += 1 }
        if index < lines.count, lines[index].isLevelOneHeading {
            // A leading U+FEFF cannot survive as the `title:` it becomes (YAML readers drop it).
            var heading = lines[index].dropping(bytes: 1).trimmingSpacesAndTabs().string
            if heading.unicodeScalars.first == "\u{FEFF}" { heading.unicodeScalars.removeFirst() }
            content.headingTitle = heading
            index += 1
            if index < lines.count, lines[index].isEmpty { index += 1 }
        } else {
            index = document.bodyStart
        }
        guard let passagesLine = lines[index...].firstIndex(where: { $0.isMarker(passagesHeading) }) else {
            content.introduction = source.slice(lines: index..<lines.count).endingInNewline()
            return .success(content)
        }
        content.introduction = source.slice(lines: index..<passagesLine).endingInNewline()
        var section = PassageSectionParser(lines: lines)
        var appendixStart = lines.count
        for lineIndex in (passagesLine + 1)..<lines.count {
            if lines[lineIndex].isSectionHeading {
                appendixStart = lineIndex
                break
            }
            section.read(lines[lineIndex])
        }
        section.finish()
        guard section.diagnostics.isEmpty else { return .failure(ParseFailure(diagnostics: section.diagnostics)) }
        content.passages = section.passages
        content.appendix = source.slice(lines: appendixStart..<lines.count).endingInNewline()
        return .success(content)
    }
}

/// Reads the lines between `## Passages` and the next level-1 or level-2 heading into passages.
private struct PassageSectionParser {
    /// All lines of the file, which drafts refer to by index.
    let lines: [TextLine]
    private(set) var passages: [Passage] = []
    private(set) var diagnostics: [Diagnostic] = []
    private var draft: PassageDraft?
    /// The quote line of each declared block id, to refuse a copied passage that repeats one.
    private var idLines: [PassageID: Int] = [:]
    /// Passages written without a block id; they get fresh ids once all declared ones are known.
    private var passagesNeedingID: [Int] = []

    init(lines: [TextLine]) { self.lines = lines }

    mutating func read(_ line: TextLine) {
        if line.isBlank {
            draft?.endBlock()
        } else if line.starts(with: "### ") || line.isMarker("###") {
            finishDraft()
            startPassage(line)
        } else if draft != nil {
            if let problem = draft?.read(line) ?? nil {
                report(line.number, problem)
                draft?.isValid = false
            }
        } else {
            report(line.number, "only passages may follow `## Passages`: start one with a `### Page 42` heading, "
                + "or put free text under a `## ` heading after the passages")
        }
    }

    mutating func finish() {
        finishDraft()
        guard !passagesNeedingID.isEmpty else { return }
        var usedIDs = Set(idLines.keys)
        for index in passagesNeedingID {
            var id = PassageID.generate()
            while usedIDs.contains(id) { id = .generate() }
            usedIDs.insert(id)
            passages[index].id = id
        }
    }

    private mutating func startPassage(_ line: TextLine) {
        guard let heading = PassageMarkdown.parseHeading(line.dropping(bytes: 3)) else {
            report(line.number, "`\(line.text)` is not a passage heading; write `### Page 42`, `### Location 1234-1240`, "
                + "`### Page 42 · Location 1234-1240` or `### Passage`")
            draft = PassageDraft(headingLine: line.number, page: nil, location: nil, isValid: false)
            return
        }
        draft = PassageDraft(headingLine: line.number, page: heading.page, location: heading.location, isValid: true)
    }

    private mutating func finishDraft() {
        guard let finished = draft.take(), finished.isValid else { return }
        switch finished.passage(in: lines) {
        case .failure(let diagnostic):
            diagnostics.append(diagnostic)
        case .success(let (passage, declaredID)):
            if declaredID {
                // One hash lookup for the common case of a new id; a repeated one is put back.
                if let firstLine = idLines.updateValue(finished.quoteEndLine, forKey: passage.id) {
                    idLines[passage.id] = firstLine
                    report(finished.quoteEndLine, "the block id ^\(passage.id) is already used by the passage on line \(firstLine); "
                        + "give this passage another id or remove it")
                    return
                }
            } else {
                passagesNeedingID.append(passages.count)
            }
            passages.append(passage)
        }
    }

    private mutating func report(_ line: Int, _ message: String) {
        diagnostics.append(Diagnostic(line: line, message: message))
    }
}

/// One passage being read: its heading, quote lines, and field lines.
///
/// Quote lines are kept as a range of line indices rather than copied: a quote's lines follow one
/// another (a blank or field line closes it, any other line ends the passage or marks it invalid),
/// and so do the quote lines of a multi-line field value. The text is cut out once, at the end.
private struct PassageDraft {
    let headingLine: Int
    let page: Int?
    let location: String?
    /// False after a bad heading or line: the problem is reported, its other lines are skipped.
    var isValid: Bool
    /// Indices into `LinedText.lines` of the quote's lines.
    private var quoteLines: Range<Int>?
    private var quoteClosed = false
    private var fields = PassageMarkdown.PerField<FieldValue>()
    /// A field written as a bare `**Label**:`, whose value may follow as quote lines.
    private var openField: PassageMarkdown.Field?
    /// The last field read, while plain lines below it (blank-separated paragraphs too) may
    /// continue its value: a note typed naturally over several lines.
    private var continuingField: PassageMarkdown.Field?

    /// A field's value as written, and the line of its label.
    private struct FieldValue {
        enum Written {
            /// The rest of the label line, and the index of the last plain line continuing it
            /// (nil when the value is that one line).
            case inline(ArraySlice<UInt8>, through: Int?)
            /// Quote lines below a bare label, as indices into `LinedText.lines`.
            case quoted(Range<Int>)
        }

        let line: Int
        var written: Written
    }

    init(headingLine: Int, page: Int?, location: String?, isValid: Bool) {
        self.headingLine = headingLine
        self.page = page
        self.location = location
        self.isValid = isValid
    }

    /// The line number of the quote's last line (0 before the quote).
    var quoteEndLine: Int { quoteLines?.upperBound ?? 0 }

    /// A blank line: ends the quote and a quoted field value (a plain one may go on).
    mutating func endBlock() {
        if quoteLines != nil { quoteClosed = true }
        openField = nil
    }

    /// Takes one non-blank line; returns what is wrong with it, if anything.
    mutating func read(_ line: TextLine) -> String? {
        guard isValid else { return nil }
        if line.starts(with: ">") {
            return readQuoteLine(line.index)
        }
        guard let field = PassageMarkdown.Field.allCases.first(where: { line.starts(with: $0.label) }) else {
            if line.starts(with: "**"), line.text.contains("**:") {
                return "unknown passage field in `\(line.text)`; a passage has \(PassageMarkdown.Field.labelList) lines"
            }
            if let field = continuingField, case .inline(let first, _)? = fields[field]?.written {
                fields[field]?.written = .inline(first, through: line.index)
                openField = nil
                return nil
            }
            return "unexpected line in a passage; a passage is `### Page 42`, its `> ` quote, a blank line, then "
                + "\(PassageMarkdown.Field.labelList) lines, and a note or summary goes on over the lines below its label "
                + "(`**Note**: first line`, then more lines) — put other text under a `## ` heading after the passages"
        }
        guard quoteLines != nil else {
            return "`\(field.label)` comes before the passage's quote; put the `> ` quote right under the heading"
        }
        if let earlier = fields[field] {
            return "`\(field.label)` appears twice in this passage (first on line \(earlier.line)); keep one"
        }
        quoteClosed = true
        var value = line.dropping(bytes: field.label.utf8CodeUnitCount)
        if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        fields[field] = FieldValue(line: line.number, written: .inline(value, through: nil))
        openField = value.isEmpty ? field : nil
        continuingField = field == .note || field == .aiSummary ? field : nil
        return nil
    }

    private mutating func readQuoteLine(_ index: Int) -> String? {
        continuingField = nil
        if let field = openField {
            if case .quoted(let lines) = fields[field]?.written {
                fields[field]?.written = .quoted(lines.lowerBound..<(index + 1))
            } else {
                fields[field]?.written = .quoted(index..<(index + 1))
            }
            return nil
        }
        guard !quoteClosed else {
            return "a passage has one quote: join its paragraphs with a `>` line, or start a new passage with a `### ` heading"
        }
        quoteLines = (quoteLines?.lowerBound ?? index)..<(index + 1)
        return nil
    }

    /// The finished passage and whether its block id was written, or why it cannot be a passage.
    func passage(in lines: [TextLine]) -> Result<(Passage, declaredID: Bool), Diagnostic> {
        guard let quoteLines else {
            return .failure(Diagnostic(line: headingLine, message: "this passage has no quote; add the passage text as `> ` lines under its heading"))
        }
        let (lastText, blockID) = PassageMarkdown.splitBlockID(PassageMarkdown.quoteContent(lines[quoteLines.upperBound - 1]))
        let text = Self.joinedQuote(lines[quoteLines], lastLine: lastText)
        var dateAdded: CalendarDate?
        if let added = fields[.added] {
            guard let day = Self.calendarDate(added.written, in: lines) else {
                let text = value(of: .added, in: lines) ?? ""
                return .failure(Diagnostic(line: added.line,
                                           message: "**Added**: \(YAMLScalar.doubleQuoted(text)) is not a date like 2025-12-29"))
            }
            dateAdded = day
        }
        // A passage without a block id gets its fresh id from `PassageSectionParser.finish()`,
        // once every declared id is known and none can be taken twice.
        let passage = Passage(id: blockID ?? PassageID(""), page: page, location: location,
                              chapter: value(of: .chapter, in: lines), text: text,
                              note: value(of: .note, in: lines), aiSummary: value(of: .aiSummary, in: lines),
                              tags: value(of: .tags, in: lines).map(Passage.tags(from:)) ?? [], dateAdded: dateAdded)
        return .success((passage, blockID != nil))
    }

    private func value(of field: PassageMarkdown.Field, in lines: [TextLine]) -> String? {
        switch fields[field]?.written {
        case nil: nil
        case .inline(let text, nil): text.string
        case .inline(let text, let through?): Self.continuedValue(text, lines[(fields[field]!.line)...through])
        case .quoted(let range): Self.joinedQuote(lines[range])
        }
    }

    /// A value begun on its label's line (`first`, possibly empty) and continued on `lines`:
    /// the lines joined by `\n`, blank ones as empty lines, none before the first text.
    private static func continuedValue(_ first: ArraySlice<UInt8>, _ lines: ArraySlice<TextLine>) -> String {
        var parts = first.isEmpty ? [] : [first.string]
        for line in lines where !(parts.isEmpty && line.isBlank) {
            parts.append(line.isBlank ? "" : line.text)
        }
        return parts.joined(separator: "\n")
    }

    /// The day an `**Added**:` value names; nil when it is not a date or spans lines.
    private static func calendarDate(_ written: FieldValue.Written, in lines: [TextLine]) -> CalendarDate? {
        switch written {
        case .inline(let text, nil): Timestamp.calendarDate(utf8: text)
        case .inline(_, _?): nil
        case .quoted(let range): range.count == 1 ? Timestamp.calendarDate(utf8: PassageMarkdown.quoteContent(lines[range.lowerBound])) : nil
        }
    }

    /// The text of quote lines without their `>` prefixes, joined by `\n`; `lastLine`, when
    /// given, replaces the last line's text.
    private static func joinedQuote(_ lines: ArraySlice<TextLine>, lastLine: ArraySlice<UInt8>? = nil) -> String {
        let lastIndex = lines.endIndex - 1
        let content = { (index: Int) in
            index == lastIndex ? lastLine ?? PassageMarkdown.quoteContent(lines[index]) : PassageMarkdown.quoteContent(lines[index])
        }
        if lines.count == 1 { return content(lastIndex).string }
        let count = lines.indices.reduce(lines.count - 1) { $0 + content($1).count }
        return String(unsafeUninitializedCapacity: count) { buffer in
            var offset = 0
            for index in lines.indices {
                if index > lines.startIndex {
                    buffer[offset] = UInt8(ascii: "\n")
                    offset += 1
                }
                offset = buffer[offset...].initialize(fromContentsOf: content(index))
            }
            return offset
        }
    }
}

extension TextLine {
    /// Where the line sits in `LinedText.lines`.
    var index: Int { number - 1 }

    /// `# Title` (or a bare `#`).
    var isLevelOneHeading: Bool { starts(with: "# ") || isMarker("#") }

    /// A level-1 or level-2 heading: where the passages section ends and the appendix begins.
    var isSectionHeading: Bool { isLevelOneHeading || starts(with: "## ") || isMarker("##") }
}

extension String {
    /// Free text of a book ends its last line: the next section starts on a line of its own.
    func endingInNewline() -> String {
        isEmpty || utf8.last == UInt8(ascii: "\n") ? self : self + "\n"
    }

    /// Headings hold one line: `\n` and `\r` become spaces.
    func replacingLineBreaksWithSpaces() -> String {
        let isBreak = { (byte: UInt8) in byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") }
        guard utf8.contains(where: isBreak) else { return self }
        return String(decoding: utf8.map { isBreak($0) ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }
}
