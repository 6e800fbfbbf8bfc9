import Foundation
import Testing
import ShelfModel
import ShelfMarkdown
@testable import ShelfStore

@Suite("Stored record encoding")
struct RecordCodingTests {
    @Test func recordsAndDiagnosticsRoundTrip() throws {
        let coding = RecordCoding()
        let note = Item.note(Note(title: "Dates", content: "x", created: Date(timeIntervalSince1970: 1_766_966_400),
                                  tags: ["a"], extraProperties: [Property(key: "aliases", value: .list([.string("d")]))]))
        #expect(try coding.decodeItem(coding.encode(note), id: note.id) == note)
        let diagnostics = [Diagnostic(line: 3, message: "bad")]
        #expect(try coding.decodeDiagnostics(coding.encode(diagnostics), id: note.id) == diagnostics)
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

    @Test func storedDatesReadBackExactly() {
        let date = Date()
        #expect(Date(storedSeconds: date.storedSeconds) == date)
    }
}
