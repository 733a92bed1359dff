import Foundation
import Testing

@testable import DocSyncKit

/// A seeded, randomised multi-replica run checked against a model (after Joplin's sync
/// fuzzer): random creates, edits, renames, moves, deletes, copies, invalid saves and
/// fixes, syncs and `gc`s in random order, replicas offline for stretches. At every
/// quiescent point all replicas must be identical and every version a user saved must be
/// live or in a conflict store, unless that user later replaced or deleted it themselves.
/// The model needs nothing special for gc: an edit that meets a deletion whose tombstone
/// was purged is still a saved version nobody replaced, so it must be kept (edit beats
/// delete, docs/SYNC.md "Tombstones and docsync gc").
///
/// Short mode runs in CI. Long mode: `DOCSYNC_FUZZ_OPS=10000 DOCSYNC_FUZZ_SEEDS=5`;
/// replay one failure with `DOCSYNC_FUZZ_SEED=<seed>`.
@Suite struct ConvergenceFuzzTests {
    struct Rng {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E3779B97F4A7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58476D1CE4E5B9
            z = (z ^ (z >> 27)) &* 0x94D049BB133111EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
        mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    }

    enum RemoteKind: String, Sendable, CaseIterable { case dir, git }

    static var seeds: [UInt64] {
        let env = ProcessInfo.processInfo.environment
        if let one = env["DOCSYNC_FUZZ_SEED"].flatMap(UInt64.init) { return [one] }
        let count = env["DOCSYNC_FUZZ_SEEDS"].flatMap(Int.init) ?? 2
        return (0..<UInt64(count)).map { 0xD0C5 &+ $0 &* 7919 }
    }

    static var operations: Int { ProcessInfo.processInfo.environment["DOCSYNC_FUZZ_OPS"].flatMap(Int.init) ?? 150 }

    /// A tombstone age limit under a millisecond: gc purges every tombstone pushed in an
    /// earlier step, also those that replicas offline with pending edits have not seen
    /// (90 days never pass here). Not a few ms: whether a purge happens would then depend
    /// on how fast the machine is, and a seed would not replay.
    static let tinyTombstoneMaxAgeDays = "0.000000001"

    @Test(arguments: RemoteKind.allCases)
    func replicasConvergeAndNothingIsLost(_ kind: RemoteKind) throws {
        var purged = 0
        for seed in Self.seeds {
            purged += try run(seed: seed, kind: kind, operations: Self.operations)
        }
        // Otherwise a change to the mix or to gc could silently stop exercising purges.
        if Self.seeds.count * Self.operations >= 300 {
            #expect(purged > 0, "no gc purged a tombstone on the \(kind.rawValue) remote in \(Self.seeds.count) seeds")
        }
    }

    /// Runs one seed; returns how many tombstones gc purged.
    @discardableResult
    func run(seed: UInt64, kind: RemoteKind, operations: Int) throws -> Int {
        var rng = Rng(state: seed)
        let files = ReplicaSet()
        let gitSet = kind == .git ? try GitReplicaSet() : nil
        let names = ["r0", "r1", "r2"]
        var dirs: [String] = []
        for name in names { dirs.append(try gitSet?.make(name) ?? files.make(name)) }
        // Some replicas purge by age too; the others only what every replica has seen.
        for dir in dirs where rng.chance(50) {
            let ws = try Workspace.open(at: dir, readOnly: false)
            defer { ws.close() }
            try ws.settings.set("gc.tombstoneMaxAgeDays", Self.tinyTombstoneMaxAgeDays)
        }
        var syncs = 0, quiescentPoints = 0, gcs = 0, purged = 0
        func sync(_ dir: String) throws {
            syncs += 1
            let ws = try Workspace.open(at: dir, readOnly: false)
            defer { ws.close() }
            _ = try ws.sync.run(.both, options: SyncOptions(force: true))
        }
        // A tally every replica adds to, online or not: with `plays` declared a counter,
        // the merged value must be the sum of every increment made anywhere. The other
        // operations leave it alone, so nothing but counting decides its value.
        let tally = "tally.json"
        var tallyExpected = 0, increments = 0
        for dir in dirs {
            let ws = try Workspace.open(at: dir, readOnly: false)
            try ws.settings.set("merge.counters", "plays")
            ws.close()
        }
        files.write(dirs[0], tally, "{\"v\": \"tally\", \"plays\": 0}")
        for dir in dirs { try sync(dir) }
        func plays(_ i: Int) -> Int? {
            files.read(dirs[i], tally).flatMap { $0.firstMatch(of: #/"plays": (\d+)/#).flatMap { Int($0.1) } }
        }
        var offline = Set<Int>()
        var broken: [Int: [String: String]] = [:]  // replica → path → valid text to restore
        var required = Set<String>()  // tokens saved at a record point
        var superseded = Set<String>()  // tokens their own user replaced or deleted
        var counter = 0
        let context = "seed \(seed) (\(kind.rawValue) remote); replay with DOCSYNC_FUZZ_SEED=\(seed)"

        func token() -> String {
            counter += 1
            return "t\(counter)"
        }
        let trace = ProcessInfo.processInfo.environment["DOCSYNC_FUZZ_TRACE"] != nil
        func note(_ s: @autoclosure () -> String) { if trace { print("FUZZ \(kind.rawValue) \(s())") } }
        func docs(_ i: Int) -> [String] { files.snapshot(dirs[i]).keys.sorted() }
        func value(_ i: Int, _ path: String) -> String? { field(files.read(dirs[i], path), "v") }
        func recordPoint(_ i: Int) {
            for text in files.snapshot(dirs[i]).values { if let v = field(text, "v") { required.insert(v) } }
        }
        /// What `docsync gc` does; an offline replica cannot reach the remote, so only
        /// its local half runs (the CLI would exit 75 after it).
        func collectGarbage(_ i: Int) throws {
            gcs += 1
            let ws = try Workspace.open(at: dirs[i], readOnly: false)
            defer { ws.close() }
            let report = try ws.gc.collect(dryRun: false, localOnly: offline.contains(i))
            purged += report.remote?.purged.count ?? 0
            note(
                "gc r\(i) offline=\(offline.sorted()) purged \(report.remote?.purged.map { $0.path ?? $0.refId } ?? [])"
            )
        }

        for step in 0..<operations {
            let i = rng.below(dirs.count)
            let dir = dirs[i]
            let existing = docs(i).filter { broken[i]?[$0] == nil && $0 != tally }
            switch rng.below(100) {
            case 0..<18:
                let folder = ["", "a/", "b/c/"][rng.below(3)]
                let path = "\(folder)d\(rng.below(12)).json"
                let t = token()
                note("\(step) r\(i) write \(path) \(t) (was \(value(i, path) ?? "-"))")
                if let old = value(i, path) { superseded.insert(old) }
                // Saving over an invalid file ends it: no later fix writes the old text back.
                if let unfinished = broken[i]?[path] {
                    if let old = field(unfinished, "v") { superseded.insert(old) }
                    broken[i] = nil
                }
                files.write(dir, path, "{\"v\": \"\(t)\", \"n\": \(rng.below(5))}")
            case 18..<45 where !existing.isEmpty:
                let path = existing[rng.below(existing.count)]
                if let old = value(i, path) { superseded.insert(old) }
                let text = files.read(dir, path)!
                let t = token()
                note("\(step) r\(i) edit \(path) \(value(i, path) ?? "-") -> \(t)")
                files.write(dir, path, text.replacing(#/"v": "[^"]*"/#, with: "\"v\": \"\(t)\""))
            case 45..<53 where !existing.isEmpty:
                let path = existing[rng.below(existing.count)]
                let target = ["", "a/", "b/c/"][rng.below(3)] + "m\(rng.below(12)).json"
                if !FileManager.default.fileExists(atPath: dir + "/" + target) {
                    note("\(step) r\(i) mv \(path) \(target) (\(value(i, path) ?? "-"))")
                    try FileManager.default.createDirectory(
                        atPath: ((dir + "/" + target) as NSString).deletingLastPathComponent,
                        withIntermediateDirectories: true)
                    try FileManager.default.moveItem(atPath: dir + "/" + path, toPath: dir + "/" + target)
                }
            case 53..<60 where !existing.isEmpty:
                let path = existing[rng.below(existing.count)]
                if let old = value(i, path) { superseded.insert(old) }
                note("\(step) r\(i) rm \(path) (\(value(i, path) ?? "-"))")
                try FileManager.default.removeItem(atPath: dir + "/" + path)
            case 60..<65 where !existing.isEmpty:
                let path = existing[rng.below(existing.count)]
                let copy = String(path.dropLast(5)) + "-copy\(rng.below(3)).json"
                if !FileManager.default.fileExists(atPath: dir + "/" + copy) {
                    note("\(step) r\(i) cp \(path) \(copy) (\(value(i, path) ?? "-"))")
                    try FileManager.default.copyItem(atPath: dir + "/" + path, toPath: dir + "/" + copy)
                }
            case 65..<69 where !existing.isEmpty && broken[i] == nil:
                let path = existing[rng.below(existing.count)]
                broken[i] = [path: files.read(dir, path)!]
                note("\(step) r\(i) break \(path) (\(value(i, path) ?? "-"))")
                files.write(dir, path, "{\"v\": \"broken")
            case 69..<74:
                if offline.contains(i) { offline.remove(i) } else if offline.count < 2 { offline.insert(i) }
                note("\(step) r\(i) offline=\(offline.contains(i))")
            case 74..<80:
                note("\(step) r\(i) gc")
                try collectGarbage(i)
            case 80..<86:
                if let now = plays(i), let text = files.read(dir, tally) {
                    let add = 1 + rng.below(5)
                    tallyExpected += add
                    increments += 1
                    note("\(step) r\(i) tally \(now) + \(add)")
                    files.write(dir, tally, text.replacing(#/"plays": \d+/#, with: "\"plays\": \(now + add)"))
                }
            default:
                if let fixes = broken[i], rng.chance(30) {
                    for (path, text) in fixes {
                        files.write(dir, path, text)
                        note("\(step) r\(i) fix \(path)")
                    }
                    broken[i] = nil
                }
                if !offline.contains(i) {
                    recordPoint(i)
                    note("\(step) r\(i) sync")
                    try sync(dir)
                }
            }
            // A quiescent point now and then, and at the end.
            if step == operations - 1 || rng.chance(4) {
                offline.removeAll()
                for (r, fixes) in broken { for (path, text) in fixes { files.write(dirs[r], path, text) } }
                broken.removeAll()
                note("\(step) quiesce")
                for _ in 0..<2 {
                    for (r, d) in dirs.enumerated() {
                        recordPoint(r)
                        try sync(d)
                    }
                }
                let first = files.snapshot(dirs[0])
                for d in dirs.dropFirst() {
                    let other = files.snapshot(d)
                    let differing = Set(first.keys).union(other.keys).filter { first[$0] != other[$0] }.sorted()
                    #expect(
                        differing.isEmpty,
                        "replicas differ at step \(step) in \(differing.map { "\($0): \(first[$0] ?? "-") vs \(other[$0] ?? "-")" }), \(context)"
                    )
                }
                var kept = Set<String>()
                for d in dirs {
                    for text in files.snapshot(d).values { if let v = field(text, "v") { kept.insert(v) } }
                    if let e = FileManager.default.enumerator(atPath: d + "/.docsync/conflicts") {
                        for case let p as String in e where p.hasSuffix(".json") && !p.hasSuffix(".meta.json") {
                            if let v = field(files.read(d + "/.docsync/conflicts", p), "v") { kept.insert(v) }
                        }
                    }
                }
                for r in dirs.indices {
                    #expect(
                        plays(r) == tallyExpected,
                        "r\(r)'s tally is \(plays(r).map(String.init) ?? "gone"), expected \(tallyExpected) (\(increments) increments) at step \(step), \(context)"
                    )
                }
                let lost = required.subtracting(superseded).subtracting(kept)
                #expect(lost.isEmpty, "lost versions \(lost.sorted()) at step \(step), \(context)")
                if !lost.isEmpty { return purged }
                for d in dirs {
                    let ws = try Workspace.open(at: d, readOnly: true)
                    let problems = ws.checks.verify()
                    ws.close()
                    #expect(problems.isEmpty, "verify at step \(step), \(context): \(problems)")
                }
                quiescentPoints += 1
            }
        }
        // Figures for scripts/reliability.sh.
        print(
            "RELIABILITY fuzz kind=\(kind.rawValue) seed=\(seed) ops=\(operations) syncs=\(syncs) quiescent_checks=\(quiescentPoints) saved_versions=\(required.count) gcs=\(gcs) purged=\(purged) counter_increments=\(increments)"
        )
        return purged
    }
}
