import DocSyncJSON
import Foundation
import Testing

/// The merge conformance suite (MergeConformance/*.json, written by
/// scripts/generate-merge-cases.py): every case's expected result comes from
/// scripts/merge_model.py, a separate implementation of docs/SYNC.md's rules in Python.
/// Each case is also merged with the sides swapped (and the later save with them): every
/// array must come out the same (docs/SYNC.md, "Same bytes everywhere").
@Suite("Merge conformance suite (independent model)")
struct MergeConformanceTests {
    struct Case: Decodable {
        var name: String
        var baseText: String?
        var localText: String
        var remoteText: String
        var winner: String
        var counters: [String]
        var sets: [String]
        var arrayKeys: [String: String]
        var expectedText: String
        var conflicts: [String]
    }

    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "MergeConformance"
    ).path

    static func parse(_ text: String) -> JSONValue { try! JSONValueParser.parse(Array(text.utf8)) }
    static func compact(_ value: JSONValue) -> String {
        String(decoding: JSONValueWriter.writeCompact(value), as: UTF8.self)
    }

    /// Every array in a value (compact, keys of objects inside sorted), walked in sorted key order.
    static func arrays(_ value: JSONValue) -> [String] {
        var out: [String] = []
        var pending = [value]
        while let next = pending.popLast() {
            switch next {
            case .array(let items):
                out.append(compact(.array(items)))
                pending += items
            case .object(let members):
                pending += members.keys.sorted().map { members[$0]! }
            default: break
            }
        }
        return out
    }

    @Test("every case of the suite gives the model's result and conflicts; swapped sides give the same arrays")
    func suite() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.folder).filter { $0.hasSuffix(".json") }
            .sorted()
        #expect(files.count >= 5, "suite files in \(Self.folder): \(files)")
        var total = 0
        var failures: [String] = []
        var asymmetric: [String] = []
        for file in files {
            let data = try Data(contentsOf: URL(fileURLWithPath: Self.folder + "/" + file))
            for c in try JSONDecoder().decode([Case].self, from: data) {
                total += 1
                let base = c.baseText.map(Self.parse), local = Self.parse(c.localText),
                    remote = Self.parse(c.remoteText)
                let rules = FieldMerge.ArrayRules(sets: Set(c.sets), keys: c.arrayKeys)
                let later: FieldMerge.Winner = c.winner == "local" ? .local : .remote
                let result = FieldMerge.merge(
                    base: base, local: local, remote: remote, collisions: later, counters: Set(c.counters),
                    arrays: rules)
                let got = Self.compact(result.merged), want = Self.compact(Self.parse(c.expectedText))
                let paths = result.conflicts.map(\.path).sorted()
                if got != want || paths != c.conflicts.sorted() {
                    failures.append(
                        "\(file): \(c.name)\n  base   \(c.baseText ?? "none")\n  local  \(c.localText)\n  remote \(c.remoteText)\n  later  \(c.winner)\n"
                            + "  want   \(want) \(c.conflicts)\n  got    \(got) \(paths)")
                }
                let mirror = FieldMerge.merge(
                    base: base, local: remote, remote: local, collisions: later == .local ? .remote : .local,
                    counters: Set(c.counters), arrays: rules)
                if Self.arrays(mirror.merged) != Self.arrays(result.merged) { asymmetric.append("\(file): \(c.name)") }
            }
        }
        print("MERGE-CONFORMANCE cases=\(total) failed=\(failures.count) asymmetric=\(asymmetric.count)")
        #expect(total >= 1_000, "the suite has \(total) cases")
        #expect(
            failures.isEmpty,
            Comment(
                rawValue: "\(failures.count) of \(total) cases differ from the model:\n"
                    + failures.prefix(8).joined(separator: "\n")))
        #expect(asymmetric.isEmpty, "arrays differ with the sides swapped: \(asymmetric.prefix(8))")
    }
}
