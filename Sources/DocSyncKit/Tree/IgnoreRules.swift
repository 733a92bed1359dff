import Foundation

/// `.docsyncignore` patterns, gitignore syntax: `#` comments, `!` negation, a trailing
/// `/` matches folders only, a `/` elsewhere anchors the pattern at the root, `*`, `?`,
/// `[...]` and `**` glob. The last matching pattern decides.
public struct IgnoreRules: Sendable {
    struct Rule: Sendable {
        var pattern: [UInt8]
        var negated: Bool
        var directoryOnly: Bool
        var anchored: Bool
    }

    private var rules: [Rule] = []

    public init(text: String) {
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            var line = String(rawLine)
            if line.hasSuffix("\r") { line.removeLast() }
            while line.hasSuffix(" ") && !line.hasSuffix("\\ ") { line.removeLast() }
            if line.isEmpty || line.hasPrefix("#") { continue }
            var rule = Rule(pattern: [], negated: false, directoryOnly: false, anchored: false)
            if line.hasPrefix("!") {
                rule.negated = true
                line.removeFirst()
            } else if line.hasPrefix("\\!") || line.hasPrefix("\\#") {
                line.removeFirst()
            }
            if line.hasSuffix("/") {
                rule.directoryOnly = true
                line.removeLast()
            }
            if line.hasPrefix("/") {
                rule.anchored = true
                line.removeFirst()
            } else if line.contains("/") && !line.hasPrefix("**/") {
                rule.anchored = true
            }
            if line.isEmpty { continue }
            rule.pattern = Array(line.utf8)
            rules.append(rule)
        }
    }

    public static func load(from path: String) -> IgnoreRules {
        guard let bytes = try? FileSystem.readFile(path) else { return IgnoreRules(text: "") }
        return IgnoreRules(text: String(decoding: bytes, as: UTF8.self))
    }

    public var isEmpty: Bool { rules.isEmpty }

    /// Whether the tree-relative `path` is ignored. Folders are checked on the way down
    /// by the walker, so an ignored folder's contents are never visited.
    public func isIgnored(_ path: String, isDirectory: Bool) -> Bool {
        // Most trees have no rules: asked once per file, this must cost nothing then.
        if rules.isEmpty { return false }
        return decision(path, isDirectory: isDirectory) ?? false
    }

    /// What the last rule matching `path` says (true: a plain pattern, false: a negated
    /// one), or nil when none matches.
    func decision(_ path: String, isDirectory: Bool) -> Bool? {
        var ignored: Bool?
        let full = Array(path.utf8)
        let name = full.lastIndex(of: UInt8(ascii: "/")).map { Array(full[($0 + 1)...]) } ?? full
        for rule in rules {
            if rule.directoryOnly && !isDirectory { continue }
            let matched =
                rule.anchored
                ? Glob.match(rule.pattern, full)
                : Glob.match(rule.pattern, name) || Glob.match(Array("**/".utf8) + rule.pattern, full)
            if matched { ignored = !rule.negated }
        }
        return ignored
    }
}

/// Glob matching on path bytes with gitignore's meaning of `*` (not across `/`) and `**`.
enum Glob {
    static func match(_ pattern: [UInt8], _ text: [UInt8]) -> Bool {
        match(pattern[...], text[...])
    }

    private static func match(_ p: ArraySlice<UInt8>, _ t: ArraySlice<UInt8>) -> Bool {
        var p = p, t = t
        while let c = p.first {
            switch c {
            case UInt8(ascii: "*"):
                return matchStar(p, t)
            case UInt8(ascii: "?"):
                guard let x = t.first, x != UInt8(ascii: "/") else { return false }
                p = p.dropFirst()
                t = t.dropFirst()
            case UInt8(ascii: "["):
                guard let x = t.first, let close = p.dropFirst(2).firstIndex(of: UInt8(ascii: "]")) else {
                    return false
                }
                guard bracket(p[(p.startIndex + 1)..<close], admits: x) else { return false }
                p = p[(close + 1)...]
                t = t.dropFirst()
            case UInt8(ascii: "\\") where p.count > 1:
                guard t.first == p[p.startIndex + 1] else { return false }
                p = p.dropFirst(2)
                t = t.dropFirst()
            default:
                guard t.first == c else { return false }
                p = p.dropFirst()
                t = t.dropFirst()
            }
        }
        return t.isEmpty
    }

    /// `p` starts with `*` or `**`: tries the rest of the pattern at every place the
    /// star may stop (`*` not across `/`, `**` only at the start of a path segment).
    private static func matchStar(_ p: ArraySlice<UInt8>, _ t: ArraySlice<UInt8>) -> Bool {
        if p.starts(with: Array("**".utf8)) {
            var rest = p.dropFirst(2)
            if rest.first == UInt8(ascii: "/") { rest = rest.dropFirst() }
            if rest.isEmpty { return true }
            var i = t.startIndex
            while true {
                if match(rest, t[i...]) { return true }
                guard let slash = t[i...].firstIndex(of: UInt8(ascii: "/")) else { return false }
                i = slash + 1
            }
        }
        let rest = p.dropFirst()
        var i = t.startIndex
        while true {
            if match(rest, t[i...]) { return true }
            if i == t.endIndex || t[i] == UInt8(ascii: "/") { return false }
            i += 1
        }
    }

    /// Whether the inside of a `[…]` (ranges like `a-z`, negated by a leading `!` or `^`)
    /// admits byte `x`.
    static func bracket(_ inside: ArraySlice<UInt8>, admits x: UInt8) -> Bool {
        var set = inside
        var negate = false
        if let f = set.first, f == UInt8(ascii: "!") || f == UInt8(ascii: "^") {
            negate = true
            set = set.dropFirst()
        }
        var found = false
        var i = set.startIndex
        while i < set.endIndex {
            if i + 2 < set.endIndex, set[i + 1] == UInt8(ascii: "-") {
                if set[i] <= x && x <= set[i + 2] { found = true }
                i += 3
            } else {
                if set[i] == x { found = true }
                i += 1
            }
        }
        return found != negate
    }
}
