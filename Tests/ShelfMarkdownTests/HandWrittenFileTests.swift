import Foundation
import ShelfMarkdown
import ShelfModel
import Testing
import TestTraits

/// Law 3: a valid file written by hand (or by another tool) keeps every key, value and line of
/// free text, and fills what it leaves out the documented way.
@Suite(.scratchFolders) struct HandWrittenFileTests {
    static let handWrittenBook = """
        ---
        # my reading log
        title: The Left Hand of Darkness
        author: Ursula K. Le Guin
        id: lhod-1
        aliases: [LHoD, "Left Hand"]
        cssclasses:
          - wide
        rating: 4.5
        tags: scifi
        series:
          name: Hainish Cycle
          number: 4
          read: [true, false, ~]
        published: 1969-03-01
        price: 9.99
        answer: no
        code: "0042"
        ---
        # The Left Hand of Darkness

        Why I picked it up:
        - a friend's advice

        ## Passages

        ### Page 1
        > I'll make my report as if I told a story,
        >
        > for I was taught as a child on my homeworld. ^p-1

        **Note**: the famous opening
        **Added**: 2025-12-29

        ### Location 1234-1240
        >Light is the left hand of darkness

        ### Passage
        > and darkness the right hand of light. ^p-3
        **AI Summary**:
        > Two lines
        >
        > of summary.

        ## Afterthoughts
        Kept as written, with a [[link]].

        ### Sub-heading inside the appendix
        > not a passage
        """

    @Test func bookKeepsEveryKeyValueAndLineOfFreeText() throws {
        let parsed = try MarkdownCodec.parse(Self.handWrittenBook, kind: .book, fileTitle: "ignored").get()
        guard case .book(let book) = parsed.item else { Issue.record("not a book"); return }
        #expect(parsed.declaredID)
        #expect(book.id == ItemID("lhod-1"))
        #expect(book.title == "The Left Hand of Darkness")
        #expect(book.author == "Ursula K. Le Guin")
        #expect(book.rating == 4.5)
        #expect(book.tags == ["scifi"])
        #expect(book.extraProperties == [
            Property(key: "aliases", value: .list([.string("LHoD"), .string("Left Hand")])),
            Property(key: "cssclasses", value: .list([.string("wide")])),
            Property(key: "series", value: .map([
                Property(key: "name", value: .string("Hainish Cycle")),
                Property(key: "number", value: .int(4)),
                Property(key: "read", value: .list([.bool(true), .bool(false), .null])),
            ])),
            Property(key: "published", value: .date(CalendarDate(year: 1969, month: 3, day: 1)!)),
            Property(key: "price", value: .double(9.99)),
            Property(key: "answer", value: .string("no")),
            Property(key: "code", value: .string("0042")),
        ])
        #expect(book.introduction == "Why I picked it up:\n- a friend's advice\n\n")
        #expect(book.appendix == """
            ## Afterthoughts
            Kept as written, with a [[link]].

            ### Sub-heading inside the appendix
            > not a passage

            """)
        #expect(book.passages.count == 3)
        #expect(book.passages[0] == Passage(
            id: PassageID("p-1"), page: 1,
            text: "I'll make my report as if I told a story,\n\nfor I was taught as a child on my homeworld.",
            note: "the famous opening", dateAdded: CalendarDate(year: 2025, month: 12, day: 29)))
        #expect(book.passages[1].location == "1234-1240")
        #expect(book.passages[1].text == "Light is the left hand of darkness")
        #expect(book.passages[1].id.rawValue.hasPrefix("p-"), "a passage without a block id gets a fresh one")
        #expect(book.passages[2].id == PassageID("p-3"))
        #expect(book.passages[2].aiSummary == "Two lines\n\nof summary.")
    }

    /// Issue #22: a second line typed under `**Note**: …` was "unexpected line in a passage"
    /// and the whole book was refused.
    @Test func aNoteTypedOverSeveralLinesParsesBack() throws {
        let text = """
            ---
            title: Dune
            ---
            # Dune

            ## Passages

            ### Page 42
            > I must not fear. ^p-1

            **Note**: The litany.
            I say it before exams.

            And a second paragraph.
            **AI Summary**:
            Fear is named
            and faced.
            **Added**: 2025-12-29

            ### Page 43
            > Fear is the mind-killer. ^p-2

            **Note**: one line

            """
        let parsed = try MarkdownCodec.parse(text, kind: .book, fileTitle: nil).get()
        guard case .book(let book) = parsed.item else { Issue.record("not a book"); return }
        #expect(book.passages.map(\.note) == ["The litany.\nI say it before exams.\n\nAnd a second paragraph.", "one line"])
        #expect(book.passages[0].aiSummary == "Fear is named\nand faced.")
        #expect(book.passages[0].dateAdded == CalendarDate(year: 2025, month: 12, day: 29))
        let reparsed = try MarkdownCodec.parse(MarkdownCodec.render(parsed.item), kind: .book, fileTitle: nil).get()
        #expect(reparsed.item == parsed.item, "the canonical form (quoted under the bare label) reads back the same")
    }

    /// Issue #22: Goodreads' shelf name `currently-reading` and `finished` were refused.
    @Test func statusSynonymsAreReadAsTheStatusTheyName() throws {
        let cases: [(String, ReadingStatus)] = [("currently-reading", .reading), ("Finished", .read), ("want to read", .toRead),
                                                ("DNF", .abandoned), ("to_read", .toRead), ("read", .read)]
        for (written, status) in cases {
            let parsed = try MarkdownCodec.parse("---\ntitle: Dune\nstatus: \(written)\n---\n", kind: .book, fileTitle: nil).get()
            guard case .book(let book) = parsed.item else { Issue.record("not a book"); return }
            #expect(book.status == status, "\(written)")
        }
    }

    @Test func reRenderingAHandWrittenBookKeepsItsMeaning() throws {
        let parsed = try MarkdownCodec.parse(Self.handWrittenBook, kind: .book, fileTitle: nil).get()
        let reparsed = try MarkdownCodec.parse(MarkdownCodec.render(parsed.item), kind: .book, fileTitle: nil).get()
        #expect(reparsed == parsed)
    }

    @Test func bookWithoutTitleKeyTakesItsHeading() throws {
        let text = "---\nauthor: Frank Herbert\n---\n\n# Dune Messiah \n\nIntro.\n"
        let parsed = try MarkdownCodec.parse(text, kind: .book, fileTitle: "Other - Name").get()
        guard case .book(let book) = parsed.item else { Issue.record("not a book"); return }
        #expect(book.title == "Dune Messiah")
        #expect(book.introduction == "Intro.\n")
        #expect(book.passages.isEmpty)
        #expect(!parsed.declaredID)
    }

    @Test func fileWithoutFrontmatterIsAllBody() throws {
        let note = try MarkdownCodec.parse("Just a thought.\n---\nmore", kind: .note, fileTitle: "Thought").get()
        #expect(note.item == .note(Note(id: note.item.id, title: "Thought", content: "Just a thought.\n---\nmore")))
        #expect(!note.declaredID)

        let empty = try MarkdownCodec.parse("", kind: .book, fileTitle: "Untitled Book").get()
        #expect(empty.item.title == "Untitled Book")
    }

    @Test func noteKeepsItsBodyVerbatimAndReadsLooseDates() throws {
        let text = """
            ---
            title: Meeting
            favorite: true
            created: 2025-12-29
            modified: 2025-12-29T11:15:30.750+01:00
            tags: [work]
            mood: fine
            ---

            Body with --- and
            ---
            a rule line, no final newline
            """
        let parsed = try MarkdownCodec.parse(text, kind: .note, fileTitle: "Ignored").get()
        guard case .note(let note) = parsed.item else { Issue.record("not a note"); return }
        #expect(note.title == "Meeting")
        #expect(note.favorite)
        #expect(note.created == Date(timeIntervalSince1970: 1_766_966_400))
        #expect(note.modified == Date(timeIntervalSince1970: 1_766_966_400 + 10 * 3600 + 15 * 60 + 30))
        #expect(note.tags == ["work"])
        #expect(note.extraProperties == [Property(key: "mood", value: .string("fine"))])
        #expect(note.content == "\nBody with --- and\n---\na rule line, no final newline")
    }

    @Test func noteWithoutTitleTakesTheFileTitle() throws {
        let parsed = try MarkdownCodec.parse("---\nid: n1\n---\nHello\n", kind: .note, fileTitle: "From File").get()
        #expect(parsed.item.title == "From File")
        #expect(parsed.item.id == ItemID("n1"))
    }

    @Test func canonicalNoteLooksLikeObsidiansOwn() {
        let note = Note(id: ItemID("n-1"), title: "Plans: 2026", content: "# Plans\n", favorite: false,
                        created: Date(timeIntervalSince1970: 1_766_999_700), tags: ["todo", "2026"],
                        extraProperties: [Property(key: "aliases", value: .list([]))])
        #expect(MarkdownCodec.render(.note(note)) == """
            ---
            id: n-1
            title: "Plans: 2026"
            favorite: false
            created: 2025-12-29T09:15:00Z
            tags:
              - todo
              - "2026"
            aliases: []
            ---
            # Plans

            """)
    }

    @Test func chapterAndTagsLinesRenderAndParseBack() throws {
        let passage = Passage(id: PassageID("p-1"), page: 7, chapter: "Chapter 3: The Desert", text: "Fear is the mind-killer.",
                              note: "The litany.", tags: ["fear", "to-reread"], color: "yellow",
                              sources: [PassageSource(key: "kobo:abc", note: "The litany.")])
        let text = MarkdownCodec.render(.book(Book(id: ItemID("b"), title: "Dune", passages: [passage])))
        #expect(text.hasSuffix("""
            ### Page 7
            > Fear is the mind-killer. ^p-1

            **Chapter**: Chapter 3: The Desert
            **Note**: The litany.
            **Tags**: fear, to-reread

            """))
        #expect(!text.contains("yellow") && !text.contains("kobo:"), "colour and sources stay in the store")
        guard case .success(let parsed) = MarkdownCodec.parse(text, kind: .book, fileTitle: nil),
              case .book(let book) = parsed.item else { Issue.record("did not parse"); return }
        #expect(book.passages.first?.chapter == "Chapter 3: The Desert")
        #expect(book.passages.first?.tags == ["fear", "to-reread"])

        // Written by hand: any order, spaces and a trailing comma in the list.
        let handWritten = "---\ntitle: D\n---\n## Passages\n\n### Passage\n> q\n\n**Tags**: a ,b,, c \n**Chapter**:\n> Part\n> One\n"
        guard case .success(let hand) = MarkdownCodec.parse(handWritten, kind: .book, fileTitle: nil),
              case .book(let handBook) = hand.item else { Issue.record("did not parse"); return }
        #expect(handBook.passages.first?.tags == ["a", "b", "c"])
        #expect(handBook.passages.first?.chapter == "Part\nOne")
        // U+0600 joins the comma after it into one character; the list still splits there.
        #expect(Passage.tags(from: ["{", "\u{0600}", "x"].joined(separator: ", ")) == ["{", "\u{0600}", "x"])
    }

    @Test func canonicalBookMatchesTheDesignExample() {
        let book = Book(id: ItemID("8d2c"), title: "Dune", author: "Frank Herbert", isbn: "0441013597", status: .reading,
                        currentPage: 120, totalPages: 412, rating: 4, dateAdded: CalendarDate(year: 2025, month: 12, day: 29),
                        tags: ["scifi"],
                        passages: [Passage(id: PassageID("p-7f3a"), page: 42, text: "The quoted passage, possibly\nover several lines.",
                                           aiSummary: "…")],
                        appendix: "## Thoughts\nGreat.\n")
        #expect(MarkdownCodec.render(.book(book)) == """
            ---
            id: 8d2c
            title: Dune
            author: Frank Herbert
            isbn: "0441013597"
            status: reading
            current_page: 120
            total_pages: 412
            rating: 4
            date_added: 2025-12-29
            tags:
              - scifi
            ---
            # Dune

            ## Passages

            ### Page 42
            > The quoted passage, possibly
            > over several lines. ^p-7f3a

            **AI Summary**: …

            ## Thoughts
            Great.

            """)
    }
}
