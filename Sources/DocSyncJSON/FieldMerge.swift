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

import Collections

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

// MARK: - Declared paths

/// Counter, reserved, set and identity-array paths as a tree of keys, so each key is
/// checked in O(1) while walking and no path text is built unless a conflict is reported.
/// A `*` key matches any key or array element that has no literal entry.
struct PathTrie {
    static let counter: UInt8 = 1
    static let reserved: UInt8 = 2
    static let set: UInt8 = 4

    var children: [[String: Int]] = [[:]]
    var flags: [UInt8] = [0]
    /// The configured identity member of arrays at a node.
    var arrayKeys: [Int: String] = [:]

    mutating func insert(_ keys: [String], flag: UInt8, arrayKey: String? = nil) {
        guard !keys.isEmpty else { return }  // the root is never a counter or reserved
        var node = 0
        for key in keys {
            if let next = children[node][key] {
                node = next
            } else {
                children.append([:])
                flags.append(0)
                children[node][key] = children.count - 1
                node = children.count - 1
            }
        }
        flags[node] |= flag
        if let arrayKey { arrayKeys[node] = arrayKey }
    }

    /// The node for `key` under `node` (a literal key before `*`); -1 when no declared
    /// path goes there.
    func child(_ node: Int, _ key: String) -> Int {
        node < 0 ? -1 : children[node][key] ?? children[node]["*"] ?? -1
    }

    func has(_ node: Int, _ flag: UInt8) -> Bool {
        node >= 0 && flags[node] & flag != 0
    }
}

// MARK: - The merge

struct Merger {
    typealias Members = OrderedDictionary<String, JSONValue>

    /// An object being merged.
    struct Frame {
        /// Its key in the parent ("" for the root).
        var key: String
        var node: Int
        var base: Members?
        var local: Members
        var remote: Members
        var result = Members()
        /// Index into local's keys, then (past them) remote's.
        var next = 0
        /// Whether local left this object exactly as in the base (same keys in the same
        /// order, equal values) so far; if so at the end, remote's object is taken as is.
        var localUnchanged: Bool

        init(key: String, node: Int, base: Members?, local: Members, remote: Members) {
            self.key = key
            self.node = node
            self.base = base
            self.local = local
            self.remote = remote
            localUnchanged = base.map { $0.keys.elementsEqual(local.keys) { $0.utf8.elementsEqual($1.utf8) } } ?? false
        }
    }

    enum Decision {
        case value(JSONValue?)
        case descend(base: Members?, local: Members, remote: Members)
    }

    let collisions: FieldMerge.Winner
    let trie: PathTrie
    var conflicts: [FieldMerge.FieldConflict] = []
    var stack: [Frame] = []
    /// Where the merged value sits: the trie node and key path of its root (an array
    /// element's merge starts inside the document), and how many array merges enclose it.
    let rootNode: Int
    let rootPath: [String]
    let arrayDepth: Int

    init(collisions: FieldMerge.Winner, trie: PathTrie, rootNode: Int = 0, rootPath: [String] = [], arrayDepth: Int = 0)
    {
        self.collisions = collisions
        self.trie = trie
        self.rootNode = rootNode
        self.rootPath = rootPath
        self.arrayDepth = arrayDepth
    }

    mutating func run(base: JSONValue?, local: JSONValue, remote: JSONValue) -> JSONValue {
        switch decide(node: rootNode, key: nil, base: base, local: local, remote: remote).decision {
        case .value(let value):
            return value ?? local  // both sides have a root, so never nil
        case let .descend(base, local, remote):
            stack.append(Frame(key: "", node: rootNode, base: base, local: local, remote: remote))
        }

        while true {
            let top = stack.count - 1
            let localCount = stack[top].local.count
            let index = stack[top].next
            if index < localCount + stack[top].remote.count {
                stack[top].next += 1
                let key: String
                let local: JSONValue?
                if index < localCount {
                    key = stack[top].local.keys[index]
                    local = stack[top].local.values[index]
                } else {
                    key = stack[top].remote.keys[index - localCount]
                    guard stack[top].local[key] == nil else { continue }  // done with local's keys
                    local = nil
                }
                let node = trie.child(stack[top].node, key)
                let (decision, localSame) = decide(
                    node: node, key: key, base: stack[top].base?[key], local: local,
                    remote: stack[top].remote[key])
                if !localSame { stack[top].localUnchanged = false }
                switch decision {
                case .value(let value?):
                    stack[top].result[key] = value
                case .value(nil):
                    break
                case let .descend(base, local, remote):
                    stack.append(Frame(key: key, node: node, base: base, local: local, remote: remote))
                }
            } else {
                let frame = stack.removeLast()
                // An object local did not touch is remote's, verbatim (its key order too).
                let merged = JSONValue.object(frame.localUnchanged ? frame.remote : frame.result)
                if stack.isEmpty { return merged }
                if !frame.localUnchanged { stack[stack.count - 1].localUnchanged = false }
                stack[stack.count - 1].result[frame.key] = merged
            }
        }
    }

    /// What to do at one key (`key` nil for the root), and whether the result there is
    /// remote's value with local unchanged from the base (for a descent: true, the child
    /// frame decides). Never compares two objects that will be merged key by key, so every
    /// subtree is compared a bounded number of times.
    private mutating func decide(
        node: Int, key: String?, base: JSONValue?, local: JSONValue?,
        remote: JSONValue?
    ) -> (decision: Decision, localSame: Bool) {
        if trie.has(node, PathTrie.reserved) { return (.value(local ?? remote), local == base && local == remote) }
        if case .object(let l)? = local, case .object(let r)? = remote {
            if case .object(let b)? = base { return (.descend(base: b, local: l, remote: r), true) }
            return (.descend(base: nil, local: l, remote: r), true)
        }
        if trie.has(node, PathTrie.counter), let sum = counterSum(base: base, local: local, remote: remote) {
            return (.value(.number(sum)), false)
        }
        if local == remote { return (.value(local), local == base) }
        if local == base { return (.value(remote), true) }
        if remote == base { return (.value(local), false) }
        if case .array(let l)? = local, case .array(let r)? = remote, arrayDepth < Merger.maxArrayDepth {
            let b: [JSONValue] = if case .array(let b)? = base { b } else { [] }
            return (.value(.array(mergeArray(node: node, path: keyPath(key), base: b, local: l, remote: r))), false)
        }
        // Changed differently on both sides.
        let winner: FieldMerge.Winner = if local == nil { .remote } else if remote == nil { .local } else { collisions }
        conflicts.append(
            FieldMerge.FieldConflict(
                path: currentPath(key), base: base.map(JSONValueWriter.compactString),
                local: local.map(JSONValueWriter.compactString), remote: remote.map(JSONValueWriter.compactString),
                taken: winner))
        return (.value(winner == .local ? local : remote), false)
    }

    /// local + remote − base when both sides changed a number (base absent counts as 0);
    /// nil when the ordinary rules apply.
    private func counterSum(base: JSONValue?, local: JSONValue?, remote: JSONValue?) -> String? {
        guard case .number(let l)? = local, case .number(let r)? = remote, local != base, remote != base else {
            return nil
        }
        var terms: [(ExactDecimal, negate: Bool)] = []
        guard let ld = ExactDecimal(l), let rd = ExactDecimal(r) else { return nil }
        terms = [(ld, false), (rd, false)]
        switch base {
        case nil: break
        case .number(let b)?:
            guard let bd = ExactDecimal(b) else { return nil }
            terms.append((bd, true))
        default: return nil
        }
        return ExactDecimal.sum(terms)
    }

    func currentPath(_ key: String?) -> String {
        FieldMerge.path(keyPath(key))
    }

    /// The keys from the document's root to `key` (nil: the value being merged).
    func keyPath(_ key: String?) -> [String] {
        guard let key else { return rootPath }
        return rootPath + stack.dropFirst().map(\.key) + [key]
    }
}

// MARK: - Exact decimal arithmetic for counters

/// ±digits × 10^exponent, parsed from JSON number text; no rounding ever.
private struct ExactDecimal {
    /// Base-10 digits, least significant first, without high zeros (empty for zero).
    var digits: [UInt8]
    var negative: Bool
    var exponent: Int
    /// Whether the text used e/E notation.
    var scientific: Bool

    /// Exponents beyond this (in the text) are refused, as are sums whose terms are more
    /// than `maxSpan` decimal places apart: such counters fall back to a conflict instead
    /// of building huge digit strings.
    static let maxExponent = 1_000_000
    static let maxSpan = 10_000

    init?(_ text: String) {
        let bytes = Array(text.utf8)
        var i = 0
        negative = false
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") {
            negative = true
            i += 1
        }
        var mantissa: [UInt8] = []
        let intStart = i
        while i < bytes.count, isDigit(bytes[i]) {
            mantissa.append(bytes[i] - 48)
            i += 1
        }
        guard i > intStart else { return nil }
        var fraction = 0
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            let start = i
            while i < bytes.count, isDigit(bytes[i]) {
                mantissa.append(bytes[i] - 48)
                i += 1
            }
            guard i > start else { return nil }
            fraction = i - start
        }
        var power = 0
        scientific = false
        if i < bytes.count, bytes[i] | 0x20 == UInt8(ascii: "e") {
            scientific = true
            i += 1
            var minus = false
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") {
                minus = bytes[i] == UInt8(ascii: "-")
                i += 1
            }
            let start = i
            while i < bytes.count, isDigit(bytes[i]) {
                power = power * 10 + Int(bytes[i] - 48)
                guard power <= ExactDecimal.maxExponent else { return nil }
                i += 1
            }
            guard i > start else { return nil }
            if minus { power = -power }
        }
        guard i == bytes.count else { return nil }
        digits = mantissa.reversed()
        while digits.last == 0 { digits.removeLast() }
        exponent = power - fraction
    }

    /// The exact sum of the terms (each negated if asked) as JSON number text: plain
    /// decimal notation with as many decimal places as the most precise term (1.50 + 1 →
    /// "2.50"); if a term was written with an exponent and plain notation would need more
    /// than 20 zeros of padding, scientific notation ("1.5e400"). Nil when the terms are
    /// too far apart (`maxSpan`).
    static func sum(_ terms: [(ExactDecimal, negate: Bool)]) -> String? {
        let low = terms.map(\.0.exponent).min() ?? 0
        var negative = false
        var total: [UInt8] = []
        for (term, negate) in terms {
            let shift = term.exponent - low
            guard shift <= maxSpan else { return nil }
            let shifted = term.digits.isEmpty ? [] : [UInt8](repeating: 0, count: shift) + term.digits
            (negative, total) = add(negative, total, term.negative != negate, shifted)
        }
        let scientific = terms.contains { $0.0.scientific }
        return format(negative: negative, digits: total, exponent: low, scientific: scientific)
    }

    private static func add(_ aNeg: Bool, _ a: [UInt8], _ bNeg: Bool, _ b: [UInt8]) -> (Bool, [UInt8]) {
        if aNeg == bNeg { return (aNeg, addMagnitudes(a, b)) }
        switch compareMagnitudes(a, b) {
        case 0: return (false, [])
        case 1: return (aNeg, subtractMagnitudes(a, b))
        default: return (bNeg, subtractMagnitudes(b, a))
        }
    }

    private static func addMagnitudes(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(max(a.count, b.count) + 1)
        var carry: UInt8 = 0
        for i in 0..<max(a.count, b.count) {
            let s = (i < a.count ? a[i] : 0) + (i < b.count ? b[i] : 0) + carry
            out.append(s % 10)
            carry = s / 10
        }
        if carry > 0 { out.append(carry) }
        return out
    }

    /// a − b for a ≥ b.
    private static func subtractMagnitudes(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(a.count)
        var borrow: Int = 0
        for i in 0..<a.count {
            var d = Int(a[i]) - (i < b.count ? Int(b[i]) : 0) - borrow
            borrow = d < 0 ? 1 : 0
            if d < 0 { d += 10 }
            out.append(UInt8(d))
        }
        while out.last == 0 { out.removeLast() }
        return out
    }

    /// -1, 0 or 1; both without high zeros.
    private static func compareMagnitudes(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a.count != b.count { return a.count < b.count ? -1 : 1 }
        for i in stride(from: a.count - 1, through: 0, by: -1) where a[i] != b[i] {
            return a[i] < b[i] ? -1 : 1
        }
        return 0
    }

    private static func format(negative: Bool, digits: [UInt8], exponent: Int, scientific: Bool) -> String {
        var digits = digits
        var exponent = exponent
        let padding = exponent > 0 ? exponent : max(0, -exponent - digits.count)
        if scientific, !digits.isEmpty, padding > 20 {
            // Scientific: strip low zeros, one digit before the point.
            var low = 0
            while digits[low] == 0 { low += 1 }
            digits.removeFirst(low)
            exponent += low
            let text = digits.reversed().map { Character(Unicode.Scalar($0 + 48)) }
            var out = negative ? "-" : ""
            out.append(text[0])
            if text.count > 1 { out += "." + String(text[1...]) }
            return out + "e" + String(exponent + text.count - 1)
        }
        if digits.isEmpty {  // zero
            return exponent < 0 && !scientific ? "0." + String(repeating: "0", count: -exponent) : "0"
        }
        var text = String(digits.reversed().map { Character(Unicode.Scalar($0 + 48)) })
        if exponent >= 0 {
            text += String(repeating: "0", count: exponent)
        } else {
            let scale = -exponent
            if text.count <= scale { text = String(repeating: "0", count: scale - text.count + 1) + text }
            text.insert(".", at: text.index(text.endIndex, offsetBy: -scale))
        }
        return (negative ? "-" : "") + text
    }
}
