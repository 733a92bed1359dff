import Foundation

/// The parts of the remote a sparse replica keeps (`docsync sparse`), from
/// `.docsync/sparse`: one pattern per line, gitignore syntax (`contacts/` a folder and
/// everything in it, `tasks/2026/*.json`, `!contacts/old/` to leave a part out). A path is
/// selected when the last pattern that matches it, or one of its folders, is not negated.
/// No file: the replica keeps everything. Per replica, never synced.
public struct SparseSelection: Sendable, Equatable {
    /// The patterns as the user gave them, in order.
    public private(set) var patterns: [String]
    private var rules: IgnoreRules

    public init(patterns: [String]) {
        self.patterns = patterns
        rules = IgnoreRules(text: patterns.joined(separator: "\n"))
    }

    public static func == (a: SparseSelection, b: SparseSelection) -> Bool { a.patterns == b.patterns }

    /// Whether the tree-relative document `path` is selected.
    public func contains(_ path: String) -> Bool {
        var selected = false
        var end = path.startIndex
        // Each folder on the way down, then the file: a rule that matches a deeper level
        // decides over one that matched a folder above it.
        while let slash = path[end...].firstIndex(of: "/") {
            if let decided = rules.decision(String(path[..<slash]), isDirectory: true) { selected = decided }
            end = path.index(after: slash)
        }
        if let decided = rules.decision(path, isDirectory: false) { selected = decided }
        return selected
    }

    /// A pattern as given on the command line, checked and made canonical: relative to the
    /// tree's root, no `./`, a folder spelt with its trailing `/`. Returns nil for text no
    /// rule can be made of.
    public static func canonical(_ pattern: String) -> String? {
        var p = pattern.trimmingCharacters(in: .whitespaces)
        while p.hasPrefix("./") { p.removeFirst(2) }
        if p.isEmpty || p == "." || p == "/" || p.contains("\n") || p.hasPrefix("#") { return nil }
        if p.contains("/../") || p.hasPrefix("../") || p == ".." { return nil }
        // A path without globs names that folder or file at the root, as a user means
        // `contacts/` (in gitignore syntax it would also match `archive/contacts/`).
        let negated = p.hasPrefix("!")
        var body = negated ? String(p.dropFirst()) : p
        if body.isEmpty || body == "/" { return nil }
        if !body.contains(where: { "*?[".contains($0) }) && !body.hasPrefix("/") { body = "/" + body }
        return (negated ? "!" : "") + body
    }

    /// Whether a replica whose record names `patterns` (nil: a full replica) may hold the
    /// document a tombstone at `path` deleted, so gc waits for it to read that tombstone.
    /// Why a replica that does not select the path need not be waited for: a document it
    /// held there (moved out and deleted since, before it read either) is still deleted
    /// when it meets the remote again, as for any replica whose tombstones went by age (a
    /// snapshot no longer names it).
    public static func mayHold(_ patterns: [String]?, _ path: String?) -> Bool {
        guard let patterns, let path else { return true }
        return SparseSelection(patterns: patterns).contains(path)
    }

    // MARK: On disk

    /// The selection of the tree at `layout` (nil: the tree keeps everything).
    public static func load(_ layout: TreeLayout) throws -> SparseSelection? {
        guard FileSystem.exists(layout.sparseFile) else { return nil }
        let bytes = try FileSystem.readFile(layout.sparseFile)
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        return SparseSelection(patterns: lines.filter { !$0.isEmpty && !$0.hasPrefix("#") })
    }

    /// Writes `selection` (nil: removes the file, the tree keeps everything again).
    public static func save(_ selection: SparseSelection?, _ layout: TreeLayout) throws {
        guard let selection else {
            if FileSystem.exists(layout.sparseFile) { try FileManager.default.removeItem(atPath: layout.sparseFile) }
            return
        }
        let header = "# docsync sparse: the parts of the remote this replica keeps (see `docsync sparse --help`)\n"
        try FileSystem.writeAtomically(
            layout.sparseFile, Array((header + selection.patterns.map { $0 + "\n" }.joined()).utf8))
    }
}
