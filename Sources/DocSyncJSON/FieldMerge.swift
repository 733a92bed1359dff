// Three-way, field-by-field merge of JSON documents.
//
// Rules, applied at every key of every object that is an object on both sides:
// - unchanged on one side (equal to the base, or absent from both): the other side's
//   version is taken, whether it changed, was added or was removed;
// - the same on both sides (including removed on both): taken, never a conflict;
// - an object on both sides (and not equal to the base on either): merged key by key,
//   recursively; if the base there is absent or not an object, its keys count as added
//   on both sides;
// - removed on one side, changed on the other: the change wins, reported as a conflict
//   whose `taken` is the changing side;
// - changed differently on both sides (including added on both with different values,
//   and an object on one side against anything else on the other): the `collisions`
//   side wins, reported as a conflict.
// - an array on both sides, changed differently: merged element by element (as a set, by
//   an identity member, or as a sequence; see ArrayMerge.swift and docs/SYNC.md#arrays).
// Strings, numbers, booleans and null are atomic. Values compare exactly
// (`JSONValue.==`: numbers by their text, so 1.0 and 1 differ).
//
// Key order of a merged object: local's keys in local's order, then the keys only remote
// has, in remote's order (removed keys just drop out). An object local did not touch at
// all (same keys in the same order and equal values as the base) is taken from remote
// verbatim, remote's key order included. The root is merged the same way; if it is not
// an object on both sides, it is one atomic value.
//
// Counters: at a declared counter path where both sides changed the value and base (or
// 0 when the base has no value there), local and remote are all numbers, the result is
// local + remote − base, computed exactly in decimal (see `ExactDecimal`). Otherwise the
// path merges by the rules above (so a collision is reported as usual).
//
// Reserved paths (by default the top-level "refId" and "changesetId") are not merged:
// the result keeps local's value (remote's if local has none) in its place, for the
// caller to overwrite; they never produce conflicts.
//
// Paths are dotted key lists: `address.city`. In a key, "~" is written "~0" and "." is
// written "~1" (JSON Pointer's escaping, with "." for "/"): the key "a.b" under "x" is
// `x.a~1b`. The root is "" (so is a top-level key that is the empty string).
//
// Everything is iterative: values nested 100,000 levels deep merge without recursion.

public enum FieldMerge {
    public enum Winner: String, Sendable, Codable {
        case local, remote

        /// The other side.
        public var other: Winner { self == .local ? .remote : .local }
    }

    public struct FieldConflict: Sendable, Equatable, Codable {
        /// Dotted path of the field (see the file header for escaping); "" for the root.
        public var path: String
        /// Compact JSON text of each side's value there; nil when that side has none.
        public var base: String?
        public var local: String?
        public var remote: String?
        /// Whose value the merged document holds.
        public var taken: Winner

        public init(path: String, base: String?, local: String?, remote: String?, taken: Winner) {
            self.path = path
            self.base = base
            self.local = local
            self.remote = remote
            self.taken = taken
        }
    }

    public struct Result: Sendable, Equatable {
        public var merged: JSONValue
        /// In merge order (depth first, in the merged key order).
        public var conflicts: [FieldConflict]

        public init(merged: JSONValue, conflicts: [FieldConflict]) {
            self.merged = merged
            self.conflicts = conflicts
        }
    }

    /// Merges `local` and `remote` against their common `base` (see the file header).
    /// - Parameters:
    ///   - base: the last version both sides had; nil when both sides created the document.
    ///   - collisions: who wins a field changed differently on both sides.
    ///   - counters: dotted paths of numeric fields merged by adding both sides' deltas to
    ///     the base (base 1, local 11, remote 6 → 16).
    ///   - reserved: dotted paths left alone for the caller to set.
    ///   - arrays: which arrays are sets, and which identity member others are matched by.
    public static func merge(
        base: JSONValue?, local: JSONValue, remote: JSONValue, collisions: Winner,
        counters: Set<String>, arrays: ArrayRules = ArrayRules(),
        ignoring reserved: Set<String> = ["refId", "changesetId"]
    ) -> Result {
        var trie = PathTrie()
        for path in counters { trie.insert(keys(inPath: path), flag: PathTrie.counter) }
        for path in reserved { trie.insert(keys(inPath: path), flag: PathTrie.reserved) }
        for path in arrays.sets { trie.insert(keys(inPath: path), flag: PathTrie.set) }
        for (path, key) in arrays.keys { trie.insert(keys(inPath: path), flag: 0, arrayKey: key) }
        var merger = Merger(collisions: collisions, trie: trie)
        merger.countsFromZero = base != nil
        let merged = merger.run(base: base, local: local, remote: remote)
        return Result(merged: merged, conflicts: merger.conflicts)
    }

    /// How arrays changed on both sides are merged (docs/SYNC.md#arrays). Paths are dotted
    /// like counters', `*` matching any one key or array element.
    public struct ArrayRules: Sendable, Equatable {
        /// Arrays merged as sets (`merge.sets`).
        public var sets: Set<String>
        /// The identity member of the elements of arrays at these paths (`merge.arrayKey.<path>`).
        public var keys: [String: String]

        public init(sets: Set<String> = [], keys: [String: String] = [:]) {
            self.sets = sets
            self.keys = keys
        }
    }

    /// The dotted path of a key list: `["address", "a.b"]` → `address.a~1b`.
    public static func path(_ keys: [String]) -> String {
        keys.map(escape).joined(separator: ".")
    }

    /// The key list of a dotted path: `address.a~1b` → `["address", "a.b"]`; "" → [] (the root).
    public static func keys(inPath path: String) -> [String] {
        guard !path.isEmpty else { return [] }
        return path.split(separator: ".", omittingEmptySubsequences: false).map(unescape)
    }

    private static func escape(_ key: String) -> String {
        guard key.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: ".") }) else { return key }
        var out = ""
        for ch in key.unicodeScalars {
            switch ch {
            case "~": out += "~0"
            case ".": out += "~1"
            default: out.unicodeScalars.append(ch)
            }
        }
        return out
    }

    private static func unescape(_ part: Substring) -> String {
        guard part.utf8.contains(UInt8(ascii: "~")) else { return String(part) }
        var out = ""
        var tilde = false
        for ch in part.unicodeScalars {
            if tilde {
                tilde = false
                switch ch {
                case "0": out += "~"
                case "1": out += "."
                default:
                    out += "~"
                    out.unicodeScalars.append(ch)  // not an escape: kept as written
                }
            } else if ch == "~" {
                tilde = true
            } else {
                out.unicodeScalars.append(ch)
            }
        }
        if tilde { out += "~" }
        return out
    }
}
