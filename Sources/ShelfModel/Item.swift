/// A book or a note: what one item file stands for.
public enum Item: Hashable, Codable, Sendable {
    case book(Book)
    case note(Note)

    public var id: ItemID {
        get {
            switch self {
            case .book(let book): book.id
            case .note(let note): note.id
            }
        }
        set {
            switch self {
            case .book(var book): book.id = newValue; self = .book(book)
            case .note(var note): note.id = newValue; self = .note(note)
            }
        }
    }

    public var kind: ItemKind {
        switch self {
        case .book: .book
        case .note: .note
        }
    }

    public var title: String {
        switch self {
        case .book(let book): book.title
        case .note(let note): note.title
        }
    }

    public var tags: [String] {
        switch self {
        case .book(let book): book.tags
        case .note(let note): note.tags
        }
    }
}
