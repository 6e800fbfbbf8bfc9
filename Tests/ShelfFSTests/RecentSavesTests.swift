import Foundation
import Testing
import ShelfModel
@testable import ShelfFS
import TestTraits

@Suite(.scratchFolders) struct RecentSavesTests {
    let saves = RecentSaves()
    let dune = ItemID("dune")
    let plan = ItemID("plan")

    @Test func servesOnlyTheVersionLastSaved() {
        saves.keep(dune, version: 3, content: Data("three".utf8))
        #expect(saves.content(of: dune, version: 3) == Data("three".utf8))
        #expect(saves.content(of: dune, version: 4) == nil, "a newer version from elsewhere must come from the store")
        saves.keep(dune, version: 4, content: Data("four".utf8))
        #expect(saves.content(of: dune, version: 3) == nil)
        #expect(saves.content(of: dune, version: 4) == Data("four".utf8))
        #expect(saves.content(of: plan, version: 4) == nil)
    }

    @Test func dropsTheOldestSavesBeyondItsCapacity() {
        let quarter = Data(repeating: UInt8(ascii: "x"), count: RecentSaves.capacity / 4)
        saves.keep(plan, version: 1, content: quarter)
        for number in 0..<4 { saves.keep(ItemID("item-\(number)"), version: 1, content: quarter) }
        #expect(saves.content(of: plan, version: 1) == nil, "the oldest save made room")
        #expect((0..<4).allSatisfy { saves.content(of: ItemID("item-\($0)"), version: 1) != nil })
        saves.keep(dune, version: 1, content: quarter + Data("y".utf8))
        #expect(saves.content(of: dune, version: 1) == nil, "a file over a quarter of the capacity is not kept")
    }

    @Test func anItemSavedOverAndOverKeepsOneEntry() {
        let quarter = Data(repeating: UInt8(ascii: "x"), count: RecentSaves.capacity / 4)
        saves.keep(plan, version: 1, content: Data("plan".utf8))
        for version in 1...1_000 { saves.keep(dune, version: Int64(version), content: quarter) }
        #expect(saves.content(of: dune, version: 1_000) != nil)
        #expect(saves.content(of: plan, version: 1) == Data("plan".utf8), "replaced saves of one item do not count against the others")
    }
}
