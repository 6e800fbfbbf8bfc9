import Foundation
import Testing
import ShelfModel
@testable import ShelfFS
import TestTraits

/// Which versions a save may have been made from: the writer's own reads first, everything
/// served when the writer is not known.
@Suite(.scratchFolders) struct ServedVersionsTests {
    let served = ServedVersions()
    let note = ItemID("note")
    let editor: ProcessID = 100
    let checker: ProcessID = 200

    @Test func aKnownWritersOwnReadsComeFirstMostRecentFirst() {
        served.served(note, version: 1, to: editor)
        served.served(note, version: 2, to: checker)
        served.served(note, version: 3, to: editor)
        #expect(served.readFrom(note, by: [editor], startedFrom: 3) == [3, 1, 3])
    }

    @Test func aWriterThatReadNothingHereMayHaveReadAnythingServedOldestFirst() {
        served.served(note, version: 2, to: checker)
        served.served(note, version: 1, to: checker)
        #expect(served.readFrom(note, by: [editor], startedFrom: 3) == [1, 2, 3])
    }

    @Test func twoWritersOfTheBytesCountAsNotKnown() {
        served.served(note, version: 1, to: editor)
        served.served(note, version: 2, to: checker)
        #expect(served.readFrom(note, by: [editor, checker]) == [1, 2])
        #expect(served.readFrom(note, by: [nil]) == [1, 2])
    }

    @Test func aSaveStartsItsWriterAgainFromWhatItSaved() {
        served.served(note, version: 1, to: editor)
        served.saved(note, version: 4, by: [editor], startsAgain: true)
        #expect(served.readFrom(note, by: [editor]) == [4])
    }

    @Test func aFilledPlaceholderStandsForTheVersionItsReadersGot() {
        served.served(note, version: 5, to: editor)  // a placeholder: its version holds no bytes
        served.filled(note, version: 6)
        #expect(served.readFrom(note, by: [editor]) == [6])
    }

    /// A reader served the fetched bytes just before the fill may be noted just after it.
    @Test func aReadOfAPlaceholderNotedAfterItsFillStandsForTheFill() {
        served.filled(note, version: 6)
        served.served(note, version: 5, to: editor)
        #expect(served.readFrom(note, by: [editor]) == [6])
    }
}
