import Foundation
import PropertyBased
import ShelfMarkdown
import ShelfModel
import Testing
import Yams
import TestTraits

/// Laws 1 and 2: records survive render → parse, canonical files survive parse → render byte for
/// byte; and what Shelf writes is plain YAML any reader types as intended.
@Suite(.scratchFolders) struct RoundTripLawTests {
    @Test func everyRecordSurvivesRenderThenParse() async {
        await propertyCheck(count: 1000, input: RecordGen.item) { item in
            let text = MarkdownCodec.render(item)
            let parsed = MarkdownCodec.parse(text, kind: item.kind, fileTitle: nil)
            guard case .success(let result) = parsed else {
                Issue.record("rendered file did not parse: \(parsed)\n\(text)")
                return
            }
            if result.item != item {
                Issue.record("parse(render(r)) differs at \(RecordDiff.differences(item, result.item))")
            }
            #expect(result.declaredID)
        }
    }

    @Test func canonicalFilesRenderBackByteForByte() async {
        await propertyCheck(count: 1000, input: RecordGen.item) { item in
            let canonical = MarkdownCodec.render(item)
            guard case .success(let parsed) = MarkdownCodec.parse(canonical, kind: item.kind, fileTitle: "Other") else {
                Issue.record("canonical file did not parse:\n\(canonical)")
                return
            }
            let rendered = MarkdownCodec.render(parsed.item)
            if Array(rendered.utf8) != Array(canonical.utf8) {
                Issue.record("render(parse(t)) differs from t at \(RecordDiff.firstDifferentLine(canonical, rendered))")
            }
        }
    }

    @Test func renderingIsDeterministic() async {
        await propertyCheck(count: 100, input: RecordGen.item) { item in
            #expect(Array(MarkdownCodec.render(item).utf8) == Array(MarkdownCodec.render(item).utf8))
        }
    }

    @Test func renderedFrontmatterIsAPlainYAMLMappingWithTheExpectedTypes() async throws {
        await propertyCheck(count: 1000, input: RecordGen.item) { item in
            let text = MarkdownCodec.render(item)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            guard lines.first == "---", let closing = lines.dropFirst().firstIndex(of: "---") else {
                Issue.record("no frontmatter fences:\n\(text)")
                return
            }
            let yaml = lines[1..<closing].joined(separator: "\n")
            guard case .mapping(let mapping)? = try? Yams.compose(yaml: yaml) else {
                Issue.record("frontmatter is not a YAML mapping:\n\(yaml)")
                return
            }
            let expected = expectedProperties(of: item)
            #expect(mapping.keys.map { $0.string ?? "" } == expected.map(\.key))
            for (node, property) in zip(mapping.values, expected) {
                expectNode(node, matches: property.value, key: property.key)
            }
        }
    }

    // MARK: - Expected YAML

    /// The record's frontmatter as properties, in canonical key order.
    private func expectedProperties(of item: Item) -> [Property] {
        func text(_ key: String, _ value: String?) -> Property? { value.map { Property(key: key, value: .string($0)) } }
        func int(_ key: String, _ value: Int?) -> Property? { value.map { Property(key: key, value: .int($0)) } }
        func date(_ key: String, _ value: CalendarDate?) -> Property? { value.map { Property(key: key, value: .date($0)) } }
        func tags(_ values: [String]) -> Property? {
            values.isEmpty ? nil : Property(key: "tags", value: .list(values.map(PropertyValue.string)))
        }
        switch item {
        case .book(let book):
            let rating = book.rating.map { $0 == $0.rounded() ? PropertyValue.int(Int($0)) : .double($0) }
            return [
                text("id", book.id.rawValue), text("title", book.title), text("author", book.author),
                text("isbn", book.isbn), text("status", book.status?.rawValue), int("current_page", book.currentPage),
                int("total_pages", book.totalPages), rating.map { Property(key: "rating", value: $0) },
                date("date_added", book.dateAdded), date("date_finished", book.dateFinished), tags(book.tags),
                text("source_id", book.sourceID),
            ].compactMap { $0 } + book.extraProperties
        case .note(let note):
            let timestamp = { (key: String, value: Date?) in value.map { _ in Property(key: key, value: .string("timestamp")) } }
            return [
                text("id", note.id.rawValue), text("title", note.title),
                Property(key: "favorite", value: .bool(note.favorite)),
                timestamp("created", note.created), timestamp("modified", note.modified), tags(note.tags),
            ].compactMap { $0 } + note.extraProperties
        }
    }

    /// `node`, typed by Yams' default (YAML 1.1) resolver, holds `value`. Timestamps of notes are
    /// expected as `.string("timestamp")`.
    private func expectNode(_ node: Node, matches value: PropertyValue, key: String) {
        let tag = node.tag.rawValue
        switch value {
        case .null:
            #expect(tag == Tag.Name.null.rawValue, "\(key)")
        case .bool(let flag):
            #expect(node.bool == flag, "\(key)")
        case .int(let number):
            #expect(tag == Tag.Name.int.rawValue && node.int == number, "\(key): \(node)")
        case .double(let number):
            #expect(tag == Tag.Name.float.rawValue && node.float == number, "\(key): \(node)")
        case .date(let day):
            #expect(tag == Tag.Name.timestamp.rawValue && node.string == day.isoString, "\(key): \(node)")
        case .string("timestamp") where key == "created" || key == "modified":
            #expect(tag == Tag.Name.timestamp.rawValue, "\(key): \(node)")
        case .string(let text):
            #expect(tag == Tag.Name.str.rawValue && node.string == text, "\(key): \(node)")
        case .list(let items):
            guard case .sequence(let sequence) = node, sequence.count == items.count else {
                Issue.record("\(key): expected a list of \(items.count), got \(node)")
                return
            }
            for (child, item) in zip(sequence, items) { expectNode(child, matches: item, key: key) }
        case .map(let entries):
            guard case .mapping(let mapping) = node else {
                Issue.record("\(key): expected a mapping, got \(node)")
                return
            }
            #expect(mapping.keys.map { $0.string ?? "" } == entries.map(\.key), "\(key)")
            for (child, entry) in zip(mapping.values, entries) { expectNode(child, matches: entry.value, key: entry.key) }
        }
    }
}
