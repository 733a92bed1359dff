// The field-by-field merge itself (rules in FieldMerge.swift): an explicit stack of the
// objects being merged, so deep values need no recursion. Arrays changed on both sides
// are merged in ArrayMerge.swift.

import Collections

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
    /// Whether a counter absent from the base counts from 0 (both sides added it to a
    /// document they shared). False when there is no base document at all (first contact:
    /// two files that were one document before docsync met them): equal counts are then
    /// one count, not two additions, and different ones merge by the ordinary rules.
    var countsFromZero = true

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

    /// local + remote − base when both sides changed a number (base absent counts as 0,
    /// where the document had a base: `countsFromZero`);
    /// nil when the ordinary rules apply.
    private func counterSum(base: JSONValue?, local: JSONValue?, remote: JSONValue?) -> String? {
        guard case .number(let l)? = local, case .number(let r)? = remote, local != base, remote != base else {
            return nil
        }
        var terms: [(ExactDecimal, negate: Bool)] = []
        guard let ld = ExactDecimal(l), let rd = ExactDecimal(r) else { return nil }
        terms = [(ld, false), (rd, false)]
        switch base {
        case nil: guard countsFromZero else { return nil }
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
