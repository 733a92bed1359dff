// A semantic diff of two JSON values by JSON pointer (`docsync diff`): what changed, was
// added or was removed, at the deepest place that says it. Objects are compared key by
// key; arrays whose elements have an identity (as the merge finds one: id, refId, uuid,
// key) element by element by identity, other arrays by a longest common subsequence, an
// element changed in place shown inside it. Recursive, to `maxDepth` levels.

public enum JSONDiff {
    public enum Kind: String, Sendable, Codable { case added, removed, changed }

    public struct Change: Sendable, Equatable, Codable {
        /// RFC 6901 pointer ("" for the whole value).
        public var pointer: String
        public var kind: Kind
        /// Compact JSON text of the old and new value (nil where there is none).
        public var old: String?
        public var new: String?

        public init(pointer: String, kind: Kind, old: String?, new: String?) {
            self.pointer = pointer
            self.kind = kind
            self.old = old
            self.new = new
        }

        /// `~ /items/1/qty: 1 → 5`, `+ /tags/2: "c"`, `- /note: "x"`.
        public var line: String {
            let at = pointer.isEmpty ? "(root)" : pointer
            switch kind {
            case .added: return "+ \(at): \(new ?? "")"
            case .removed: return "- \(at): \(old ?? "")"
            case .changed: return "~ \(at): \(old ?? "") → \(new ?? "")"
            }
        }
    }

    public static func changes(
        from old: JSONValue, to new: JSONValue, arrayKeys: [String] = ["id", "refId", "uuid", "key"]
    ) -> [Change] {
        var out: [Change] = []
        diff(old, new, pointer: "", depth: 0, keys: arrayKeys, into: &out)
        return out
    }

    private static func diff(
        _ a: JSONValue, _ b: JSONValue, pointer at: String, depth: Int, keys: [String], into out: inout [Change]
    ) {
        if a == b { return }
        switch (a, b) {
        case let (.object(x), .object(y)) where depth < maxDepth:
            for (key, value) in x {
                let place = JSONPointer.appending(key, to: at)
                if let other = y[key] {
                    diff(value, other, pointer: place, depth: depth + 1, keys: keys, into: &out)
                } else {
                    out.append(
                        Change(pointer: place, kind: .removed, old: JSONValueWriter.compactString(value), new: nil))
                }
            }
            for (key, value) in y where x[key] == nil {
                out.append(
                    Change(
                        pointer: JSONPointer.appending(key, to: at), kind: .added, old: nil,
                        new: JSONValueWriter.compactString(value)))
            }
        case let (.array(x), .array(y)) where depth < maxDepth:
            out += arrayChanges(x, y, pointer: at, depth: depth, keys: keys)
        default:
            out.append(
                Change(
                    pointer: at, kind: .changed, old: JSONValueWriter.compactString(a),
                    new: JSONValueWriter.compactString(b)))
        }
    }

    /// Deeper than this, a changed value is shown whole (a bound on recursion).
    static let maxDepth = 1_000

    private static func arrayChanges(_ x: [JSONValue], _ y: [JSONValue], pointer: String, depth: Int, keys: [String])
        -> [Change]
    {
        var out: [Change] = []
        if let key = keys.first(where: { Merger.isIdentity($0, in: [x, y]) }) {
            recordChanges(x, y, key: key, pointer: pointer, depth: depth, keys: keys, into: &out)
        } else {
            sequenceChanges(x, y, pointer: pointer, depth: depth, keys: keys, into: &out)
        }
        return out
    }

    /// Elements matched by their identity member: a matched pair is diffed (at its new
    /// index), the rest are removed or added.
    private static func recordChanges(
        _ x: [JSONValue], _ y: [JSONValue], key: String, pointer: String, depth: Int, keys: [String],
        into out: inout [Change]
    ) {
        let newIndex = Dictionary(
            uniqueKeysWithValues: y.enumerated().map { (Merger.identity(of: $1, key: key)!, $0) })
        let oldIds = Set(x.map { Merger.identity(of: $0, key: key)! })
        for (i, element) in x.enumerated() {
            let id = Merger.identity(of: element, key: key)!
            if let j = newIndex[id] {
                diff(element, y[j], pointer: pointer + "/\(j)", depth: depth + 1, keys: keys, into: &out)
            } else {
                out.append(
                    Change(
                        pointer: pointer + "/\(i)", kind: .removed, old: JSONValueWriter.compactString(element),
                        new: nil))
            }
        }
        for (j, element) in y.enumerated() where !oldIds.contains(Merger.identity(of: element, key: key)!) {
            out.append(
                Change(
                    pointer: pointer + "/\(j)", kind: .added, old: nil, new: JSONValueWriter.compactString(element))
            )
        }
    }

    /// Elements matched as a sequence (equal values in order): between two matched pairs,
    /// the removed and added elements are diffed pairwise, and the surplus of either is
    /// removed or added.
    private static func sequenceChanges(
        _ x: [JSONValue], _ y: [JSONValue], pointer: String, depth: Int, keys: [String], into out: inout [Change]
    ) {
        var tokens = Tokens()
        let match = SequenceMerge.matches(tokens.of(x), tokens.of(y))
        var j = 0
        var i = 0
        while i <= x.count {
            // The stretch up to the next matched pair (or the ends).
            var k = i
            while k < x.count, match[k] == nil { k += 1 }
            let end = k < x.count ? match[k]! : y.count
            let removed = Array(i..<k), added = Array(j..<end)
            let paired = min(removed.count, added.count)
            for p in 0..<paired {
                diff(
                    x[removed[p]], y[added[p]], pointer: pointer + "/\(added[p])", depth: depth + 1, keys: keys,
                    into: &out)
            }
            for r in removed.dropFirst(paired) {
                out.append(
                    Change(
                        pointer: pointer + "/\(r)", kind: .removed, old: JSONValueWriter.compactString(x[r]), new: nil))
            }
            for a in added.dropFirst(paired) {
                out.append(
                    Change(pointer: pointer + "/\(a)", kind: .added, old: nil, new: JSONValueWriter.compactString(y[a]))
                )
            }
            if k >= x.count { break }
            i = k + 1
            j = end + 1
        }
    }
}
