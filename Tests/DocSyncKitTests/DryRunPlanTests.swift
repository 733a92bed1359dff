import Foundation
import Testing

@testable import DocSyncKit

/// `--dry-run` prints the plan a sync would carry out. On random scenarios (two replicas
/// editing, adding, renaming, deleting and breaking documents, then syncing in turn), the
/// plan a dry run shows must be what the real run right after it does: the same documents
/// pulled and pushed, the same kinds, paths and conflicts.
@Suite("Dry run shows the plan the real run carries out")
struct DryRunPlanTests {
    /// What a report says, without the ids a real run makes up (new refIds, merge and
    /// stamp changesetIds): dry runs show `(new)` there.
    struct Shape: Equatable, CustomStringConvertible {
        var pulled: [String]
        var pushed: [String]
        var conflicts: [String]
        var waiting: Int
        var description: String { "pulled \(pulled) pushed \(pushed) conflicts \(conflicts) waiting \(waiting)" }

        init(_ report: SyncReport) {
            pulled = report.pulled.map { "\($0.kind) \($0.path) \($0.fromPath ?? "")" }.sorted()
            pushed = report.pushed.map { "\($0.kind) \($0.path) \($0.fromPath ?? "")" }.sorted()
            conflicts = report.conflicts.map {
                "\($0.path) \($0.stored.rawValue) \(($0.fields ?? []).joined(separator: ","))"
            }
            .sorted()
            waiting = report.waiting.count
        }
    }

    /// The convergence fuzzer's seeded generator.
    typealias Rng = ConvergenceFuzzTests.Rng

    static let seed: UInt64 = {
        if let text = ProcessInfo.processInfo.environment["DOCSYNC_DRYRUN_SEED"], let seed = UInt64(text) {
            return seed
        }
        return 20_261_123
    }()

    /// One random edit in `dir`: a field changed, a document added, renamed, deleted or
    /// broken, or a broken one fixed.
    static func edit(_ set: ReplicaSet, _ dir: String, _ rng: inout Rng, step: Int) {
        let docs = set.snapshot(dir).keys.sorted()
        let pick = docs.isEmpty ? nil : docs[rng.below(docs.count)]
        switch rng.below(10) {
        case 0, 1, 2, 3:
            guard let pick, let text = set.read(dir, pick),
                var object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
            else { fallthrough }
            object[["a", "b", "c"][rng.below(3)]] = "s\(step)"
            let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            set.write(dir, pick, String(decoding: data, as: UTF8.self))
        case 4, 5:
            set.write(dir, "n\(step).json", "{\"a\": \"new\(step)\"}")
        case 6:
            guard let pick else { return }
            try? FileManager.default.moveItem(atPath: dir + "/" + pick, toPath: dir + "/moved\(step).json")
        case 7:
            guard let pick else { return }
            try? FileManager.default.removeItem(atPath: dir + "/" + pick)
        case 8:
            guard let pick, let text = set.read(dir, pick) else { return }
            set.write(dir, pick, String(text.dropLast(2)))
        default:
            guard let pick, let text = set.read(dir, pick), !text.hasSuffix("}") else { return }
            set.write(dir, pick, text + "\"}")
        }
    }

    @Test("dry run and real run agree on random scenarios", arguments: 0..<8)
    func dryRunMatchesRealRun(_ round: Int) throws {
        var rng = Rng(state: Self.seed &+ UInt64(round))
        let set = ReplicaSet()
        let (a, b) = try set.twoReplicas(
            Dictionary(
                uniqueKeysWithValues: (0..<4).map { ("d\($0).json", "{\"a\": \"0\", \"b\": \"0\", \"c\": \"0\"}") }))
        // The max-delete guard has tests of its own; here it would only stop the scenario.
        for dir in [a, b] {
            let ws = try Workspace.open(at: dir, readOnly: false)
            try ws.settings.set("push.maxDeleteShare", "1")
            ws.close()
        }
        var compared = 0
        for step in 0..<12 {
            let dir = [a, b][rng.below(2)]
            for _ in 0..<(1 + rng.below(3)) { Self.edit(set, dir, &rng, step: step) }
            let syncing = [a, b][rng.below(2)]
            let planned: SyncReport
            do {
                let ws = try Workspace.open(at: syncing, readOnly: true)
                defer { ws.close() }
                planned = try ws.sync.run(.both, options: SyncOptions(dryRun: true))
            }
            let done = try set.sync(syncing)
            let shown = Shape(planned), happened = Shape(done)
            #expect(
                shown == happened,
                "seed \(Self.seed) round \(round) step \(step): dry run \(shown), real run \(happened)")
            compared += 1
        }
        #expect(compared == 12)
    }
}
