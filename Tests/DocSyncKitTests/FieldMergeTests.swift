import DocSyncJSON
import DocSyncKit
import Foundation
import Testing

private func json(_ text: String) -> JSONValue {
    do { return try JSONValueParser.parse(Array(text.utf8)) } catch { fatalError("bad test JSON \(text): \(error)") }
}

private func compactText(_ value: JSONValue) -> String {
    String(decoding: JSONValueWriter.writeCompact(value), as: UTF8.self)
}

/// One table row: three documents as JSON text, and what the merge must give.
struct MergeCase: CustomTestStringConvertible, Sendable {
    var name: String
    var base: String?
    var local: String
    var remote: String
    var collisions: FieldMerge.Winner = .local
    var counters: Set<String> = []
    var merged: String
    /// Expected conflicts as (path, base, local, remote, taken), compact JSON texts.
    var conflicts: [FieldMerge.FieldConflict] = []

    var testDescription: String { name }
}

private func conflict(_ path: String, _ base: String?, _ local: String?, _ remote: String?, _ taken: String)
    -> FieldMerge.FieldConflict
{
    FieldMerge.FieldConflict(
        path: path, base: base, local: local, remote: remote, taken: FieldMerge.Winner(rawValue: taken)!)
}

// MARK: - Table

let mergeCases: [MergeCase] = [
    // One side changes.
    MergeCase(
        name: "local edit is taken", base: #"{"a":1,"b":2}"#, local: #"{"a":1,"b":3}"#, remote: #"{"a":1,"b":2}"#,
        merged: #"{"a":1,"b":3}"#),
    MergeCase(
        name: "remote edit is taken", base: #"{"a":1,"b":2}"#, local: #"{"a":1,"b":2}"#, remote: #"{"a":"x","b":2}"#,
        merged: #"{"a":"x","b":2}"#),
    MergeCase(
        name: "edits to different fields both apply", base: #"{"a":1,"b":2}"#, local: #"{"a":10,"b":2}"#,
        remote: #"{"a":1,"b":20}"#, merged: #"{"a":10,"b":20}"#),
    MergeCase(
        name: "added on one side each", base: #"{"a":1}"#, local: #"{"a":1,"l":true}"#, remote: #"{"a":1,"r":null}"#,
        merged: #"{"a":1,"l":true,"r":null}"#),
    MergeCase(
        name: "removed locally, unchanged remotely", base: #"{"a":1,"b":2}"#, local: #"{"b":2}"#,
        remote: #"{"a":1,"b":2}"#, merged: #"{"b":2}"#),
    MergeCase(
        name: "removed remotely, unchanged locally", base: #"{"a":1,"b":2}"#, local: #"{"a":1,"b":2}"#,
        remote: #"{"a":1}"#, merged: #"{"a":1}"#),
    MergeCase(
        name: "removed on both sides", base: #"{"a":1,"b":2}"#, local: #"{"a":1}"#, remote: #"{"a":1}"#,
        merged: #"{"a":1}"#),
    MergeCase(
        name: "removed on one side, other field edited on the other", base: #"{"a":1,"b":2}"#, local: #"{"b":2}"#,
        remote: #"{"a":1,"b":5}"#, merged: #"{"b":5}"#),

    // Both sides change the same field.
    MergeCase(
        name: "same change on both sides is no conflict", base: #"{"a":1,"b":{"c":2}}"#,
        local: #"{"a":7,"b":{"c":[1]}}"#, remote: #"{"a":7,"b":{"c":[1]}}"#, merged: #"{"a":7,"b":{"c":[1]}}"#),
    MergeCase(
        name: "collision, local wins", base: #"{"a":1}"#, local: #"{"a":2}"#, remote: #"{"a":3}"#,
        collisions: .local, merged: #"{"a":2}"#, conflicts: [conflict("a", "1", "2", "3", "local")]),
    MergeCase(
        name: "collision, remote wins", base: #"{"a":1}"#, local: #"{"a":2}"#, remote: #"{"a":3}"#,
        collisions: .remote, merged: #"{"a":3}"#, conflicts: [conflict("a", "1", "2", "3", "remote")]),
    MergeCase(
        name: "added on both sides with different values", base: #"{}"#, local: #"{"n":"l"}"#,
        remote: #"{"n":"r"}"#, collisions: .remote, merged: #"{"n":"r"}"#,
        conflicts: [conflict("n", nil, #""l""#, #""r""#, "remote")]),

    // Delete against edit: the edit wins whatever the collision side, and is reported.
    MergeCase(
        name: "deleted locally, edited remotely", base: #"{"a":1,"k":{"x":1}}"#, local: #"{"a":1}"#,
        remote: #"{"a":1,"k":{"x":2}}"#, collisions: .local, merged: #"{"a":1,"k":{"x":2}}"#,
        conflicts: [conflict("k", #"{"x":1}"#, nil, #"{"x":2}"#, "remote")]),
    MergeCase(
        name: "edited locally, deleted remotely", base: #"{"a":1,"k":"v"}"#, local: #"{"a":1,"k":"w"}"#,
        remote: #"{"a":1}"#, collisions: .remote, merged: #"{"a":1,"k":"w"}"#,
        conflicts: [conflict("k", #""v""#, #""w""#, nil, "local")]),
    MergeCase(
        name: "nested delete against nested edit", base: #"{"p":{"q":{"r":1},"s":1}}"#, local: #"{"p":{"s":1}}"#,
        remote: #"{"p":{"q":{"r":2},"s":2}}"#, merged: #"{"p":{"s":2,"q":{"r":2}}}"#,
        conflicts: [conflict("p.q", #"{"r":1}"#, nil, #"{"r":2}"#, "remote")]),

    // Nested objects.
    MergeCase(
        name: "nested fields merge", base: #"{"address":{"city":"Oslo","zip":"0150"},"n":1}"#,
        local: #"{"address":{"city":"Bergen","zip":"0150"},"n":1}"#,
        remote: #"{"address":{"city":"Oslo","zip":"5003","street":"Bryggen"},"n":2}"#,
        merged: #"{"address":{"city":"Bergen","zip":"5003","street":"Bryggen"},"n":2}"#),
    MergeCase(
        name: "nested collision path", base: #"{"address":{"city":"Oslo"}}"#, local: #"{"address":{"city":"Bergen"}}"#,
        remote: #"{"address":{"city":"Tromsø"}}"#, collisions: .remote, merged: #"{"address":{"city":"Tromsø"}}"#,
        conflicts: [conflict("address.city", #""Oslo""#, #""Bergen""#, #""Tromsø""#, "remote")]),
    MergeCase(
        name: "three levels deep", base: #"{"a":{"b":{"c":{"d":1,"e":1}}}}"#,
        local: #"{"a":{"b":{"c":{"d":2,"e":1}}}}"#,
        remote: #"{"a":{"b":{"c":{"d":1,"e":3},"f":4}}}"#, merged: #"{"a":{"b":{"c":{"d":2,"e":3},"f":4}}}"#),
    MergeCase(
        name: "object created on both sides merges its fields", base: #"{}"#, local: #"{"o":{"a":1,"s":1}}"#,
        remote: #"{"o":{"b":2,"s":1}}"#, merged: #"{"o":{"a":1,"s":1,"b":2}}"#),
    MergeCase(
        name: "scalar replaced by objects on both sides", base: #"{"o":5}"#, local: #"{"o":{"a":1}}"#,
        remote: #"{"o":{"b":2}}"#, merged: #"{"o":{"a":1,"b":2}}"#),
    MergeCase(
        name: "several conflicts in merge order", base: #"{"z":{"y":1},"a":1}"#, local: #"{"z":{"y":2},"a":2}"#,
        remote: #"{"z":{"y":3},"a":3}"#, merged: #"{"z":{"y":2},"a":2}"#,
        conflicts: [conflict("z.y", "1", "2", "3", "local"), conflict("a", "1", "2", "3", "local")]),

    // Key order.
    MergeCase(
        name: "local order, then remote's new keys in remote's order", base: #"{"a":1,"b":2,"c":3}"#,
        local: #"{"c":3,"a":1,"b":2,"x":0}"#, remote: #"{"a":1,"b":2,"c":3,"z":1,"y":2}"#,
        merged: #"{"c":3,"a":1,"b":2,"x":0,"z":1,"y":2}"#),
    MergeCase(
        name: "an object local left alone is remote's, order included", base: #"{"o":{"a":1,"b":2},"n":1}"#,
        local: #"{"o":{"a":1,"b":2},"n":2}"#, remote: #"{"o":{"b":3,"a":1},"n":1}"#,
        merged: #"{"o":{"b":3,"a":1},"n":2}"#),
    MergeCase(
        name: "remote's reordering is not kept where local changed the object", base: #"{"a":1,"b":2}"#,
        local: #"{"a":1,"b":2,"c":3}"#, remote: #"{"b":2,"a":1}"#, merged: #"{"a":1,"b":2,"c":3}"#),

    // Numbers.
    MergeCase(
        name: "numbers keep their text", base: #"{"n":1,"big":12345678901234567890.1234567890,"e":1e400}"#,
        local: #"{"n":1.0,"big":12345678901234567890.1234567890,"e":1e400}"#,
        remote: #"{"n":1,"big":12345678901234567890.1234567890,"e":1E400}"#,
        merged: #"{"n":1.0,"big":12345678901234567890.1234567890,"e":1E400}"#),
    MergeCase(
        name: "1.0 and 1 are different changes", base: #"{"n":0}"#, local: #"{"n":1.0}"#, remote: #"{"n":1}"#,
        merged: #"{"n":1.0}"#, conflicts: [conflict("n", "0", "1.0", "1", "local")]),

    // Counters.
    MergeCase(
        name: "counter adds both deltas", base: #"{"plays":1}"#, local: #"{"plays":11}"#, remote: #"{"plays":6}"#,
        counters: ["plays"], merged: #"{"plays":16}"#),
    MergeCase(
        name: "nested counter", base: #"{"stats":{"plays":1,"skips":0}}"#, local: #"{"stats":{"plays":11,"skips":0}}"#,
        remote: #"{"stats":{"plays":6,"skips":2}}"#, counters: ["stats.plays"],
        merged: #"{"stats":{"plays":16,"skips":2}}"#),
    MergeCase(
        name: "counter path is exact: other fields still collide", base: #"{"stats":{"plays":1,"n":1}}"#,
        local: #"{"stats":{"plays":2,"n":2}}"#, remote: #"{"stats":{"plays":3,"n":3}}"#, counters: ["stats.plays"],
        merged: #"{"stats":{"plays":4,"n":2}}"#, conflicts: [conflict("stats.n", "1", "2", "3", "local")]),
    MergeCase(
        name: "identical increments both count", base: #"{"c":1}"#, local: #"{"c":11}"#, remote: #"{"c":11}"#,
        counters: ["c"], merged: #"{"c":21}"#),
    MergeCase(
        name: "counter changed on one side only", base: #"{"c":1}"#, local: #"{"c":1}"#, remote: #"{"c":5}"#,
        counters: ["c"], merged: #"{"c":5}"#),
    MergeCase(
        name: "decimal counter is exact", base: #"{"c":0.1}"#, local: #"{"c":0.3}"#, remote: #"{"c":0.2}"#,
        counters: ["c"], merged: #"{"c":0.4}"#),
    MergeCase(
        name: "decimal counter keeps the finest scale", base: #"{"c":1.50}"#, local: #"{"c":2}"#,
        remote: #"{"c":1.75}"#,
        counters: ["c"], merged: #"{"c":2.25}"#),
    MergeCase(
        name: "decimal counter keeps trailing zeros", base: #"{"c":1.00}"#, local: #"{"c":2.50}"#,
        remote: #"{"c":1.50}"#,
        counters: ["c"], merged: #"{"c":3.00}"#),
    MergeCase(
        name: "big integer counter", base: #"{"c":12345678901234567890}"#, local: #"{"c":12345678901234567899}"#,
        remote: #"{"c":99999999999999999999999}"#, counters: ["c"], merged: #"{"c":100000000000000000000008}"#),
    MergeCase(
        name: "long decimal counter", base: #"{"c":12345678901234567890.1234567890}"#,
        local: #"{"c":12345678901234567891.1234567890}"#, remote: #"{"c":12345678901234567890.0000000001}"#,
        counters: ["c"], merged: #"{"c":12345678901234567891.0000000001}"#),
    MergeCase(
        name: "counter going negative", base: #"{"c":5}"#, local: #"{"c":-3}"#, remote: #"{"c":4}"#,
        counters: ["c"], merged: #"{"c":-4}"#),
    MergeCase(
        name: "counter back to zero", base: #"{"c":0.5}"#, local: #"{"c":0.25}"#, remote: #"{"c":0.25}"#,
        counters: ["c"], merged: #"{"c":0.00}"#),
    MergeCase(
        name: "counter with exponents", base: #"{"c":1e400}"#, local: #"{"c":2e400}"#, remote: #"{"c":1.5e400}"#,
        counters: ["c"], merged: #"{"c":2.5e400}"#),
    MergeCase(
        name: "counter with small exponent is written plainly", base: #"{"c":1e3}"#, local: #"{"c":2E3}"#,
        remote: #"{"c":1.5e3}"#, counters: ["c"], merged: #"{"c":2500}"#),
    MergeCase(
        name: "counter created on both sides adds from zero", base: #"{}"#, local: #"{"c":2}"#, remote: #"{"c":3}"#,
        counters: ["c"], merged: #"{"c":5}"#),
    MergeCase(
        name: "counter that is not a number collides", base: #"{"c":1}"#, local: #"{"c":"many"}"#, remote: #"{"c":6}"#,
        collisions: .remote, counters: ["c"], merged: #"{"c":6}"#,
        conflicts: [conflict("c", "1", #""many""#, "6", "remote")]),
    MergeCase(
        name: "counter deleted on one side: the change wins", base: #"{"c":1}"#, local: #"{}"#, remote: #"{"c":6}"#,
        counters: ["c"], merged: #"{"c":6}"#, conflicts: [conflict("c", "1", nil, "6", "remote")]),
    MergeCase(
        name: "counter whose base is not a number collides", base: #"{"c":null}"#, local: #"{"c":1}"#,
        remote: #"{"c":2}"#, counters: ["c"], merged: #"{"c":1}"#, conflicts: [conflict("c", "null", "1", "2", "local")]
    ),
    MergeCase(
        name: "counter key containing a dot", base: #"{"a.b":{"c~d":1}}"#, local: #"{"a.b":{"c~d":2}}"#,
        remote: #"{"a.b":{"c~d":3}}"#, counters: ["a~1b.c~0d"], merged: #"{"a.b":{"c~d":4}}"#),

    // Unicode keys.
    MergeCase(
        name: "unicode keys merge", base: #"{"名前":"太郎","ключ":1,"😀":[]}"#, local: #"{"名前":"花子","ключ":1,"😀":[]}"#,
        remote: #"{"名前":"太郎","ключ":2,"😀":[],"é":true}"#, merged: #"{"名前":"花子","ключ":2,"😀":[],"é":true}"#),
    MergeCase(
        name: "unicode and escaped keys in conflict paths", base: #"{"ü":{"a.b":1,"~":1}}"#,
        local: #"{"ü":{"a.b":2,"~":2}}"#, remote: #"{"ü":{"a.b":3,"~":3}}"#, merged: #"{"ü":{"a.b":2,"~":2}}"#,
        conflicts: [conflict("ü.a~1b", "1", "2", "3", "local"), conflict("ü.~0", "1", "2", "3", "local")]),

    // Type changes and atomic values.
    MergeCase(
        name: "object against scalar collides", base: #"{"t":{"a":1}}"#, local: #"{"t":{"a":2}}"#,
        remote: #"{"t":"gone"}"#,
        collisions: .remote, merged: #"{"t":"gone"}"#,
        conflicts: [conflict("t", #"{"a":1}"#, #"{"a":2}"#, #""gone""#, "remote")]),
    MergeCase(
        name: "type changed on one side is taken", base: #"{"t":{"a":1}}"#, local: #"{"t":{"a":1}}"#,
        remote: #"{"t":[1,2]}"#, merged: #"{"t":[1,2]}"#),
    MergeCase(
        name: "array against object collides", base: #"{"t":1}"#, local: #"{"t":[1]}"#, remote: #"{"t":{"a":1}}"#,
        merged: #"{"t":[1]}"#, conflicts: [conflict("t", "1", "[1]", #"{"a":1}"#, "local")]),
    MergeCase(
        name: "insertions at both ends of an array are both kept", base: #"{"a":[1,2]}"#, local: #"{"a":[1,2,3]}"#,
        remote: #"{"a":[0,1,2]}"#, merged: #"{"a":[0,1,2,3]}"#),
    MergeCase(
        name: "objects without an identity changed in the same slot collide as the array", base: #"{"a":[{"x":1}]}"#,
        local: #"{"a":[{"x":2}]}"#,
        remote: #"{"a":[{"x":1,"y":1}]}"#, collisions: .remote, merged: #"{"a":[{"x":1,"y":1}]}"#,
        conflicts: [conflict("a", #"[{"x":1}]"#, #"[{"x":2}]"#, #"[{"x":1,"y":1}]"#, "remote")]),
    MergeCase(name: "null is a value", base: #"{"a":null}"#, local: #"{"a":null}"#, remote: #"{}"#, merged: #"{}"#),
    MergeCase(
        name: "booleans and strings", base: #"{"b":true,"s":"x"}"#, local: #"{"b":false,"s":"x"}"#,
        remote: #"{"b":true,"s":"y\n\"z\""}"#, merged: #"{"b":false,"s":"y\n\"z\""}"#),

    // No base: created on both sides.
    MergeCase(
        name: "created on both sides", base: nil, local: #"{"a":1,"same":[1],"diff":1}"#,
        remote: #"{"b":2,"same":[1],"diff":2}"#, merged: #"{"a":1,"same":[1],"diff":1,"b":2}"#,
        conflicts: [conflict("diff", nil, "1", "2", "local")]),

    // Reserved keys.
    MergeCase(
        name: "reserved keys are left to the caller", base: #"{"refId":"r","changesetId":"c0","v":1}"#,
        local: #"{"refId":"r","changesetId":"c1","v":1}"#, remote: #"{"changesetId":"c2","refId":"r","v":2}"#,
        merged: #"{"refId":"r","changesetId":"c1","v":2}"#),
    MergeCase(
        name: "reserved key only remote has", base: #"{"v":1}"#, local: #"{"v":2}"#,
        remote: #"{"v":1,"changesetId":"c2"}"#, merged: #"{"v":2,"changesetId":"c2"}"#),

    // Non-object roots.
    MergeCase(
        name: "scalar roots collide at the empty path", base: "1", local: "2", remote: "3", collisions: .remote,
        merged: "3", conflicts: [conflict("", "1", "2", "3", "remote")]),
    MergeCase(name: "array root changed on one side", base: "[1]", local: "[1]", remote: "[2]", merged: "[2]")
]

@Suite("FieldMerge")
struct FieldMergeTests {
    @Test(arguments: mergeCases)
    func table(_ c: MergeCase) {
        let result = FieldMerge.merge(
            base: c.base.map(json), local: json(c.local), remote: json(c.remote),
            collisions: c.collisions, counters: c.counters)
        // Compact text: checks key order and exact numbers too.
        #expect(compactText(result.merged) == compactText(json(c.merged)))
        #expect(result.merged == json(c.merged))
        #expect(result.conflicts == c.conflicts)
    }

    @Test func pathEscaping() {
        #expect(FieldMerge.path(["address", "city"]) == "address.city")
        #expect(FieldMerge.path(["a.b", "c~d", "~1", ""]) == "a~1b.c~0d.~01.")
        #expect(FieldMerge.keys(inPath: "a~1b.c~0d.~01.") == ["a.b", "c~d", "~1", ""])
        #expect(FieldMerge.keys(inPath: "stats.plays") == ["stats", "plays"])
        #expect(FieldMerge.keys(inPath: "") == [])
        #expect(FieldMerge.keys(inPath: "a~x~") == ["a~x~"])  // not escapes: kept
    }

    @Test func customReservedPaths() {
        let result = FieldMerge.merge(
            base: json(#"{"meta":{"rev":1},"v":1}"#), local: json(#"{"meta":{"rev":2},"v":1}"#),
            remote: json(#"{"meta":{"rev":3},"v":2}"#), collisions: .remote, counters: [],
            ignoring: ["meta.rev"])
        #expect(result.merged == json(#"{"meta":{"rev":2},"v":2}"#))
        #expect(result.conflicts.isEmpty)
        let plain = FieldMerge.merge(
            base: json(#"{"refId":"a"}"#), local: json(#"{"refId":"b"}"#),
            remote: json(#"{"refId":"c"}"#), collisions: .remote, counters: [], ignoring: [])
        #expect(plain.conflicts.map(\.path) == ["refId"])
    }

    @Test func conflictIsCodable() throws {
        let original = conflict("a.b", nil, #"{"x":1}"#, "2", "local")
        let data = try JSONEncoder().encode(original)
        #expect(try JSONDecoder().decode(FieldMerge.FieldConflict.self, from: data) == original)
    }

    @Test func mergedDocumentWritesInTheUsersIndent() throws {
        let localText = "{\n    \"a\": 1,\n    \"o\": {\n        \"x\": 1\n    }\n}\n"
        let result = FieldMerge.merge(
            base: json(#"{"a":1,"o":{"x":1}}"#), local: json(localText),
            remote: json(#"{"a":1,"o":{"x":2},"n":[]}"#), collisions: .local, counters: [])
        let indent = JSONValueWriter.detectIndent(of: Array(localText.utf8))
        #expect(
            String(decoding: JSONValueWriter.write(result.merged, indent: indent), as: UTF8.self)
                == "{\n    \"a\": 1,\n    \"o\": {\n        \"x\": 2\n    },\n    \"n\": []\n}\n")
    }

    // MARK: Depth

    /// {"k": {"k": ... bottom ...}} with `depth` levels of "k".
    private func chain(_ depth: Int, _ bottom: JSONValue) -> JSONValue {
        var value = bottom
        for _ in 0..<depth { value = JSONValue(members: [("k", value)]) }
        return value
    }

    @Test func hundredThousandDeepMerge() {
        let depth = 100_000
        // At the bottom: v changed locally, w remotely, x on both sides.
        var base = chain(depth, ["v": 1, "w": 1, "x": 1])
        var local = chain(depth, ["v": 2, "w": 1, "x": 2])
        var remote = chain(depth, ["v": 1, "w": 3, "x": 3])
        var expected = chain(depth, ["v": 2, "w": 3, "x": 3])
        var result = FieldMerge.merge(base: base, local: local, remote: remote, collisions: .remote, counters: [])
        let matches = result.merged == expected
        #expect(matches)
        #expect(result.conflicts == [conflict(String(repeating: "k.", count: depth) + "x", "1", "2", "3", "remote")])

        // Swift would free these recursively and overflow the stack: free them flat.
        result.merged.dismantle()
        base.dismantle()
        local.dismantle()
        remote.dismantle()
        expected.dismantle()
    }

    // MARK: Properties

    @Test func identicalSidesGiveThatSide() {
        var changed = 0
        for seed in UInt64(1)...250 {
            var random = RandomDocuments(seed: seed)
            let base = random.document()
            let x = random.edited(base).document
            if x != base { changed += 1 }
            for result in [
                FieldMerge.merge(base: base, local: x, remote: x, collisions: .local, counters: []),
                FieldMerge.merge(base: base, local: base, remote: x, collisions: .local, counters: []),
                FieldMerge.merge(base: base, local: x, remote: base, collisions: .remote, counters: []),
                FieldMerge.merge(base: nil, local: x, remote: x, collisions: .remote, counters: [])
            ] {
                #expect(result.merged == x, "seed \(seed): base \(base) x \(x) merged \(result.merged)")
                #expect(result.conflicts.isEmpty, "seed \(seed): \(result.conflicts)")
            }
        }
        #expect(changed > 200)  // the edits are not vacuous
    }

    @Test func disjointEditsBothSurvive() {
        var bothEdited = 0
        for seed in UInt64(1)...250 {
            var random = RandomDocuments(seed: seed)
            let base = random.document()
            let (local, localEdits) = random.edited(base)
            let (remote, remoteEdits) = random.edited(base, avoiding: localEdits.map(\.path))
            if local != base, remote != base { bothEdited += 1 }
            // Expected: local's edits, then remote's, applied to the base in order.
            var expected = base
            for edit in localEdits + remoteEdits { expected = edit.apply(to: expected) }
            for collisions in [FieldMerge.Winner.local, .remote] {
                let result = FieldMerge.merge(
                    base: base, local: local, remote: remote, collisions: collisions, counters: [])
                #expect(
                    result.merged == expected,
                    "seed \(seed): base \(base) local \(local) remote \(remote) merged \(result.merged)")
                #expect(result.conflicts.isEmpty, "seed \(seed): \(result.conflicts)")
            }
        }
        #expect(bothEdited > 150, "\(bothEdited) of 250 seeds edited both sides")
    }

    @Test func counterPropertyMatchesIntegerArithmetic() {
        for seed in UInt64(1)...300 {
            var rng = SeededGenerator(seed: seed)
            let scale = Int.random(in: 0...3, using: &rng)
            let b = Int.random(in: -1_000_000...1_000_000, using: &rng)
            var dl = 0, dr = 0
            while dl == 0 { dl = Int.random(in: -5000...5000, using: &rng) }
            while dr == 0 { dr = Int.random(in: -5000...5000, using: &rng) }
            func text(_ scaled: Int) -> String {
                guard scale > 0 else { return String(scaled) }
                let digits = String(scaled.magnitude)
                let padded = String(repeating: "0", count: max(0, scale + 1 - digits.count)) + digits
                return (scaled < 0 ? "-" : "") + padded.dropLast(scale) + "." + padded.suffix(scale)
            }
            let result = FieldMerge.merge(
                base: ["n": .number(text(b))], local: ["n": .number(text(b + dl))],
                remote: ["n": .number(text(b + dr))], collisions: .local, counters: ["n"])
            #expect(result.merged == ["n": .number(text(b + dl + dr))], "seed \(seed)")
            #expect(result.conflicts.isEmpty, "seed \(seed)")
        }
    }
}

// MARK: - Random documents and edits

/// An edit at a key path: set (replace or add) or remove.
private struct Edit {
    var path: [String]
    var value: JSONValue?  // nil removes

    func apply(to document: JSONValue) -> JSONValue {
        Self.apply(value, at: path[...], in: document)
    }

    private static func apply(_ value: JSONValue?, at path: ArraySlice<String>, in document: JSONValue) -> JSONValue {
        guard case .object(let members) = document, let key = path.first else { return document }
        var pairs = members.map { ($0.key, $0.value) }
        if path.count == 1 {
            if let value {
                if let i = pairs.firstIndex(where: { $0.0 == key }) {
                    pairs[i].1 = value
                } else {
                    pairs.append((key, value))
                }
            } else {
                pairs.removeAll { $0.0 == key }
            }
        } else if let i = pairs.firstIndex(where: { $0.0 == key }) {
            pairs[i].1 = apply(value, at: path.dropFirst(), in: pairs[i].1)
        }
        return JSONValue(members: pairs)
    }
}

private struct RandomDocuments {
    var rng: SeededGenerator
    var fresh = 0

    init(seed: UInt64) { rng = SeededGenerator(seed: seed) }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }

    static let keys = ["a", "b", "name", "名前", "ключ", "😀", "a.b", "x~y", "", "é", "e\u{301}x"]

    mutating func scalar() -> JSONValue {
        switch int(0...6) {
        case 0: .string(["", "x", "Ünïcödé", "line\nbreak", "q\"uote"][int(0...4)])
        case 1: .number(["0", "1", "1.0", "-2.50", "12345678901234567890.1234567890", "1e400"][int(0...5)])
        case 2: .bool(int(0...1) == 0)
        case 3: .null
        case 4: .array((0..<int(0...3)).map { _ in .number(String(int(0...9))) })
        case 5: .array([["k": .string("v\(int(0 ... 3))")]])
        default: .number(String(int(-100...100)))
        }
    }

    mutating func object(depth: Int) -> JSONValue {
        var pairs: [(String, JSONValue)] = []
        for _ in 0..<int(0...5) {
            let key = Self.keys[int(0...Self.keys.count - 1)]
            guard !pairs.contains(where: { $0.0 == key }) else { continue }
            pairs.append((key, depth > 0 && int(0...2) == 0 ? object(depth: depth - 1) : scalar()))
        }
        return JSONValue(members: pairs)
    }

    mutating func document() -> JSONValue { object(depth: 3) }

    /// Paths of every member, and of every object (where keys can be added).
    private func paths(_ document: JSONValue) -> (members: [[String]], objects: [[String]]) {
        var members: [[String]] = [], objects: [[String]] = [[]]
        var pending: [([String], JSONValue)] = [([], document)]
        while let (path, value) = pending.popLast() {
            guard case .object(let m) = value else { continue }
            for (key, child) in m {
                members.append(path + [key])
                if case .object = child {
                    objects.append(path + [key])
                    pending.append((path + [key], child))
                }
            }
        }
        return (members, objects)
    }

    /// Neither path is a prefix of (or equal to) the other.
    private static func disjoint(_ a: [String], _ b: [String]) -> Bool {
        let n = min(a.count, b.count)
        return !zip(a.prefix(n), b.prefix(n)).allSatisfy { $0.utf8.elementsEqual($1.utf8) }
    }

    /// 1...4 random edits (change, replace with an object, add a fresh key, remove), none
    /// touching a path that overlaps `avoiding`. Edits never reorder keys.
    mutating func edited(_ document: JSONValue, avoiding: [[String]] = []) -> (document: JSONValue, edits: [Edit]) {
        var doc = document
        var edits: [Edit] = []
        for _ in 0..<int(1...4) {
            let (members, objects) = paths(doc)
            let allowed = { (path: [String]) in avoiding.allSatisfy { Self.disjoint($0, path) } }
            var edit: Edit?
            switch int(0...3) {
            case 0, 1:  // change a member
                let candidates = members.filter(allowed)
                if !candidates.isEmpty {
                    let path = candidates[int(0...candidates.count - 1)]
                    var value = int(0...3) == 0 ? object(depth: 1) : scalar()
                    if lookup(path, in: doc) == value {
                        value = .string("changed \(fresh)")
                        fresh += 1
                    }
                    edit = Edit(path: path, value: value)
                }
            case 2:  // add a fresh key to an object
                fresh += 1
                let key = "new \(fresh)"
                let candidates = objects.filter { allowed($0 + [key]) }
                if !candidates.isEmpty {
                    edit = Edit(path: candidates[int(0...candidates.count - 1)] + [key], value: scalar())
                }
            default:  // remove a member
                let candidates = members.filter(allowed)
                if !candidates.isEmpty { edit = Edit(path: candidates[int(0...candidates.count - 1)], value: nil) }
            }
            if let edit {
                doc = edit.apply(to: doc)
                edits.append(edit)
            }
        }
        return (doc, edits)
    }

    private func lookup(_ path: [String], in document: JSONValue) -> JSONValue? {
        var value = document
        for key in path {
            guard case .object(let members) = value, let child = members[key] else { return nil }
            value = child
        }
        return value
    }
}
