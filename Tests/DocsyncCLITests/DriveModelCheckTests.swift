// The model check's drive kind: three replicas, each syncing with its own copy of one
// folder remote, and steps that copy a random subset of the files between two copies
// (newest file wins, as a sync service does), in any order, with syncs killed at random
// steps. The replicas run the built binary; what they must hold comes from a model of
// what was typed:
//
// - each replica edits only its own field of every record (`f0` is replica 0's…), so no
//   two edits ever collide: a field's value is the last one its replica saved;
// - records are created by any replica, under names nobody else uses, and never deleted.
//
// After every step, no replica may hold a value of its own field other than the last it
// saved (a pull never takes back a user's edit), and no record it held may be gone. After
// a full propagation at the end, every replica must hold every record with every field's
// last value, and all three trees must be the same. Collisions of one field are the
// folder kind's business (ModelCheckTests), where every replica shares one folder.
//
//   DOCSYNC_DRIVE_MODEL_SEEDS=<n> DOCSYNC_DRIVE_MODEL_OPS=<m>   a longer campaign
//   DOCSYNC_DRIVE_MODEL_SEED=<s>                             replay one seed
//   DOCSYNC_DRIVE_MODEL_FIRST=<k>                            start at the k-th seed of the list

import DocSyncKit
import Foundation
import Testing

@Suite(.serialized) struct DriveModelCheckTests {
    static let env = ProcessInfo.processInfo.environment
    static let ops = env["DOCSYNC_DRIVE_MODEL_OPS"].flatMap(Int.init) ?? 80
    static let seeds: [UInt64] = {
        if let one = env["DOCSYNC_DRIVE_MODEL_SEED"].flatMap(UInt64.init) { return [one] }
        let count = env["DOCSYNC_DRIVE_MODEL_SEEDS"].flatMap(Int.init) ?? 3
        // A campaign split over several processes: each takes its own part of the list.
        let first = env["DOCSYNC_DRIVE_MODEL_FIRST"].flatMap(UInt64.init) ?? 0
        return (first..<first + UInt64(count)).map { 20_261_126 + $0 * 7919 }
    }()

    /// The drive: a copy of the remote per replica, and the service copying between them.
    struct Copies {
        let root: String
        func copy(_ i: Int) -> String { root + "/copy-\(i)" }

        /// Copies the files of copy `from` that copy `to` lacks or holds older, each one
        /// only if `take` says so.
        func propagate(_ from: Int, _ to: Int, take: (String) -> Bool) {
            let fm = FileManager.default
            guard let walker = fm.enumerator(atPath: copy(from)) else { return }
            while let relative = walker.nextObject() as? String {
                let source = copy(from) + "/" + relative, target = copy(to) + "/" + relative
                var isDir: ObjCBool = false
                guard fm.fileExists(atPath: source, isDirectory: &isDir), !isDir.boolValue,
                    !relative.hasSuffix("push.lock"),
                    !(relative as NSString).lastPathComponent.hasPrefix(".docsync-tmp-"), take(relative)
                else { continue }
                let here = (try? fm.attributesOfItem(atPath: source)[.modificationDate] as? Date) ?? nil
                if fm.contentsEqual(atPath: source, andPath: target) { continue }
                if let there = (try? fm.attributesOfItem(atPath: target)[.modificationDate] as? Date) ?? nil, let here,
                    there > here
                {
                    continue
                }
                try? fm.createDirectory(
                    atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                // As a service does: a temporary name, then a rename.
                let temporary = (target as NSString).deletingLastPathComponent + "/.syncing-\(UUID().uuidString)"
                guard (try? fm.copyItem(atPath: source, toPath: temporary)) != nil else { continue }
                if let here { try? fm.setAttributes([.modificationDate: here], ofItemAtPath: temporary) }
                _ = rename(temporary, target)
            }
        }
    }

    /// What was typed: every record, and the last value each replica saved in its field.
    struct Model {
        var records: [String] = []
        /// record → replica → value of that replica's field.
        var values: [String: [Int: Int]] = [:]
    }

    static func fieldPattern(_ i: Int) -> NSRegularExpression {
        try! NSRegularExpression(pattern: "\"f\(i)\"\\s*:\\s*-?[0-9]+")
    }

    static func fieldValue(_ bytes: [UInt8]?, _ i: Int) -> Int? {
        guard let bytes, let object = JSONHelp.object(bytes) else { return nil }
        return object["f\(i)"] as? Int
    }

    @Test(
        "drive kind: replicas on their own copies, files copied in part and out of order, syncs killed: every step keeps each user's edits, and all end equal to the model",
        arguments: seeds)
    func agreesWithTheModel(seed: UInt64) throws {
        try check(seed: seed)
    }

    func check(seed: UInt64) throws {
        let box = Sandbox("drivemodel\(seed)")
        let drive = Copies(root: box.root)
        var random = SeededRandom(seed: seed)
        func pick(_ n: Int) -> Int { Int(random.next() % UInt64(n)) }
        let replicas = (0..<3).map { box.replica("r\($0)") }
        print(
            "DRIVEMODEL start seed=\(seed) ops=\(Self.ops) (replay: DOCSYNC_DRIVE_MODEL_SEED=\(seed) DOCSYNC_DRIVE_MODEL_OPS=\(Self.ops))"
        )

        var model = Model()
        var next = 1
        var log: [String] = []
        func record(_ name: String, by i: Int) {
            replicas[i].write(name, "{\"by\": \(i), \"f0\": 0, \"f1\": 0, \"f2\": 0}\n")
            model.records.append(name)
            model.values[name] = [0: 0, 1: 0, 2: 0]
        }
        record("seed.json", by: 0)
        var r = CLI.run(["init", "--remote", drive.copy(0), "--name", "r0", "r0"], in: box.root)
        #expect(r.exit == 0, r.comment)
        #expect(replicas[0].run("sync").exit == 0)
        try FileManager.default.createDirectory(atPath: drive.copy(1), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: drive.copy(2), withIntermediateDirectories: true)
        for i in 1...2 {
            drive.propagate(0, i) { _ in true }
            r = CLI.run(["clone", "--name", "r\(i)", drive.copy(i), "r\(i)"], in: box.root)
            #expect(r.exit == 0, r.comment)
        }
        var held: [Set<String>] = replicas.map { Set($0.documents().keys) }
        var kills = 0, forks = 0, syncs = 0
        let points = CrashTable.sync[.dir]!

        /// A failing run's folders, kept for a look (the sandbox goes when the test ends).
        var keptOnce = false
        func keep() {
            // The first failure's folders: later ones are often its consequences.
            guard !keptOnce else { return }
            keptOnce = true
            let kept = "/tmp/docsync-drivemodel-\(seed)"
            try? FileManager.default.removeItem(atPath: kept)
            try? FileManager.default.copyItem(atPath: box.root, toPath: kept)
            try? (log.joined(separator: "\n") + "\n").write(
                toFile: kept + "/steps.log", atomically: true, encoding: .utf8)
            print("DRIVEMODEL kept the trees, the copies and every step so far (steps.log) in \(kept)")
        }

        /// After every step: each replica holds, for every record it holds, the last value
        /// it saved in its own field, and still holds every record it held.
        func checkStep(_ step: Int) -> Bool {
            for (i, replica) in replicas.enumerated() {
                let documents = replica.documents()
                let now = Set(documents.keys)
                if !held[i].isSubset(of: now) {
                    Issue.record(
                        "seed \(seed) step \(step): r\(i) lost \(held[i].subtracting(now).sorted())\n\(log.suffix(12).joined(separator: "\n"))"
                    )
                    keep()
                    return false
                }
                held[i] = now
                for name in now where model.values[name] != nil {
                    let value = Self.fieldValue(documents[name], i)
                    if value != model.values[name]![i] {
                        Issue.record(
                            "seed \(seed) step \(step): r\(i)'s \(name) has f\(i) = \(value.map(String.init) ?? "nothing"), its user last saved \(model.values[name]![i]!)\n\(log.suffix(12).joined(separator: "\n"))"
                        )
                        keep()
                        return false
                    }
                }
            }
            return true
        }

        for step in 1...Self.ops {
            let i = pick(3)
            let choice = pick(100)
            if choice < 40 {
                let present = Array(held[i]).sorted()
                guard let name = present.isEmpty ? nil : present[pick(present.count)], model.values[name] != nil else {
                    continue
                }
                let value = next
                next += 1
                let text = replicas[i].read(name)!
                let edited = Self.fieldPattern(i).stringByReplacingMatches(
                    in: text, range: NSRange(text.startIndex..., in: text), withTemplate: "\"f\(i)\": \(value)")
                replicas[i].write(name, edited)
                model.values[name]![i] = value
                log.append("\(step). r\(i) sets \(name) f\(i)=\(value)")
            } else if choice < 48 {
                let name = "d\(next)-r\(i).json"
                next += 1
                record(name, by: i)
                held[i].insert(name)
                log.append("\(step). r\(i) creates \(name)")
            } else if choice < 75 {
                let result = replicas[i].run("sync")
                syncs += 1
                if result.stdout.contains("at the same time") { forks += 1 }
                log.append("\(step). r\(i) sync → \(result.exit)")
                #expect(
                    result.exit == 0, "seed \(seed) step \(step): \(result)\n\(log.suffix(12).joined(separator: "\n"))")
                if result.exit != 0 { keep() }
            } else if choice < 95 {
                let (from, to) = (pick(3), pick(3))
                guard from != to else { continue }
                let share = pick(4)  // 0: everything; else each file with probability 1/2
                drive.propagate(from, to) { _ in share == 0 || random.next() % 2 == 0 }
                log.append("\(step). drive copies \(share == 0 ? "all" : "some") files of copy \(from) to copy \(to)")
            } else {
                let point = points[pick(points.count)]
                let result = replicas[i].run(["sync"], env: ["DOCSYNC_CRASH_AT": point])
                if result.exit == 137 { kills += 1 }
                log.append("\(step). r\(i) sync killed at \(point) → \(result.exit)")
                #expect(result.exit == 137 || result.exit == 0, "seed \(seed) step \(step): \(result)")
            }
            if !checkStep(step) { return }
        }

        // A full propagation (through replica 0's copy, a star), then every replica syncs;
        // three times, so that a fork's losing push is merged and arrives everywhere.
        for round in 1...4 {
            for (x, y) in [(1, 0), (2, 0), (0, 1), (0, 2)] { drive.propagate(x, y) { _ in true } }
            for (i, replica) in replicas.enumerated() {
                let result = replica.run("sync")
                #expect(result.exit == 0, "seed \(seed) final round \(round), r\(i): \(result)")
                if result.exit != 0 { keep() }
            }
            if !checkStep(Self.ops + round) { return }
        }
        for (x, y) in [(1, 0), (2, 0), (0, 1), (0, 2)] { drive.propagate(x, y) { _ in true } }
        for (i, replica) in replicas.enumerated() {
            let documents = replica.documents()
            #expect(
                Set(documents.keys) == Set(model.records),
                "seed \(seed): r\(i) holds \(documents.keys.sorted()), the model \(model.records.sorted())")
            for name in model.records {
                for field in 0..<3 where Self.fieldValue(documents[name], field) != model.values[name]![field] {
                    Issue.record(
                        "seed \(seed): r\(i)'s \(name) has f\(field) = \(Self.fieldValue(documents[name], field).map(String.init) ?? "nothing"), the model \(model.values[name]![field]!)"
                    )
                }
            }
            #expect(replica.run("verify").exit == 0)
        }
        #expect(
            replicas[0].documents() == replicas[1].documents() && replicas[1].documents() == replicas[2].documents(),
            "seed \(seed): the trees differ")
        print(
            "DRIVEMODEL done seed=\(seed) steps=\(Self.ops) syncs=\(syncs) kills=\(kills) forks=\(forks) records=\(model.records.count)"
        )
    }
}
