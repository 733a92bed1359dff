import DocSyncJSON
import Foundation
import Testing

/// The array rules as a property (docs/SYNC.md#arrays): N replicas edit one record's list
/// of items (add, edit a field, remove) and its tags (a set), and sync with a shared remote
/// in random orders, merging with FieldMerge as a sync does (the later save wins ties).
/// Afterwards every replica holds the same bytes, and no edit is lost: every item added
/// is there unless someone removed it (and an item removed while another replica edited it
/// is there, with a conflict recorded), and every item's fields hold the last value written
/// unless a conflict records the loser.
@Suite("Array merge property: replicas converge and keep every edit")
struct ArrayMergePropertyTests {
    struct Replica {
        var base: JSONValue  // the version last synced
        var local: JSONValue  // with the edits since
        var savedAt = 0  // when local was last edited (the clock of the run)
    }

    static func items(_ value: JSONValue) -> [OrderedItem] {
        guard case .object(let o) = value, case .array(let a)? = o["items"] else { return [] }
        return a.compactMap { element in
            guard case .object(let e) = element, case .number(let id)? = e["id"] else { return nil }
            let v: String = if case .string(let s)? = e["v"] { s } else { "" }
            return OrderedItem(id: id, v: v)
        }
    }

    struct OrderedItem: Equatable {
        var id: String
        var v: String
    }

    static func with(items: [OrderedItem], tags: [String]) -> JSONValue {
        .object([
            "items": .array(items.map { .object(["id": .number($0.id), "v": .string($0.v)]) }),
            "tags": .array(tags.map { .string($0) })
        ])
    }

    static func tags(_ value: JSONValue) -> [String] {
        guard case .object(let o) = value, case .array(let a)? = o["tags"] else { return [] }
        return a.compactMap { if case .string(let s) = $0 { s } else { nil } }
    }

    @Test(
        "random edits on 4 replicas, synced in random orders: same bytes everywhere, every edit kept or recorded",
        arguments: 1...20)
    func converges(seed: Int) {
        var rng = SeededGenerator(seed: UInt64(seed) * 7919)
        let start = Self.with(items: [OrderedItem(id: "1", v: "a")], tags: ["t0"])
        var remote = start
        var remoteSavedAt = 0
        var replicas = Array(repeating: Replica(base: start, local: start), count: 4)
        var clock = 0
        var nextId = 2
        var added = Set(["1"]), removed = Set<String>()
        var addedTags = Set(["t0"]), removedTags = Set<String>()
        var conflictPaths = 0

        func sync(_ i: Int) {
            let r = replicas[i]
            let merged: JSONValue
            if r.local == r.base {
                merged = remote
            } else if remote == r.base {
                merged = r.local
            } else {
                let localIsLater = r.savedAt > remoteSavedAt
                let result = FieldMerge.merge(
                    base: r.base, local: r.local, remote: remote, collisions: localIsLater ? .local : .remote,
                    counters: [], arrays: FieldMerge.ArrayRules(sets: ["tags"]))
                conflictPaths += result.conflicts.count
                merged = result.merged
                remoteSavedAt = max(remoteSavedAt, r.savedAt)
            }
            if r.local != r.base { remoteSavedAt = max(remoteSavedAt, r.savedAt) }
            remote = merged
            replicas[i] = Replica(base: merged, local: merged, savedAt: remoteSavedAt)
        }

        for _ in 0..<300 {
            let i = Int.random(in: 0..<replicas.count, using: &rng)
            if Int.random(in: 0..<3, using: &rng) == 0 {
                sync(i)
                continue
            }
            clock += 1
            var list = Self.items(replicas[i].local)
            var tagList = Self.tags(replicas[i].local)
            switch Int.random(in: 0..<5, using: &rng) {
            case 0:
                let id = String(nextId)
                nextId += 1
                added.insert(id)
                list.insert(OrderedItem(id: id, v: "new"), at: Int.random(in: 0...list.count, using: &rng))
            case 1 where !list.isEmpty:
                let at = Int.random(in: 0..<list.count, using: &rng)
                list[at].v = "e\(clock)"
            case 2 where !list.isEmpty:
                removed.insert(list.remove(at: Int.random(in: 0..<list.count, using: &rng)).id)
            case 3:
                let tag = "t\(clock)"
                addedTags.insert(tag)
                tagList.append(tag)
            default:
                if let tag = tagList.randomElement(using: &rng) {
                    removedTags.insert(tag)
                    tagList.removeAll { $0 == tag }
                }
            }
            replicas[i].local = Self.with(items: list, tags: tagList)
            replicas[i].savedAt = clock
        }
        for _ in 0..<2 { for i in replicas.indices { sync(i) } }

        let texts = Set(replicas.map { String(decoding: JSONValueWriter.writeCompact($0.local), as: UTF8.self) })
        #expect(texts.count == 1, "every replica holds the same bytes")
        let final = Set(Self.items(remote).map(\.id))
        #expect(final.isSubset(of: added), "nothing appears that no one added")
        #expect(
            added.subtracting(removed).isSubset(of: final),
            "every item added and never removed is there: missing \(added.subtracting(removed).subtracting(final).sorted())"
        )
        // An item removed but still there was edited concurrently: the edit beat the removal, recorded as a conflict.
        let kept = final.intersection(removed)
        #expect(
            kept.isEmpty || conflictPaths > 0, "removed items \(kept.sorted()) are there without a conflict recorded")
        let finalTags = Set(Self.tags(remote))
        #expect(
            finalTags == addedTags.subtracting(removedTags),
            "a set: every tag added, none removed (tags are unique per run)")
        #expect(Self.items(remote).count == final.count, "no item twice")
    }
}
