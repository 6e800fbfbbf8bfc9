import Foundation
import ShelfModel

/// Merges one source's highlights of a book into the passages the book already has.
///
/// A passage is found by the source's own key for it, else — one imported from another
/// source, or from a Kindle — by its text once whitespace and quotes are normalised, so the
/// same highlight from two apps lands once. Once imported a passage is the reader's: a
/// highlight missing from the source stays, fields the reader filled stay, and the note
/// follows the source only when the source changed it and the reader has not edited it since.
enum PassageMerge {
    static func merge(_ incoming: [SourcePassage], into existing: [Passage]) -> (passages: [Passage], changes: PassageChanges) {
        var passages = existing
        var changes = PassageChanges()
        var byKey: [String: Int] = [:]
        var byText: [String: Int] = [:]
        func index(_ position: Int) {
            for source in passages[position].sources { byKey[source.key] = byKey[source.key] ?? position }
            let text = matchText(text: passages[position].text, note: passages[position].note)
            byText[text] = byText[text] ?? position
        }
        passages.indices.forEach(index)
        for passage in incoming.map({ $0.withUnixLineBreaks() }) {
            if let position = byKey[passage.key] ?? byText[matchText(text: passage.text, note: passage.note)] {
                let before = passages[position]
                passages[position].absorb(passage)
                if passages[position] == before { changes.unchanged += 1 } else { changes.updated += 1 }
                index(position)
            } else {
                passages.append(Passage(page: passage.page, location: passage.location, chapter: passage.chapter,
                                        text: passage.text, note: passage.note, tags: passage.tags,
                                        dateAdded: passage.dateAdded, color: passage.color,
                                        sources: [PassageSource(key: passage.key, note: passage.note)]))
                changes.added += 1
                index(passages.count - 1)
            }
        }
        return (passages, changes)
    }

    /// What makes two passages the same highlight: the text, or for a note made without a
    /// highlight, the note.
    private static func matchText(text: String, note: String?) -> String {
        text.isEmpty ? "\u{1F}note " + HighlightText.normalized(note ?? "") : HighlightText.normalized(text)
    }
}

extension Passage {
    /// Takes what `source` knows and the passage lacks, and its note when the source changed it
    /// and the reader did not edit the note since this source last gave it.
    fileprivate mutating func absorb(_ source: SourcePassage) {
        page = page ?? source.page
        location = location ?? source.location
        chapter = chapter ?? source.chapter
        dateAdded = dateAdded ?? source.dateAdded
        color = source.color ?? color
        if tags.isEmpty { tags = source.tags }
        guard let known = sources.firstIndex(where: { $0.key == source.key }) else {
            sources.append(PassageSource(key: source.key, note: source.note))
            note = note ?? source.note
            return
        }
        let lastGiven = sources[known].note
        guard source.note != lastGiven else { return }
        if let newNote = source.note, note == lastGiven || note == nil { note = newNote }
        sources[known].note = source.note
    }
}

/// Highlight text as two apps may write the same passage differently: typographic or straight
/// quotes, line breaks or spaces, composed or decomposed accents.
enum HighlightText {
    static func normalized(_ text: String) -> String {
        let quotes: [Character: Character] = [
            "\u{201C}": "\"", "\u{201D}": "\"", "\u{201E}": "\"", "\u{201F}": "\"", "\u{00AB}": "\"", "\u{00BB}": "\"",
            "\u{2018}": "'", "\u{2019}": "'", "\u{201A}": "'", "\u{201B}": "'", "\u{2032}": "'",
        ]
        return String(text.precomposedStringWithCanonicalMapping.map { quotes[$0] ?? $0 })
            .split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}
