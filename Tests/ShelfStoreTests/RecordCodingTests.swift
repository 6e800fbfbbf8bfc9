import Foundation
import Testing
import ShelfModel
import ShelfMarkdown
@testable import ShelfStore
import TestTraits

@Suite("Stored record encoding", .scratchFolders)
struct RecordCodingTests {
    @Test func recordsAndDiagnosticsRoundTrip() throws {
        let coding = RecordCoding()
        let note = Item.note(Note(title: "Dates", content: "x", created: Date(timeIntervalSince1970: 1_766_966_400),
                                  tags: ["a"], extraProperties: [Property(key: "aliases", value: .list([.string("d")]))]))
        #expect(try coding.decodeItem(coding.encode(note), id: note.id) == note)
        let diagnostics = [Diagnostic(line: 3, message: "bad")]
        #expect(try coding.decodeDiagnostics(coding.encode(diagnostics), id: note.id) == diagnostics)
    }

    /// Each kind of kept frontmatter value, including the ones JSON has no plain form for and
    /// look-alikes that must not change type (a string "true", a whole-number double).
    @Test(arguments: [
        PropertyValue.null, .bool(true), .int(-7), .double(4.0), .double(0.25), .string("true"),
        .string("12"), .string(""), .date(CalendarDate(year: 2025, month: 12, day: 29)!),
        .list([.string("a"), .int(1), .list([])]),
        .map([Property(key: "nested", value: .map([Property(key: "x", value: .double(1.5))]))]),
    ])
    func everyKeptValueRoundTrips(_ value: PropertyValue) throws {
        let coding = RecordCoding()
        let book = Item.book(Book(title: "T", extraProperties: [Property(key: "k", value: value)]))
        #expect(try coding.decodeItem(coding.encode(book), id: book.id) == book)
    }

    @Test func anUndecodableRecordIsReportedAsDamagedWithItsID() throws {
        let id = ItemID("8d2c")
        let error = #expect(throws: StoreError.self) {
            try RecordCoding().decodeItem(Data(#"{"unknownKind":{}}"#.utf8), id: id)
        }
        guard case .damagedRecord(let damagedID, let reason)? = error else {
            Issue.record("expected damagedRecord, got \(String(describing: error))")
            return
        }
        #expect(damagedID == id)
        #expect(!reason.isEmpty)
    }

    /// Saves skip decoding the stored record unless it may hold passage fields files do not
    /// show: the check must see every color and source, whatever the encoder names them.
    @Test func recordsWithColorsOrSourcesAreToldApartWithoutDecoding() throws {
        let coding = RecordCoding()
        let plain = Passage(text: "Fear is the mind-killer.", note: "A \"color\" word in the text")
        func encoded(_ passage: Passage) throws -> Data { try coding.encode(.book(Book(title: "Dune", passages: [plain, passage]))) }
        #expect(!RecordCoding.mayHoldUnrenderedFields(try encoded(Passage(text: "Another"))))
        #expect(RecordCoding.mayHoldUnrenderedFields(try encoded(Passage(text: "Marked", color: "yellow"))))
        let source = PassageSource(key: "readwise:42")
        #expect(RecordCoding.mayHoldUnrenderedFields(try encoded(Passage(text: "Imported", sources: [source]))))
    }

    @Test func storedDatesReadBackExactly() {
        let date = Date()
        #expect(Date(storedSeconds: date.storedSeconds) == date)
    }
}
