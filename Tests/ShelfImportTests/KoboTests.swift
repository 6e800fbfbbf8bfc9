import Foundation
import GRDB
import TestSupport
import TestTraits
import Testing
import ShelfModel
import ShelfStore
@testable import ShelfImport

/// A Kobo database built from the schema the firmware writes (the columns Shelf reads, among
/// others it ignores), in WAL mode as on the device.
struct KoboDevice {
    let folder: URL
    let database: DatabaseQueue
    var file: URL { folder.appendingPathComponent(".kobo/KoboReader.sqlite") }

    init(in temporary: TemporaryFolder, bookmarkColumns: String = Self.bookmarkColumns) throws {
        folder = temporary.url.appendingPathComponent("KOBOeReader", isDirectory: true)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent(".kobo"), withIntermediateDirectories: true)
        database = try DatabaseQueue(path: folder.appendingPathComponent(".kobo/KoboReader.sqlite").path)
        try database.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: """
                CREATE TABLE content (ContentID TEXT NOT NULL, ContentType TEXT NOT NULL, MimeType TEXT NOT NULL, BookID TEXT,
                    BookTitle TEXT, ImageId TEXT, Title TEXT COLLATE NOCASE, Attribution TEXT COLLATE NOCASE, Description TEXT,
                    DateCreated TEXT, ShortCoverKey TEXT, adobe_location TEXT, Publisher TEXT, IsEncrypted BOOL, DateLastRead TEXT,
                    FirstTimeReading BOOL, ChapterIDBookmarked TEXT, ParagraphBookmarked INTEGER, BookmarkWordOffset INTEGER,
                    NumShortcovers INTEGER, VolumeIndex INTEGER, ___NumPages INTEGER, ReadStatus INTEGER, ___SyncTime TEXT,
                    ___UserID TEXT NOT NULL, PublicationId TEXT, ___FileOffset INTEGER, ___FileSize INTEGER, ___PercentRead INTEGER,
                    ___ExpirationStatus INTEGER, FavouritesIndex INTEGER, Accessibility INTEGER, ContentURL TEXT, Language TEXT,
                    BookshelfTags TEXT, IsDownloaded BIT, FeedbackType INTEGER, AverageRating INTEGER, Depth INTEGER,
                    PageProgressDirection TEXT, InWishlist TEXT, ISBN TEXT, WishlistedDate TEXT, FeedbackTypeSynced INTEGER,
                    IsSocialEnabled BOOL, EpubType INTEGER, Monetization INTEGER, ExternalId TEXT, Series TEXT, SeriesNumber TEXT,
                    Subtitle TEXT, WordCount INTEGER, Fallback TEXT, RestOfBookEstimate INTEGER, CurrentChapterEstimate INTEGER,
                    CurrentChapterProgress FLOAT, PRIMARY KEY (ContentID))
                """)
            try db.execute(sql: "CREATE TABLE Bookmark (\(bookmarkColumns), PRIMARY KEY (BookmarkID))")
        }
    }

    static let bookmarkColumns = """
        BookmarkID TEXT NOT NULL, VolumeID TEXT NOT NULL, ContentID TEXT NOT NULL, StartContainerPath TEXT NOT NULL,
        StartContainerChildIndex INTEGER NOT NULL, StartOffset INTEGER NOT NULL, EndContainerPath TEXT NOT NULL,
        EndContainerChildIndex INTEGER NOT NULL, EndOffset INTEGER NOT NULL, Text TEXT, Annotation TEXT, ExtraAnnotationData BLOB,
        DateCreated TEXT, ChapterProgress FLOAT NOT NULL DEFAULT 0, Hidden BOOL NOT NULL DEFAULT 0, Version TEXT, DateModified TEXT,
        Creator TEXT, UUID TEXT, UserID TEXT, SyncTime TEXT, Published BIT DEFAULT false, ContextString TEXT, Type TEXT, Color INTEGER
        """

    func addBook(_ id: String, title: String, author: String, isbn: String? = nil, readStatus: Int = 0,
                 percent: Int = 0, pages: Int = 0) throws {
        try database.write { db in
            try db.execute(sql: """
                INSERT INTO content (ContentID, ContentType, MimeType, Title, Attribution, ISBN, ReadStatus, ___PercentRead,
                    ___NumPages, ___UserID) VALUES (?, 6, 'application/epub+zip', ?, ?, ?, ?, ?, ?, 'adobe_user')
                """, arguments: [id, title, author, isbn, readStatus, percent, pages])
        }
    }

    func addChapter(_ id: String, title: String) throws {
        try database.write { db in
            try db.execute(sql: "INSERT INTO content (ContentID, ContentType, MimeType, Title, ___UserID) VALUES (?, 899, 'application/xhtml+xml', ?, '')",
                           arguments: [id, title])
        }
    }

    func addBookmark(_ id: String, book: String, chapter: String = "", text: String?, note: String? = nil,
                     type: String = "highlight", color: Int? = nil, progress: Double = 0) throws {
        try database.write { db in
            let columns = try db.columns(in: "Bookmark").map(\.name)
            var values: [String: (any DatabaseValueConvertible)?] = [
                "BookmarkID": id, "VolumeID": book, "ContentID": chapter, "StartContainerPath": "span#kobo.1.1",
                "StartContainerChildIndex": 0, "StartOffset": 0, "EndContainerPath": "span#kobo.1.2", "EndContainerChildIndex": 0,
                "EndOffset": 4, "Text": text, "Annotation": note, "DateCreated": "2025-11-03T21:14:05.000", "Type": type, "Color": color,
                "ChapterProgress": progress,
            ]
            values = values.filter { columns.contains($0.key) }
            try db.execute(sql: "INSERT INTO Bookmark (\(values.keys.joined(separator: ", "))) VALUES (\(values.map { _ in "?" }.joined(separator: ", ")))",
                           arguments: StatementArguments(Array(values.values)))
        }
    }

    func execute(_ sql: String) throws {
        try database.write { try $0.execute(sql: sql) }
    }
}

@Suite(.scratchFolders) struct KoboTests {
    private static let dune = "file:///mnt/onboard/Dune.epub"
    private static let pragmatic = "file:///mnt/onboard/Pragmatic.epub"

    /// Two books, one with highlights with and without notes, a note without a highlight, a
    /// dog-ear, Unicode; chapters named by their content rows.
    private func device(_ temporary: TemporaryFolder) throws -> KoboDevice {
        let kobo = try KoboDevice(in: temporary)
        try kobo.addBook(Self.dune, title: "Dune", author: "Frank Herbert", isbn: "0441013597", readStatus: 1, percent: 45, pages: 400)
        try kobo.addBook(Self.pragmatic, title: "The Pragmatic Programmer", author: "Andrew Hunt, David Thomas", readStatus: 2, percent: 100)
        try kobo.addChapter(Self.dune + "#(3)OEBPS/ch1.xhtml", title: "Book One: Dune")
        try kobo.addBookmark("b1", book: Self.dune, chapter: Self.dune + "#(3)OEBPS/ch1.xhtml", text: "I must not fear.\n Fear is the mind-killer.",
                             note: "The litany.", color: 1, progress: 0.253)
        try kobo.addBookmark("b2", book: Self.dune, text: "«Muad’Dib» — ein Name, 名前.")
        try kobo.addBookmark("b3", book: Self.dune, text: "", note: "Reread the dinner scene.", type: "note")
        try kobo.addBookmark("b4", book: Self.dune, text: nil, type: "dogear")
        try kobo.addBookmark("b5", book: Self.pragmatic, text: "Don't live with broken windows.")
        return kobo
    }

    @Test func importsBooksHighlightsNotesStatusAndProgress() throws {
        let testLibrary = try TestLibrary()
        let (temporary, store) = (testLibrary.scratch, testLibrary.store)
        let kobo = try device(temporary)
        try kobo.execute("UPDATE content SET Series = 'Dune', SeriesNumber = '1', Description = '<p>A <i>desert</i> planet.</p>' WHERE ContentID = '\(Self.dune)'")
        let before = try Data(contentsOf: kobo.file)
        let summary = try Importer().importFile(kobo.folder, into: store)
        #expect(summary.format == .kobo)
        #expect(summary.added == 6 && summary.skipped == 1, "two books and four passages; the dog-ear is skipped")
        #expect(summary.omissions.isEmpty)
        #expect(try Data(contentsOf: kobo.file) == before, "the device's database is never written")

        let books = try store.booksByTitle()
        let dune = try #require(books["Dune"])
        #expect(dune.author == "Frank Herbert" && dune.isbn == "0441013597" && dune.sourceID == "kobo:" + Self.dune)
        #expect(dune.status == .reading && dune.currentPage == 180 && dune.totalPages == 400)
        #expect(dune.extraProperties["series"] == .string("Dune") && dune.extraProperties["series_index"] == .int(1))
        #expect(dune.introduction == "A *desert* planet.\n\n")
        #expect(dune.passages.map(\.text) == ["I must not fear.\n Fear is the mind-killer.", "«Muad’Dib» — ein Name, 名前.", ""])
        #expect(dune.passages.map(\.note) == ["The litany.", nil, "Reread the dinner scene."])
        #expect(dune.passages[0].chapter == "Book One: Dune" && dune.passages[0].color == "pink")
        #expect(dune.passages.map(\.location) == ["25% of chapter", "0% of chapter", "0% of chapter"])
        let file = try #require(try store.record(id: dune.id)).text
        #expect(file.contains("### Location 25% of chapter\n> I must not fear.\n>  Fear is the mind-killer. ^"))
        #expect(file.contains("**Chapter**: Book One: Dune\n**Note**: The litany.\n"))
        #expect(dune.passages[0].dateAdded == CalendarDate(year: 2025, month: 11, day: 3))
        #expect(dune.passages.map { $0.sources.map(\.key) } == [["kobo:b1"], ["kobo:b2"], ["kobo:b3"]])
        let pragmatic = try #require(books["The Pragmatic Programmer"])
        #expect(pragmatic.author == "Andrew Hunt, David Thomas" && pragmatic.status == .read)
        #expect(pragmatic.extraProperties["progress_percent"] == .int(100))
    }

    @Test func reImportingChangesNothingAndARemovedHighlightStays() throws {
        let testLibrary = try TestLibrary()
        let (temporary, store) = (testLibrary.scratch, testLibrary.store)
        let kobo = try device(temporary)
        _ = try Importer().importFile(kobo.file, into: store)
        let sequence = try store.lastSequence()
        let again = try Importer().importFile(kobo.file, into: store)
        #expect(again.added == 0 && again.updated == 0 && again.unchanged == 6)
        #expect(try store.lastSequence() == sequence)

        try kobo.execute("DELETE FROM Bookmark WHERE BookmarkID = 'b2'")
        let afterRemoval = try Importer(format: .kobo).importFile(kobo.file, into: store)
        #expect(afterRemoval.added == 0 && afterRemoval.updated == 0 && afterRemoval.unchanged == 5)
        #expect(try store.booksByTitle()["Dune"]?.passages.count == 3, "once imported, a passage is the reader's")
    }

    @Test func aNoteChangedOnTheDeviceUpdatesThePassageUnlessTheReaderEditedIt() throws {
        let testLibrary = try TestLibrary()
        let (temporary, store) = (testLibrary.scratch, testLibrary.store)
        let kobo = try device(temporary)
        _ = try Importer().importFile(kobo.file, into: store)

        try kobo.execute("UPDATE Bookmark SET Annotation = 'The litany against fear.' WHERE BookmarkID = 'b1'")
        let changed = try Importer().importFile(kobo.file, into: store)
        #expect(changed.updated == 1 && changed.added == 0)
        var dune = try #require(try store.booksByTitle()["Dune"])
        #expect(dune.passages[0].note == "The litany against fear.")

        dune.passages[0].note = "My own words."
        try store.update(.book(dune))
        try kobo.execute("UPDATE Bookmark SET Annotation = 'Changed on the device again.' WHERE BookmarkID = 'b1'")
        _ = try Importer().importFile(kobo.file, into: store)
        #expect(try store.booksByTitle()["Dune"]?.passages[0].note == "My own words.")
    }

    @Test func highlightsJoinCatalogueBooksByISBNAndByFirstAuthor() throws {
        let testLibrary = try TestLibrary()
        let (temporary, store) = (testLibrary.scratch, testLibrary.store)
        let goodreadsDune = Book(title: "Dune (Dune, #1)", author: "Herbert, Frank", isbn: "9780441013593", sourceID: "goodreads:234225")
        let goodreadsPragmatic = Book(title: "The Pragmatic Programmer", author: "Andrew Hunt", sourceID: "goodreads:4099")
        try store.insert(.book(goodreadsDune))
        try store.insert(.book(goodreadsPragmatic))
        _ = try Importer().importFile(try device(temporary).folder, into: store)
        #expect(try store.summaries(kind: .book).count == 2)
        guard case .book(let dune)? = try store.record(id: goodreadsDune.id)?.item,
              case .book(let pragmatic)? = try store.record(id: goodreadsPragmatic.id)?.item else {
            Issue.record("books missing")
            return
        }
        #expect(dune.passages.count == 3 && dune.title == "Dune (Dune, #1)" && dune.sourceID == "goodreads:234225")
        #expect(pragmatic.passages.map(\.text) == ["Don't live with broken windows."])
    }

    @Test func anOlderFirmwareWithoutSomeColumnsImportsWhatItHas() throws {
        let testLibrary = try TestLibrary()
        let (temporary, store) = (testLibrary.scratch, testLibrary.store)
        let older = KoboDevice.bookmarkColumns.replacingOccurrences(of: ", Type TEXT, Color INTEGER", with: "")
            .replacingOccurrences(of: "Annotation TEXT, ", with: "")
        let kobo = try KoboDevice(in: temporary, bookmarkColumns: older)
        try kobo.addBook(Self.dune, title: "Dune", author: "Frank Herbert")
        try kobo.addBookmark("b1", book: Self.dune, text: "I must not fear.")
        let summary = try Importer().importFile(kobo.file, into: store)
        #expect(summary.added == 2)
        #expect(summary.omissions == [
            "kobo: Bookmark has no Annotation column (another firmware version?), so notes were not imported",
            "kobo: Bookmark has no Type column (another firmware version?), so bookmark types were not imported",
            "kobo: Bookmark has no Color column (another firmware version?), so colours were not imported",
        ])
        #expect(summary.description.contains("so notes were not imported"))
    }

    @Test func aDatabaseThatIsNotAKobosIsRefusedAndNothingWritten() throws {
        let testLibrary = try TestLibrary()
        let (temporary, store) = (testLibrary.scratch, testLibrary.store)
        let other = temporary.url.appendingPathComponent("KoboReader.sqlite")
        try DatabaseQueue(path: other.path).write { try $0.execute(sql: "CREATE TABLE notes (id INTEGER)") }
        let error = #expect(throws: ImportError.self) { try Importer().importFile(other, into: store) }
        #expect(error == .notFormat(path: other.path, format: .kobo, reason: "it has no content table"))
        #expect(error?.description.contains("import .kobo/KoboReader.sqlite from the e-reader") == true)
        #expect(try store.summaries().isEmpty)
    }
}
