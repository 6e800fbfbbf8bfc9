import ShelfModel
import Yams

/// One top-level frontmatter key with its YAML node and the file line it is on.
struct FrontmatterEntry {
    let key: String
    let value: Node
    let line: Int
}

/// A file cut into its frontmatter entries and the lines of its body.
struct SplitDocument {
    let source: LinedText
    /// Top-level keys in file order; empty when the file has no frontmatter.
    let entries: [FrontmatterEntry]
    /// Index into `source.lines` of the first body line.
    let bodyStart: Int
    /// Where the frontmatter's YAML sits in the file, for diagnostics.
    let yamlLines: YAMLLineMap

    /// Splits `text` at the frontmatter fences (`---` on the first line and the next `---` line)
    /// and loads the frontmatter with Yams. A file that does not start with `---` has no
    /// frontmatter: all of it is body.
    static func split(_ text: String) -> Result<SplitDocument, ParseFailure> {
        let source = LinedText(text)
        guard let opening = source.lines.first, opening.isMarker("---") else {
            return .success(SplitDocument(source: source, entries: [], bodyStart: 0,
                                          yamlLines: YAMLLineMap(firstLine: 1, lastLine: 1)))
        }
        guard let closing = source.lines.dropFirst().firstIndex(where: { $0.isMarker("---") }) else {
            return .failure(ParseFailure(diagnostics: [Diagnostic(
                line: 1, message: "the frontmatter opened here is never closed; add a line `---` after the last property")]))
        }
        let yaml = source.bytes[source.lines[1].bytes.startIndex..<source.lines[closing].bytes.startIndex].string
        let yamlLines = YAMLLineMap(firstLine: 2, lastLine: closing + 1)
        return FrontmatterLoader(yaml: yaml, lines: yamlLines).entries()
            .map { SplitDocument(source: source, entries: $0, bodyStart: closing + 1, yamlLines: yamlLines) }
    }
}

/// Loads frontmatter YAML with Yams, keeping each node's style (so `"123"` stays text) and line.
///
/// Yams is given `Resolver.basic`, which types nothing: typing plain scalars is left to
/// `YAMLScalar.plainValue`, which follows YAML 1.2's core schema like Obsidian does.
struct FrontmatterLoader {
    let yaml: String
    let lines: YAMLLineMap

    /// Yams composes nested values recursively; a hostile file nesting thousands of levels would
    /// exhaust the stack of the thread parsing it. No real frontmatter comes close to this.
    static let maximumNesting = 64

    func entries() -> Result<[FrontmatterEntry], ParseFailure> {
        if let line = lineNestingTooDeep() {
            return .failure(ParseFailure(diagnostics: [Diagnostic(
                line: lines.fileLine(line),
                message: "the frontmatter nests lists or mappings more than \(Self.maximumNesting) levels deep; flatten it")]))
        }
        let root: Node?
        do {
            root = try Parser(yaml: yaml, resolver: .basic, encoding: .utf8).singleRoot()
        } catch let error as YamlError {
            return .failure(ParseFailure(diagnostics: [diagnostic(for: error)]))
        } catch {
            return .failure(ParseFailure(diagnostics: [Diagnostic(line: lines.firstLine, message: "invalid YAML: \(error)")]))
        }
        guard let root else { return .success([]) }
        guard case .mapping(let mapping) = root else {
            return .failure(failure(at: root, "the frontmatter must be `key: value` lines, not a single \(root.kindName)"))
        }
        var entries: [FrontmatterEntry] = []
        for (key, value) in mapping {
            guard case .scalar(let scalar) = key else {
                return .failure(failure(at: key, "a property name must be plain text, not a \(key.kindName)"))
            }
            entries.append(FrontmatterEntry(key: scalar.string, value: value, line: lines.line(of: key)))
        }
        return .success(entries)
    }

    /// The first YAML line where flow brackets (`[`, `{`, counted even inside quotes, which only
    /// errs towards refusing) or block indentation could nest deeper than `maximumNesting`.
    private func lineNestingTooDeep() -> Int? {
        var depth = 0
        var line = 1
        var indentation = 0
        var atLineStart = true
        for byte in yaml.utf8 {
            switch byte {
            case UInt8(ascii: "\n"):
                line += 1
                indentation = 0
                atLineStart = true
                continue
            case UInt8(ascii: " ") where atLineStart:
                indentation += 1
                if indentation > 2 * Self.maximumNesting { return line }
                continue
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > Self.maximumNesting { return line }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth = max(0, depth - 1)
            default:
                break
            }
            atLineStart = false
        }
        return nil
    }

    private func failure(at node: Node, _ message: String) -> ParseFailure {
        ParseFailure(diagnostics: [Diagnostic(line: lines.line(of: node), message: message)])
    }

    private func clamped(_ yamlLine: Int) -> Int { lines.fileLine(yamlLine) }

    private func diagnostic(for error: YamlError) -> Diagnostic {
        switch error {
        case let .scanner(context, problem, mark, _), let .parser(context, problem, mark, _),
             let .composer(context, problem, mark, _):
            let detail = context.map { "\(problem) (\($0.text) on line \(clamped($0.mark.line)))" } ?? problem
            return Diagnostic(line: clamped(mark.line), message: "invalid YAML: \(detail)")
        case let .reader(problem, offset, _, _):
            let line = offset.map { yaml.prefix($0).utf8.count { $0 == UInt8(ascii: "\n") } + 1 } ?? 1
            return Diagnostic(line: clamped(line), message: "invalid YAML: \(problem); remove the control character")
        case let .duplicatedKeysInMapping(duplicates, context):
            return duplicateKeys(duplicates, firstLine: context.mark.line)
        default:
            return Diagnostic(line: lines.firstLine, message: "invalid YAML: \(error)")
        }
    }

    /// Yams reports a duplicated key at its first occurrence; the line worth pointing at is the
    /// repeat. This looks for the key again at the same indentation (plain or quoted) and names
    /// both lines; when it cannot tell, it names the first.
    private func duplicateKeys(_ keys: [String], firstLine yamlLine: Int) -> Diagnostic {
        let names = keys.map { "`\($0)`" }.joined(separator: ", ")
        let lines = yaml.split(separator: "\n", omittingEmptySubsequences: false)
        guard keys.count == 1, let key = keys.first, lines.indices.contains(yamlLine - 1) else {
            return Diagnostic(line: clamped(yamlLine), message: "the property \(names) appears more than once; keep one")
        }
        let indentation = lines[yamlLine - 1].prefix { $0 == " " }
        let spellings = [key, "\"\(key)\"", "'\(key)'"].map { indentation + $0 + ":" }
        let repeatIndex = lines.indices.dropFirst(yamlLine).first { index in
            spellings.contains { lines[index].hasPrefix($0) }
        }
        guard let repeatIndex else {
            return Diagnostic(line: clamped(yamlLine), message: "the property \(names) appears more than once; keep one")
        }
        return Diagnostic(line: clamped(repeatIndex + 1),
                          message: "the property \(names) appears again (first on line \(clamped(yamlLine))); keep one")
    }
}

/// Maps lines of the frontmatter YAML to lines of the file.
struct YAMLLineMap {
    /// The file line of the YAML's first line.
    let firstLine: Int
    /// The closing fence's line, where errors at the very end of the YAML are reported.
    let lastLine: Int

    func fileLine(_ yamlLine: Int) -> Int {
        min(max(yamlLine, 1) + firstLine - 1, lastLine)
    }

    func line(of node: Node) -> Int {
        fileLine(node.mark?.line ?? 1)
    }
}

extension Node {
    /// "list", "mapping" or "value", for messages.
    var kindName: String {
        switch self {
        case .scalar: "value"
        case .sequence: "list"
        case .mapping: "mapping"
        case .alias: "alias"
        }
    }
}
