import DocSyncJSON
import Foundation
import Testing

/// The array rules of docs/SYNC.md#arrays, case by case (the doc's own examples first), and
/// the properties the conformance suite does not reach: symmetry on random arrays, huge
/// arrays, and nesting deeper than the array-merge bound.
@Suite("Array merge")
struct ArrayMergeTests {
    static func json(_ text: String) -> JSONValue { try! JSONValueParser.parse(Array(text.utf8)) }
    static func text(_ value: JSONValue) -> String {
        String(decoding: JSONValueWriter.writeCompact(value), as: UTF8.self)
    }

    func merge(
        _ base: String?, _ local: String, _ remote: String, later: FieldMerge.Winner = .remote,
        counters: Set<String> = [], sets: Set<String> = [], keys: [String: String] = [:]
    ) -> (String, [String]) {
        let result = FieldMerge.merge(
            base: base.map(Self.json), local: Self.json(local), remote: Self.json(remote), collisions: later,
            counters: counters, arrays: FieldMerge.ArrayRules(sets: sets, keys: keys))
        return (Self.text(result.merged), result.conflicts.map(\.path))
    }

    @Test("the examples in docs/SYNC.md")
    func documentedExamples() {
        #expect(
            merge(
                #"{"a":[{"id":1,"qty":1}]}"#, #"{"a":[{"id":1,"qty":1},{"id":2,"qty":5}]}"#,
                #"{"a":[{"id":1,"qty":1},{"id":3,"qty":7}]}"#)
                == (#"{"a":[{"id":1,"qty":1},{"id":2,"qty":5},{"id":3,"qty":7}]}"#, []))
        #expect(
            merge(
                #"{"a":[{"id":1,"qty":1,"n":"a"}]}"#, #"{"a":[{"id":1,"qty":2,"n":"a"}]}"#,
                #"{"a":[{"id":1,"qty":1,"n":"b"}]}"#)
                == (#"{"a":[{"id":1,"qty":2,"n":"b"}]}"#, []))
        #expect(
            merge(#"{"a":["a","b","c"]}"#, #"{"a":["x","a","b","c"]}"#, #"{"a":["a","b","c","y"]}"#) == (
                #"{"a":["x","a","b","c","y"]}"#, []
            ))
        #expect(merge(#"{"a":["a","b","c"]}"#, #"{"a":["a","c"]}"#, #"{"a":["a","b"]}"#) == (#"{"a":["a"]}"#, []))
        #expect(
            merge(#"{"a":["a","b","c"]}"#, #"{"a":["a","L","c"]}"#, #"{"a":["a","R","c"]}"#) == (
                #"{"a":["a","R","c"]}"#, ["a"]
            ))
        #expect(
            merge(#"{"a":["a","b","c"]}"#, #"{"a":["a","L","c"]}"#, #"{"a":["a","R","c"]}"#, later: .local) == (
                #"{"a":["a","L","c"]}"#, ["a"]
            ))
        #expect(
            merge(#"{"a":["a","b","c"]}"#, #"{"a":["a","c"]}"#, #"{"a":["a","b","x","c"]}"#) == (
                #"{"a":["a","x","c"]}"#, []
            ))
        #expect(
            merge(#"{"t":["red"]}"#, #"{"t":["red","blue"]}"#, #"{"t":["green"]}"#, later: .local, sets: ["t"]) == (
                #"{"t":["blue","green"]}"#, []
            ))
        #expect(
            merge(#"{"t":["red"]}"#, #"{"t":["red","blue"]}"#, #"{"t":["green"]}"#, later: .remote, sets: ["t"]) == (
                #"{"t":["green","blue"]}"#, []
            ))
    }

    @Test(
        "identity: removed vs edited keeps the edit with a conflict at the element; removed vs unchanged removes; a move moves"
    )
    func identityRules() {
        // Edit beats removal, at the element's index in the result.
        #expect(
            merge(
                #"{"l":[{"id":"a","v":1},{"id":"b","v":1}]}"#, #"{"l":[{"id":"a","v":1}]}"#,
                #"{"l":[{"id":"a","v":1},{"id":"b","v":2}]}"#)
                == (#"{"l":[{"id":"a","v":1},{"id":"b","v":2}]}"#, ["l.1"]))
        #expect(
            merge(
                #"{"l":[{"id":"a","v":1},{"id":"b","v":1}]}"#, #"{"l":[{"id":"a","v":1}]}"#,
                #"{"l":[{"id":"a","v":2},{"id":"b","v":1}]}"#)
                == (#"{"l":[{"id":"a","v":2}]}"#, []))
        // Local moves b to the front, remote edits b: b moves and carries the edit.
        #expect(
            merge(
                #"{"l":[{"id":"a"},{"id":"b","v":1}]}"#, #"{"l":[{"id":"b","v":1},{"id":"a"}]}"#,
                #"{"l":[{"id":"a"},{"id":"b","v":2}]}"#)
                == (#"{"l":[{"id":"b","v":2},{"id":"a"}]}"#, []))
        // A configured key; duplicate ids fall back to a sequence merge.
        #expect(
            merge(
                #"{"l":[{"sku":"x","q":1}]}"#, #"{"l":[{"sku":"x","q":2}]}"#, #"{"l":[{"sku":"x","q":1,"n":"b"}]}"#,
                keys: ["l": "sku"])
                == (#"{"l":[{"sku":"x","q":2,"n":"b"}]}"#, []))
        #expect(
            merge(
                #"{"l":[{"id":1},{"id":1}]}"#, #"{"l":[{"id":1,"v":1},{"id":1}]}"#, #"{"l":[{"id":1,"v":2},{"id":1}]}"#
            ).1 == ["l"])
    }

    @Test("counters inside identity-array elements add both sides' changes")
    func countersInElements() {
        #expect(
            merge(
                #"{"lines":[{"id":1,"qty":1}]}"#, #"{"lines":[{"id":1,"qty":3}]}"#, #"{"lines":[{"id":1,"qty":11}]}"#,
                counters: ["lines.*.qty"])
                == (#"{"lines":[{"id":1,"qty":13}]}"#, []))
    }

    @Test("symmetric: swapping the sides and the later save gives the same arrays (random arrays, fixed seed)")
    func symmetry() {
        var rng = SeededGenerator(seed: 20261123)
        func randomArray(from base: [Int]) -> [Int] {
            var a = base
            for _ in 0..<Int.random(in: 0...4, using: &rng) {
                switch Int.random(in: 0...2, using: &rng) {
                case 0 where !a.isEmpty: a.remove(at: Int.random(in: 0..<a.count, using: &rng))
                case 1: a.insert(Int.random(in: 100...140, using: &rng), at: Int.random(in: 0...a.count, using: &rng))
                default:
                    if !a.isEmpty {
                        a[Int.random(in: 0..<a.count, using: &rng)] = Int.random(in: 200...240, using: &rng)
                    }
                }
            }
            return a
        }
        var checked = 0
        for _ in 0..<2_000 {
            let base = (0..<Int.random(in: 0...8, using: &rng)).map { $0 }
            let (l, r) = (randomArray(from: base), randomArray(from: base))
            let asRecords = Bool.random(using: &rng)
            func doc(_ a: [Int]) -> String {
                #"{"a":["# + a.map { asRecords ? #"{"id":\#($0),"v":\#($0 % 3)}"# : "\($0)" }.joined(separator: ",")
                    + "]}"
            }
            let sets: Set<String> = asRecords || Bool.random(using: &rng) ? [] : ["a"]
            for later in [FieldMerge.Winner.local, .remote] {
                let one = merge(doc(base), doc(l), doc(r), later: later, sets: sets)
                let other = merge(doc(base), doc(r), doc(l), later: later == .local ? .remote : .local, sets: sets)
                if one.0 != other.0 {
                    Issue.record(
                        "not symmetric: base \(base) local \(l) remote \(r) later \(later): \(one.0) vs \(other.0)")
                }
                checked += 1
            }
        }
        #expect(checked == 4_000)
    }

    @Test("10,000-element arrays with edits spread over them merge (no quadratic blow-up)")
    func hugeArrays() {
        let base = Array(0..<10_000)
        var l = base, r = base
        for i in stride(from: 5, to: 10_000, by: 500) { l[i] = -i }
        for i in stride(from: 255, to: 10_000, by: 500) { r.remove(at: r.firstIndex(of: i)!) }
        r.append(99_999)
        func doc(_ a: [Int]) -> String { #"{"a":["# + a.map(String.init).joined(separator: ",") + "]}" }
        var expected = l
        for i in stride(from: 255, to: 10_000, by: 500) { expected.remove(at: expected.firstIndex(of: i)!) }
        expected.append(99_999)
        #expect(merge(doc(base), doc(l), doc(r)) == (doc(expected), []))
    }

    @Test("arrays nested deeper than the bound are single values again (no unbounded recursion)")
    func nestingBound() {
        func nested(_ depth: Int, _ leaf: String) -> String {
            String(repeating: #"[{"id":1,"c":"#, count: depth) + leaf + String(repeating: "}]", count: depth)
        }
        let result = merge(
            #"{"a":"# + nested(200, "0") + "}", #"{"a":"# + nested(200, "1") + "}", #"{"a":"# + nested(200, "2") + "}")
        #expect(result.0 == #"{"a":"# + nested(200, "2") + "}")
        #expect(
            result.1.count == 1 && result.1[0].hasPrefix("a.0.c.0.c"), "one collision, deep in the nesting: \(result.1)"
        )
    }
}
