import Foundation
import ShelfModel

/// How an import changed one book's passages.
struct PassageChanges: Hashable, Sendable {
    var added = 0
    var updated = 0
    var unchanged = 0
}

/// Merges one import's highlights of a book into the passages the book already has: the one
/// place where every import, a reading app's or a Kindle's, decides which passage a highlight is.
///
/// A highlight is found by the source's own key for it; else by Kindle location, where both
/// sides have one that parses: the passage whose range and text hold the highlight's, or are
/// held by them (an extended highlight), so a refrain highlighted at two locations, or two
/// highlights sharing one, stay two; else, only where no location compares, by its text once
/// normalised, so the same highlight from two apps lands once (and, from a source that extends
/// a highlight by a later, longer entry, by a text holding or held by it on the same page: a
/// Kindle's PDF highlight).
/// Once imported a passage is the reader's: a highlight fills its gaps and never overwrites
/// what the reader edited; an extended one takes the longer text and place.
struct PassageMatcher {
    /// Whether the source extends a highlight by adding a later, longer entry rather than
    /// changing the one it has (a Kindle): only then, where no location compares, is a passage
    /// on the same page whose text holds or is held by the highlight's that highlight.
    let extendsByLongerEntries: Bool
    private(set) var passages: [Passage]
    private(set) var changes = PassageChanges()
    /// What each of `passages` is compared by, in the same order.
    private var traits: [MatchTraits]
    private var byKey: [String: Int] = [:]

    init(_ existing: [Passage], extendsByLongerEntries: Bool) {
        self.extendsByLongerEntries = extendsByLongerEntries
        passages = existing
        traits = existing.map(MatchTraits.init)
        for position in existing.indices { indexKeys(position) }
    }

    /// `existing` with `incoming` merged in, in order, and what changed.
    static func merge(_ incoming: [SourcePassage], into existing: [Passage],
                      extendsByLongerEntries: Bool) -> (passages: [Passage], changes: PassageChanges) {
        var matcher = PassageMatcher(existing, extendsByLongerEntries: extendsByLongerEntries)
        for passage in incoming { matcher.merge(passage) }
        return (matcher.passages, matcher.changes)
    }

    mutating func merge(_ incoming: SourcePassage) {
        let source = incoming.withUnixLineBreaks()
        guard let (position, match) = match(source) else {
            passages.append(Passage(page: source.page, location: source.location, chapter: source.chapter,
                                    text: source.text, note: source.note, tags: source.tags,
                                    dateAdded: source.dateAdded, color: source.color,
                                    sources: [PassageSource(key: source.key, note: source.note)]))
            traits.append(MatchTraits(source))
            changes.added += 1
            indexKeys(passages.count - 1)
            return
        }
        let before = passages[position]
        if match.extends { passages[position].extend(to: source) }
        passages[position].absorb(source)
        guard passages[position] != before else {
            changes.unchanged += 1
            return
        }
        changes.updated += 1
        traits[position] = MatchTraits(passages[position])
        indexKeys(position)
    }

    /// The passage `source` is, and why: the strongest reason any passage gives, the first
    /// such passage of several.
    private func match(_ source: SourcePassage) -> (position: Int, match: MatchTraits.Match)? {
        if let position = byKey[source.key] { return (position, .sourceKey) }
        let incoming = MatchTraits(source)
        var best: (position: Int, match: MatchTraits.Match)?
        for (position, stored) in traits.enumerated() {
            guard let match = incoming.match(stored, onPage: extendsByLongerEntries), best.map({ match < $0.match }) ?? true else {
                continue
            }
            if match == .sameLocation { return (position, match) }
            best = (position, match)
        }
        return best
    }

    private mutating func indexKeys(_ position: Int) {
        for source in passages[position].sources { byKey[source.key] = byKey[source.key] ?? position }
    }
}

/// What a passage is compared by, worked out once per passage.
private struct MatchTraits {
    /// Why a stored passage is an incoming highlight, strongest first.
    enum Match: Int, Comparable {
        case sourceKey, sameLocation, extendsAtLocation, sameText, samePage, extendsOnPage

        /// Whether the incoming highlight is a longer version of the passage.
        var extends: Bool { self == .extendsAtLocation || self == .extendsOnPage }

        static func < (lhs: Match, rhs: Match) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    var location: KindleLocation?
    var page: Int?
    /// A note made without a highlight: its text is empty.
    var isNote: Bool
    /// The text normalised, or for a note made without a highlight, its note marked as one.
    var text: String

    init(text: String, note: String?, location: String?, page: Int?) {
        self.location = location.flatMap(KindleLocation.init(parsing:))
        self.page = page
        isNote = text.isEmpty
        self.text = isNote ? "\u{1F}note " + HighlightText.normalized(note ?? "") : HighlightText.normalized(text)
    }

    init(_ passage: Passage) { self.init(text: passage.text, note: passage.note, location: passage.location, page: passage.page) }
    init(_ source: SourcePassage) { self.init(text: source.text, note: source.note, location: source.location, page: source.page) }

    /// Why `stored` is this highlight, or nil when it is another.
    ///
    /// Where both have a Kindle location, only the locations decide: a note made without a
    /// highlight is the one at its very location (the reader may have edited it since); a
    /// highlight is the one whose range and text hold its own, or are held by them. Elsewhere
    /// the normalised text decides, and `onPage` — for a source that extends a highlight by a
    /// longer entry, as a Kindle does, in a PDF (pages, no locations) — a text holding or held
    /// by the other's on the same page.
    func match(_ stored: MatchTraits, onPage: Bool) -> Match? {
        if let mine = location, let theirs = stored.location {
            guard !isNote, !stored.isNote else { return isNote && stored.isNote && mine == theirs ? .sameLocation : nil }
            return holding(stored, theyHoldMine: theirs.contains(mine), mineHoldsTheirs: mine.contains(theirs))
                .map { $0 ? .sameLocation : .extendsAtLocation }
        }
        if text == stored.text { return .sameText }
        guard onPage, let page, page == stored.page, !isNote, !stored.isNote else { return nil }
        return holding(stored, theyHoldMine: true, mineHoldsTheirs: true).map { $0 ? .samePage : .extendsOnPage }
    }

    /// True when `stored`'s text holds this one's where its place does; false when this text
    /// holds a shorter `stored`'s where this place does; nil when neither.
    private func holding(_ stored: MatchTraits, theyHoldMine: Bool, mineHoldsTheirs: Bool) -> Bool? {
        if theyHoldMine && stored.text.contains(text) { return true }
        if mineHoldsTheirs && text.contains(stored.text) { return text == stored.text }
        return nil
    }
}

extension Passage {
    /// Takes the text and place of `source`, a longer version of this highlight.
    fileprivate mutating func extend(to source: SourcePassage) {
        text = source.text
        location = source.location
        page = source.page ?? page
    }

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
