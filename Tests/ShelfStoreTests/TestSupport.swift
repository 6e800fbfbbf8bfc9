import Foundation
import TestSupport
import ShelfModel
@testable import ShelfStore

enum Sample {
    static func book(_ title: String = "Dune", author: String? = "Frank Herbert",
                     passages: [Passage] = [], sourceID: String? = nil) -> Book {
        Book(title: title, author: author, tags: ["scifi"], sourceID: sourceID, passages: passages)
    }

    static func note(_ title: String = "Reading plan", content: String = "Read more.\n",
                     favorite: Bool = false) -> Note {
        Note(title: title, content: content, favorite: favorite)
    }
}

extension LibraryStore {
    /// The feed entries written after `sequence`, without their sequence numbers.
    func changeEntries(after sequence: Int64) throws -> [ChangeEntry] {
        try changes(after: sequence).map { ChangeEntry($0) }
    }
}

/// A change feed entry minus its sequence, for comparing with what a test expects.
struct ChangeEntry: Hashable, CustomStringConvertible {
    var kind: Change.Kind
    var id: ItemID
    var path: String
    var previousPath: String?

    init(_ kind: Change.Kind, _ id: ItemID, _ path: String, previousPath: String? = nil) {
        self.kind = kind
        self.id = id
        self.path = path
        self.previousPath = previousPath
    }

    init(_ change: Change) {
        self.init(change.kind, change.id, change.path, previousPath: change.previousPath)
    }

    var description: String { "\(kind) \(id) \(path)" + (previousPath.map { " from \($0)" } ?? "") }
}

/// Runs file-permission tests as an ordinary user even when the tests run as root (in a
/// container), since root passes every permission check.
enum Unprivileged {
    /// The filesystem uid is per thread on Linux, and leaving 0 drops the capabilities that
    /// override permissions; `body` must stay synchronous so it stays on this thread.
    static func run<T>(_ body: () throws -> T) throws -> T {
        guard geteuid() == 0 else { return try body() }
        let setfsuid = try libcSetfsuid()
        let nobody: uid_t = 65_534
        let previous = setfsuid(nobody)
        defer { _ = setfsuid(uid_t(previous)) }
        return try body()
    }

    /// `setfsuid(2)`, looked up at run time: Swift's Glibc module leaves out <sys/fsuid.h>.
    private static func libcSetfsuid() throws -> @convention(c) (uid_t) -> Int32 {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "setfsuid") else { throw MissingSetfsuid() }
        return unsafeBitCast(symbol, to: (@convention(c) (uid_t) -> Int32).self)
    }

    struct MissingSetfsuid: Error {}
}
