import Testing
import ShelfModel
@testable import ShelfFS

@Suite struct RecentSavesTests {
    let saves = RecentSaves()
    let dune = ItemID("dune")
    let plan = ItemID("plan")

    @Test func servesOnlyTheVersionLastSaved() {
        saves.keep(dune, version: 3, content: "three")
        #expect(saves.content(of: dune, version: 3) == "three")
        #expect(saves.content(of: dune, version: 4) == nil, "a newer version from elsewhere must come from the store")
        saves.keep(dune, version: 4, content: "four")
        #expect(saves.content(of: dune, version: 3) == nil)
        #expect(saves.content(of: dune, version: 4) == "four")
        #expect(saves.content(of: plan, version: 4) == nil)
    }

    @Test func dropsTheOldestSavesBeyondItsCapacity() {
        let quarter = String(repeating: "x", count: RecentSaves.capacity / 4)
        saves.keep(plan, version: 1, content: quarter)
        for number in 0..<4 { saves.keep(ItemID("item-\(number)"), version: 1, content: quarter) }
        #expect(saves.content(of: plan, version: 1) == nil, "the oldest save made room")
        #expect((0..<4).allSatisfy { saves.content(of: ItemID("item-\($0)"), version: 1) != nil })
        saves.keep(dune, version: 1, content: quarter + "y")
        #expect(saves.content(of: dune, version: 1) == nil, "a file over a quarter of the capacity is not kept")
    }

    @Test func anItemSavedOverAndOverKeepsOneEntry() {
        let quarter = String(repeating: "x", count: RecentSaves.capacity / 4)
        saves.keep(plan, version: 1, content: "plan")
        for version in 1...1_000 { saves.keep(dune, version: Int64(version), content: quarter) }
        #expect(saves.content(of: dune, version: 1_000) != nil)
        #expect(saves.content(of: plan, version: 1) == "plan", "replaced saves of one item do not count against the others")
    }
}
