import DocSyncJSON
import Foundation

/// `docsync check`: every way the given records (or the whole tree) break the rules a
/// sync would hold them to — valid JSON, a JSON object, a string `refId`, and their JSON
/// Schema — without syncing or writing anything. Works outside a docsync tree too (a git
/// repository's pre-commit hook, a CI step), where only `$schema` members and `--schema`
/// name schemas.
public enum RecordCheck {
    public struct Report: Codable, Sendable, Equatable {
        /// The docsync tree the records are in (the current folder's when they are in
        /// several), nil outside one.
        public var tree: String?
        public var checked = 0
        /// How many records had a schema to satisfy.
        public var withSchema = 0
        /// How many records have at least one problem.
        public var invalid = 0
        /// Every problem, by path (paths relative to the directory check ran in).
        public var problems: [DocumentProblem] = []
        /// Said of records that were checked, but not as they may expect (a `$schema` URL).
        public var notes: [String] = []
    }

    /// What `check` was asked to do.
    public struct Request: Sendable {
        /// The directory paths are relative to (and where a tree is looked for).
        public var directory: String
        /// Files and folders; none: the whole tree (or, outside a tree, `directory`).
        public var paths: [String] = []
        /// `--schema FILE`: the schema for every record, whatever names another.
        public var schema: String?

        public init(directory: String, paths: [String] = [], schema: String? = nil) {
            self.directory = directory
            self.paths = paths
            self.schema = schema
        }
    }

    public struct Failure: Error, LocalizedError {
        public var message: String
        public var errorDescription: String? { message }
    }

    /// One record to check: where it is, its path for schema globs, and how it is shown.
    struct Target {
        var absolute: String
        var treePath: String
        var display: String
    }

    public static func run(_ request: Request) throws -> Report {
        let directory = FileSystem.absolute(request.directory)
        // Each path is checked by the rules of the tree it is in (its config, its ignore
        // rules, its schema globs), found from the path, not from where check runs: a CI
        // step or a hook in a parent folder names a tree from outside it.
        var groups: [(layout: TreeLayout?, paths: [String])] = []
        func add(_ path: String?, in layout: TreeLayout?) {
            if let i = groups.firstIndex(where: { $0.layout?.root == layout?.root }) {
                if let path { groups[i].paths.append(path) }
            } else {
                groups.append((layout, path.map { [$0] } ?? []))
            }
        }
        if request.paths.isEmpty { add(nil, in: TreeLayout.find(from: directory)) }
        for path in request.paths {
            let absolute = FileSystem.absolute(path, relativeTo: directory)
            let folder = FileSystem.isDirectory(absolute) ? absolute : (absolute as NSString).deletingLastPathComponent
            add(path, in: TreeLayout.find(from: folder))
        }

        var report = Report(tree: groups.count == 1 ? groups[0].layout?.root : TreeLayout.find(from: directory)?.root)
        // A folder walked may hold other trees (a repository with a docsync tree in it):
        // their records are checked too, each by its own tree's rules.
        var next = 0
        while next < groups.count {
            let group = groups[next]
            next += 1
            let (part, nestedTrees) = try check(
                group.paths, in: group.layout, directory: directory, schema: request.schema)
            report.checked += part.checked
            report.withSchema += part.withSchema
            report.invalid += part.invalid
            report.problems += part.problems
            report.notes += part.notes
            for nested in nestedTrees {
                let known = groups.indices.filter { groups[$0].layout?.root == nested }
                if let waiting = known.first(where: { $0 >= next }) {
                    groups[waiting].paths.append(nested)
                } else if !known.contains(where: { groups[$0].paths.isEmpty || groups[$0].paths.contains(nested) }) {
                    groups.append((TreeLayout(root: nested), [nested]))
                }
            }
        }
        return report
    }

    /// `paths` (none: the whole tree, or `directory` outside one), all in the tree of
    /// `layout` (nil: in no tree), shown relative to `directory`.
    static func check(_ paths: [String], in layout: TreeLayout?, directory: String, schema: String?) throws -> (
        Report, nestedTrees: [String]
    ) {
        let root = layout?.root ?? directory
        let config = try layout.map { try Config.load(from: $0.config) } ?? Config()
        let forced = schema.map { FileSystem.absolute($0, relativeTo: directory) }
        let schemas = RecordSchemas(root: root, config: config, insideTree: layout != nil, forced: forced)
        if let forced, let problem = schemas.checkSchemaFile(forced) {
            throw Failure(message: "--schema \(schema ?? forced): \(problem)")
        }
        var report = Report(tree: layout?.root)
        let (targets, missing, nested) = targets(
            paths, directory: directory, root: root,
            ignore: layout.map { IgnoreRules.load(from: $0.ignoreFile) } ?? IgnoreRules(text: ""))
        report.problems += missing
        report.invalid += missing.count

        // Both cores: reading and validating dominate, and a compiled schema is shared.
        let results = Results(count: targets.count)
        let chunk = 256
        DispatchQueue.concurrentPerform(iterations: (targets.count + chunk - 1) / chunk) { c in
            let range = c * chunk..<min(targets.count, (c + 1) * chunk)
            results.store(range.map { check(targets[$0], schemas: schemas) }, at: range)
        }
        let verdicts = results.verdicts
        for case let verdict? in verdicts {
            report.checked += 1
            if verdict.schema != nil { report.withSchema += 1 }
            if !verdict.problems.isEmpty { report.invalid += 1 }
            report.problems += verdict.problems
        }
        for (target, verdict) in zip(targets, verdicts) {
            if let note = verdict?.note { report.notes.append("\(target.display): \(note)") }
        }
        return (report, nested)
    }

    /// Verdicts filled in by concurrent workers, each its own range, under a lock.
    private final class Results: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var verdicts: [RecordSchemas.Verdict?]
        init(count: Int) { verdicts = Array(repeating: nil, count: count) }
        func store(_ found: [RecordSchemas.Verdict], at range: Range<Int>) {
            lock.lock()
            defer { lock.unlock() }
            verdicts.replaceSubrange(range, with: found.map(Optional.some))
        }
    }

    /// The checks a sync makes of a file it records, in the same words.
    static func check(_ target: Target, schemas: RecordSchemas) -> RecordSchemas.Verdict {
        let bytes: [UInt8]
        do { bytes = try FileSystem.readFile(target.absolute) } catch {
            return .init(
                schema: nil,
                problems: [DocumentProblem(path: target.display, reason: "cannot read: \(error.localizedDescription)")])
        }
        // With a schema to check, one parse gives both the syntax check and the value.
        if schemas.mightApply(to: bytes), let value = try? JSONValueParser.parse(bytes),
            case .object(let members) = value
        {
            var verdict = schemas.verdict(path: target.treePath, value: value)
            for i in verdict.problems.indices { verdict.problems[i].path = target.display }
            if let refId = members["refId"], case .string = refId {
            } else if members["refId"] != nil {
                verdict.problems.insert(
                    DocumentProblem(path: target.display, reason: "\"refId\" must be a string"), at: 0)
            }
            return verdict
        }
        // Otherwise the scanner: the same syntax errors, in the same words, as a sync.
        let scanned: ScannedDocument
        do { scanned = try JSONScanner.scanDocument(bytes) } catch {
            return .init(
                schema: nil,
                problems: [
                    DocumentProblem(path: target.display, line: error.line, column: error.column, reason: error.reason)
                ])
        }
        var problems: [DocumentProblem] = []
        if let member = scanned.member(named: "refId"), member.kind != .string {
            problems.append(DocumentProblem(path: target.display, reason: "\"refId\" must be a string"))
        }
        guard schemas.mightApply(to: bytes) else { return .init(schema: nil, problems: problems) }
        // Scanned but not parsed (too deep for values): the schema check says why, as in a sync.
        var verdict = schemas.verdict(path: target.treePath, bytes: bytes)
        for i in verdict.problems.indices { verdict.problems[i].path = target.display }
        verdict.problems = problems + verdict.problems
        return verdict
    }

    /// The records named by `paths` (files as given, folders walked for `*.json` with the
    /// tree's ignore rules), a problem for each path that is not there, and the other
    /// trees found in the folders walked (absolute roots).
    static func targets(_ paths: [String], directory: String, root: String, ignore: IgnoreRules) -> (
        [Target], [DocumentProblem], [String]
    ) {
        var targets: [Target] = []
        var missing: [DocumentProblem] = []
        var nested: [String] = []
        var seen = Set<String>()
        func add(_ absolute: String) {
            guard seen.insert(absolute).inserted else { return }
            targets.append(
                Target(
                    absolute: absolute, treePath: relative(absolute, from: root),
                    display: relative(absolute, from: directory)))
        }
        func walk(_ folder: String) {
            // Inside the tree, from its root: ignore rules are written relative to it.
            let inTree = folder == root || folder.hasPrefix(root + "/")
            let start = inTree ? root : folder
            let prefix = folder == start ? "" : String(folder.dropFirst(start.count + 1)) + "/"
            let listing = TreeWalker(root: start, ignore: inTree ? ignore : IgnoreRules(text: "")).walk()
            for entry in listing.files where entry.path.hasPrefix(prefix) {
                add(start + "/" + entry.path)
            }
            // The walker passes over folders with a `.docsync/`; a tree among them is checked
            // apart (a folder remote is not the user's records).
            for skipped in listing.skipped where prefix.isEmpty || skipped.path.hasPrefix(prefix) {
                let absolute = start + "/" + skipped.path
                if TreeLayout.find(from: absolute)?.root == absolute { nested.append(absolute) }
            }
        }
        if paths.isEmpty { walk(root) }
        for path in paths {
            let absolute = FileSystem.absolute(path, relativeTo: directory)
            if FileSystem.isDirectory(absolute) {
                walk(absolute)
            } else if FileSystem.exists(absolute) {
                add(absolute)
            } else {
                missing.append(DocumentProblem(path: path, reason: "no such file"))
            }
        }
        return (targets, missing, nested)
    }

    /// `absolute` relative to `base` ("../x.json" when it is beside it), for display.
    static func relative(_ absolute: String, from base: String) -> String {
        // The common case (a file under the base) without splitting: this runs per record.
        if absolute.hasPrefix(base), absolute.utf8.count > base.utf8.count {
            let rest = absolute.utf8.dropFirst(base.utf8.count)
            if base == "/" { return String(Substring(rest)) }
            if rest.first == UInt8(ascii: "/") { return String(Substring(rest.dropFirst())) }
        }
        let target = absolute.split(separator: "/")
        let from = base.split(separator: "/")
        var common = 0
        while common < min(target.count, from.count), target[common] == from[common] { common += 1 }
        let up = Array(repeating: "..", count: from.count - common)
        let parts = up + target[common...].map(String.init)
        return parts.isEmpty ? "." : parts.joined(separator: "/")
    }
}
