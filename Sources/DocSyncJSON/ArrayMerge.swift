// Arrays changed differently on both sides (docs/SYNC.md#arrays): merged as a set (declared
// with `merge.sets`), by an identity member when every element has a unique one (records:
// each matched element merged like an object), or as a sequence (SequenceMerge, like
// diff3). Element merges start a Merger of their own, inside the document's paths, so a
// counter `lines.*.qty` and nested arrays work; below `maxArrayDepth` nested array merges
// an array is a single value again (a bound on recursion).
//
// Symmetric: the later save (`collisions`) breaks every tie, never the side, and an
// element is merged with the earlier save as its "local", so both replicas that merge the
// same three versions get the same array.

extension Merger {
    static let maxArrayDepth = 64
    /// Tried in this order when no identity member is configured for the array.
    static let defaultIdentityKeys = ["id", "refId", "uuid", "key"]

    mutating func mergeArray(node: Int, path: [String], base: [JSONValue], local: [JSONValue], remote: [JSONValue])
        -> [JSONValue]
    {
        let laterIsLocal = collisions == .local
        if trie.has(node, PathTrie.set) {
            return mergeSet(base: base, local: local, remote: remote, laterIsLocal: laterIsLocal)
        }
        let candidates = trie.arrayKeys[node].map { [$0] } ?? Self.defaultIdentityKeys
        if let key = candidates.first(where: { Self.isIdentity($0, in: [base, local, remote]) }) {
            return mergeRecords(
                node: node, path: path, key: key, base: base, local: local, remote: remote, laterIsLocal: laterIsLocal)
        }
        var tokens = Tokens()
        let sequence = SequenceMerge.merge(
            base: tokens.of(base), local: tokens.of(local), remote: tokens.of(remote), laterIsLocal: laterIsLocal)
        if !sequence.collisions.isEmpty {
            conflicts.append(
                FieldMerge.FieldConflict(
                    path: FieldMerge.path(path), base: JSONValueWriter.compactString(.array(base)),
                    local: JSONValueWriter.compactString(.array(local)),
                    remote: JSONValueWriter.compactString(.array(remote)),
                    taken: collisions))
        }
        let sides = [base, local, remote]
        return sequence.elements.map { sides[$0.side][$0.index] }
    }

    /// Whether every element of every array is an object whose `key` is a string or a
    /// number, unique within its array.
    static func isIdentity(_ key: String, in arrays: [[JSONValue]]) -> Bool {
        arrays.allSatisfy { array in
            var seen = Set<String>()
            return array.allSatisfy { element in
                guard let id = identity(of: element, key: key) else { return false }
                return seen.insert(id).inserted
            }
        }
    }

    /// The identity of an element: the exact JSON text of its `key` member (`1` and `"1"` differ).
    static func identity(of element: JSONValue, key: String) -> String? {
        guard case .object(let members) = element, let value = members[key] else { return nil }
        switch value {
        case .string, .number: return JSONValueWriter.compactString(value)
        default: return nil
        }
    }

    // MARK: Records matched by identity

    private mutating func mergeRecords(
        node: Int, path: [String], key: String, base: [JSONValue], local: [JSONValue], remote: [JSONValue],
        laterIsLocal: Bool
    ) -> [JSONValue] {
        func byId(_ array: [JSONValue]) -> [String: JSONValue] {
            Dictionary(array.map { (Self.identity(of: $0, key: key)!, $0) }, uniquingKeysWith: { a, _ in a })
        }
        let ids = RecordIds(
            base: base.map { Self.identity(of: $0, key: key)! }, local: local.map { Self.identity(of: $0, key: key)! },
            remote: remote.map { Self.identity(of: $0, key: key)! })
        let (b, l, r) = (byId(base), byId(local), byId(remote))
        let (survivors, beatRemoval) = Self.survivingRecords(ids: ids, base: b, local: l, remote: r)
        let order = Self.recordOrder(ids: ids, survivors: survivors, laterIsLocal: laterIsLocal)

        // Each element, merged at its place in the result.
        let elementNode = trie.child(node, "*")
        var merged: [JSONValue] = []
        merged.reserveCapacity(order.count)
        for (index, id) in order.enumerated() {
            let elementPath = path + [String(index)]
            switch (l[id], r[id]) {
            case (let x?, let y?):
                merged.append(
                    mergeElement(
                        node: elementNode, path: elementPath, base: b[id], local: x, remote: y,
                        laterIsLocal: laterIsLocal))
            case (let only?, nil), (nil, let only?):
                if let side = beatRemoval[id] {
                    conflicts.append(
                        FieldMerge.FieldConflict(
                            path: FieldMerge.path(elementPath), base: b[id].map(JSONValueWriter.compactString),
                            local: side == .local ? JSONValueWriter.compactString(only) : nil,
                            remote: side == .remote ? JSONValueWriter.compactString(only) : nil, taken: side))
                }
                merged.append(only)
            case (nil, nil): break
            }
        }
        return merged
    }

    /// The identities of each side's elements, in its order.
    struct RecordIds {
        var base: [String]
        var local: [String]
        var remote: [String]
    }

    /// Which elements survive: on both sides, added on one, or changed on one and removed
    /// on the other (an edit beats a removal; `beatRemoval` says which side's edit).
    static func survivingRecords(
        ids: RecordIds, base: [String: JSONValue], local: [String: JSONValue], remote: [String: JSONValue]
    ) -> (survivors: Set<String>, beatRemoval: [String: FieldMerge.Winner]) {
        var survivors = Set<String>()
        var beatRemoval: [String: FieldMerge.Winner] = [:]
        for id in Set(ids.local + ids.remote) {
            switch (local[id], remote[id]) {
            case (_?, _?): survivors.insert(id)
            case (let kept?, nil), (nil, let kept?):
                let side: FieldMerge.Winner = local[id] != nil ? .local : .remote
                guard let was = base[id] else {
                    survivors.insert(id)
                    continue
                }
                if kept != was {
                    survivors.insert(id)
                    beatRemoval[id] = side
                }
            case (nil, nil): break
            }
        }
        return (survivors, beatRemoval)
    }

    /// Order: the sequence merge of the identities, survivors only, then any survivor the
    /// order lost right after its predecessor on the side that kept it.
    static func recordOrder(ids: RecordIds, survivors: Set<String>, laterIsLocal: Bool) -> [String] {
        var tokens = Tokens()
        let sequence = SequenceMerge.merge(
            base: tokens.of(ids.base), local: tokens.of(ids.local), remote: tokens.of(ids.remote),
            laterIsLocal: laterIsLocal)
        let sideIds = [ids.base, ids.local, ids.remote]
        var order: [String] = []
        var placed = Set<String>()
        for (side, index) in sequence.elements {
            let id = sideIds[side][index]
            if survivors.contains(id), placed.insert(id).inserted { order.append(id) }
        }
        let (earlierIds, laterIds) = laterIsLocal ? (ids.remote, ids.local) : (ids.local, ids.remote)
        for list in [earlierIds, laterIds] {
            for id in list where survivors.contains(id) && !placed.contains(id) {
                let keeper = laterIds.contains(id) ? laterIds : earlierIds
                let before = keeper[..<keeper.firstIndex(of: id)!].last { placed.contains($0) }
                order.insert(id, at: before.flatMap { order.firstIndex(of: $0) }.map { $0 + 1 } ?? 0)
                placed.insert(id)
            }
        }
        return order
    }

    /// One element on both sides, merged with the earlier save as "local" (so the result
    /// does not depend on which side is local); its conflicts are reported by side.
    private mutating func mergeElement(
        node: Int, path: [String], base: JSONValue?, local: JSONValue, remote: JSONValue,
        laterIsLocal: Bool
    ) -> JSONValue {
        let (earlier, later) = laterIsLocal ? (remote, local) : (local, remote)
        var inner = Merger(collisions: .remote, trie: trie, rootNode: node, rootPath: path, arrayDepth: arrayDepth + 1)
        inner.countsFromZero = countsFromZero
        let merged = inner.run(base: base, local: earlier, remote: later)
        for var conflict in inner.conflicts {
            if laterIsLocal {
                (conflict.local, conflict.remote) = (conflict.remote, conflict.local)
                conflict.taken = conflict.taken.other
            }
            conflicts.append(conflict)
        }
        return merged
    }

    // MARK: Sets

    /// Every base element neither side removed and every element either side added, once;
    /// in the sequence merge's order, then what is missing in the earlier save's order,
    /// then the later save's.
    private func mergeSet(base: [JSONValue], local: [JSONValue], remote: [JSONValue], laterIsLocal: Bool) -> [JSONValue]
    {
        var tokens = Tokens()
        let (tb, tl, tr) = (tokens.of(base), tokens.of(local), tokens.of(remote))
        let (sb, sl, sr) = (Set(tb), Set(tl), Set(tr))
        let members = sb.intersection(sl).intersection(sr).union(sl.subtracting(sb)).union(sr.subtracting(sb))
        let sides = [base, local, remote]
        let sideTokens = [tb, tl, tr]
        var result: [JSONValue] = []
        var placed = Set<Int>()
        func place(_ side: Int, _ index: Int) {
            let token = sideTokens[side][index]
            if members.contains(token), placed.insert(token).inserted { result.append(sides[side][index]) }
        }
        for (side, index) in SequenceMerge.merge(base: tb, local: tl, remote: tr, laterIsLocal: laterIsLocal).elements {
            place(side, index)
        }
        for side in laterIsLocal ? [2, 1] : [1, 2] {
            for index in sides[side].indices { place(side, index) }
        }
        return result
    }
}

/// Equal JSON values (by exact compact text) as equal Ints, for SequenceMerge (and the
/// sequence diff of JSONDiff).
struct Tokens {
    private var known: [String: Int] = [:]

    mutating func of(_ values: [JSONValue]) -> [Int] {
        values.map { token(JSONValueWriter.compactString($0)) }
    }

    mutating func of(_ texts: [String]) -> [Int] {
        texts.map { token($0) }
    }

    private mutating func token(_ text: String) -> Int {
        if let known = known[text] { return known }
        known[text] = known.count
        return known.count - 1
    }
}
