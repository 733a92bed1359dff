import DocSyncJSON
import DocSyncSchema
import Foundation

/// Which JSON Schema each record must satisfy, and what a record breaks.
///
/// A record's own `"$schema"` member naming a file wins; otherwise the last
/// `schema.<glob>` key of the config whose glob matches the record's path. Schema files
/// are read from disk and compiled once per run (a `$ref` to a file beside the schema is
/// read too); nothing is ever fetched from the network, so a `$schema` that is a URL names
/// no schema here. Decisions are values: `verdict(…)` says which schema applies and every
/// error, and the caller decides what a failing record means (held in sync, exit 1 in check).
public final class RecordSchemas: @unchecked Sendable {
    /// What checking one record found.
    public struct Verdict: Sendable, Equatable {
        /// The schema file that applies (as the record or the config names it), nil for none.
        public var schema: String?
        /// Every error, as `path: /pointer: reason`; a schema that cannot be read or
        /// compiled is one error of each record it applies to.
        public var problems: [DocumentProblem] = []
        /// Why the record's `$schema` member was not followed, if it was not.
        public var note: String?
    }

    private let root: String
    private let rules: [(glob: [UInt8], schema: String)]
    private let insideTree: Bool
    /// `docsync check --schema FILE`: this schema for every record, whatever names another.
    private let forced: String?
    private let lock = NSLock()
    private var compiled: [String: Result<Schema, CompileProblem>] = [:]

    struct CompileProblem: Error, Equatable { var message: String }

    /// - Parameters:
    ///   - root: the tree's root (absolute); schema paths of the config are relative to it.
    ///   - insideTree: true for a docsync tree, whose `$schema` members must name files
    ///     inside it (every replica must check a record against the same schema).
    ///   - forced: an absolute schema path that applies to every record.
    public init(root: String, config: Config, insideTree: Bool = true, forced: String? = nil) {
        self.root = root
        self.forced = forced.map(Self.normalized)
        self.rules = config.schemaRules.map { (Array($0.glob.utf8), $0.schema) }
        self.insideTree = insideTree
    }

    /// The schema file for a record at `path` (tree-relative), and why a `$schema`
    /// member was not followed. `member` is the record's top-level `"$schema"` string.
    public func assignment(for path: String, member: String?) -> (
        schema: String?, absolute: String?, note: String?, problem: String?
    ) {
        let recordAbsolute = Self.normalized(root + "/" + path)
        // A schema file is not checked against itself (it is in the tree too, or staged).
        if let forced { return forced == recordAbsolute ? (nil, nil, nil, nil) : (forced, forced, nil, nil) }
        var note: String?
        if let member {
            if member.contains("://") || member.hasPrefix("urn:") {
                // A file that names a JSON Schema meta-schema is a schema, not a record.
                let metaSchema =
                    member.hasPrefix("https://json-schema.org/") || member.hasPrefix("http://json-schema.org/")
                note =
                    metaSchema
                    ? nil
                    : "its \"$schema\" is a URL, which docsync does not fetch (map the record with schema.<glob> instead)"
            } else {
                let folder = (path as NSString).deletingLastPathComponent
                let joined = member.hasPrefix("/") ? member : (folder.isEmpty ? member : folder + "/" + member)
                let absolute = member.hasPrefix("/") ? Self.normalized(member) : Self.normalized(root + "/" + joined)
                if insideTree, !(absolute + "/").hasPrefix(Self.normalized(root) + "/") {
                    return (
                        member, nil, nil,
                        "its \"$schema\" \(member) is outside the tree (another replica could not check it)"
                    )
                }
                return (member, absolute, nil, nil)
            }
        }
        let bytes = Array(path.utf8)
        guard let rule = rules.last(where: { Glob.match($0.glob, bytes) }) else { return (nil, nil, note, nil) }
        let absolute =
            rule.schema.hasPrefix("/") ? Self.normalized(rule.schema) : Self.normalized(root + "/" + rule.schema)
        // A schema file that a glob also matches is not checked against itself.
        if absolute == recordAbsolute { return (nil, nil, note, nil) }
        return (rule.schema, absolute, note, nil)
    }

    /// Checks one record (its parsed value and `$schema` member, if any).
    public func verdict(path: String, value: JSONValue) -> Verdict {
        var member: String?
        if case .object(let members) = value, case .string(let text) = members["$schema"] { member = text }
        let (schema, absolute, note, problem) = assignment(for: path, member: member)
        var verdict = Verdict(schema: schema, note: note)
        if let problem {
            verdict.problems = [DocumentProblem(path: path, reason: problem)]
            return verdict
        }
        guard let absolute, let schema else { return verdict }
        switch compiledSchema(absolute) {
        case .failure(let failure):
            verdict.problems = [DocumentProblem(path: path, reason: "schema \(schema): \(failure.message)")]
        case .success(let compiled):
            verdict.problems = compiled.validate(value).map {
                DocumentProblem(path: path, pointer: $0.instancePath, reason: $0.reason)
            }
        }
        return verdict
    }

    /// Reads and checks the record's bytes: invalid JSON is one problem with its line and
    /// column (as the scanner reports it).
    public func verdict(path: String, bytes: [UInt8]) -> Verdict {
        do {
            return verdict(path: path, value: try JSONValueParser.parse(bytes))
        } catch {
            return Verdict(
                schema: nil,
                problems: [DocumentProblem(path: path, line: error.line, column: error.column, reason: error.reason)])
        }
    }

    /// Whether some record can have a schema without naming it itself.
    public var hasRules: Bool { !rules.isEmpty || forced != nil }

    /// False when no schema can apply to these bytes (no `schema.<glob>` key, and no
    /// `"$schema"` in them), so they need not be parsed.
    public func mightApply(to bytes: [UInt8]) -> Bool {
        hasRules || Self.contains(bytes, Self.schemaKey)
    }

    private static let schemaKey = Array("\"$schema\"".utf8)

    private static func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
        guard bytes.count >= needle.count else { return false }
        var i = 0
        let last = bytes.count - needle.count
        while i <= last {
            if bytes[i] == needle[0], bytes[i..<(i + needle.count)].elementsEqual(needle) { return true }
            i += 1
        }
        return false
    }

    /// Compiles (once) the schema file at `absolute`; a problem says what is wrong with it.
    public func checkSchemaFile(_ absolute: String) -> String? {
        if case .failure(let failure) = compiledSchema(Self.normalized(absolute)) { return failure.message }
        return nil
    }

    private func compiledSchema(_ absolute: String) -> Result<Schema, CompileProblem> {
        lock.lock()
        defer { lock.unlock() }
        if let known = compiled[absolute] { return known }
        let result = Self.compile(absolute)
        compiled[absolute] = result
        return result
    }

    /// Reads the schema and, while a `$ref` names a file that has not been read, reads
    /// that file too and compiles again.
    private static func compile(_ absolute: String) -> Result<Schema, CompileProblem> {
        func load(_ file: String) -> Result<JSONValue, CompileProblem> {
            let bytes: [UInt8]
            do { bytes = try FileSystem.readFile(file) } catch {
                return .failure(
                    CompileProblem(
                        message: FileSystem.exists(file)
                            ? "cannot read \(file): \(error.localizedDescription)" : "no such file \(file)"))
            }
            do { return .success(try JSONValueParser.parse(bytes)) } catch {
                return .failure(CompileProblem(message: "\(file):\(error.line):\(error.column): \(error.reason)"))
            }
        }
        let document: JSONValue
        switch load(absolute) {
        case .failure(let problem): return .failure(problem)
        case .success(let value): document = value
        }
        var remotes: [String: JSONValue] = [:]
        while true {
            do {
                return .success(try Schema(document, remotes: remotes, baseURI: fileURI(absolute)))
            } catch .unresolvedReference(let reference) {
                let resource =
                    reference.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(
                        String.init) ?? reference
                guard remotes[resource] == nil, remotes.count < 100, let file = path(ofFileURI: resource) else {
                    return .failure(CompileProblem(message: "cannot resolve $ref \(reference)"))
                }
                switch load(file) {
                case .failure(let problem):
                    return .failure(CompileProblem(message: "$ref \(reference): \(problem.message)"))
                case .success(let value): remotes[resource] = value
                }
            } catch {
                return .failure(CompileProblem(message: error.description))
            }
        }
    }

    /// `file:///a/b%20c.json` for `/a/b c.json`.
    static func fileURI(_ absolute: String) -> String {
        var text = "file://"
        for byte in absolute.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "/"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                text.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                text += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return text
    }

    static func path(ofFileURI uri: String) -> String? {
        guard uri.hasPrefix("file:///") else { return nil }
        return String(uri.dropFirst("file://".count)).removingPercentEncoding
    }

    static func normalized(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            if part == "." { continue }
            if part == ".." {
                _ = parts.popLast()
                continue
            }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
