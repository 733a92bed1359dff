import Foundation
import Testing

/// A folder remote on a cloud drive, played by real file-sync engines: three replicas,
/// each syncing with its own copy of the remote, and the engine copying files between
/// the copies between runs, sometimes only some of them (files arrive late and in any
/// order). What the replicas must end with is computed from what was typed (the model
/// below), not from each other.
@Suite(.serialized) struct DriveFolderTests {
    /// One drive: three copies of a remote and the replicas that use them.
    final class Drive {
        let box = Sandbox("drive")
        let names = ["a", "b", "c"]
        var unisonHome: String { box.path("unison-home") }

        func copy(_ name: String) -> String { box.path("copy-" + name) }
        func replica(_ name: String) -> Replica { box.replica(name) }

        init() throws {
            try FileManager.default.createDirectory(atPath: unisonHome, withIntermediateDirectories: true)
        }

        /// Unison between two copies, newest file winning and the other kept as a conflict
        /// copy (as Dropbox does), limited to `paths` if given.
        @discardableResult
        func unison(_ from: String, _ to: String, paths: [String] = []) -> RunResult {
            var args = [copy(from), copy(to), "-batch", "-auto", "-times", "-prefer", "newer", "-copyonconflict",
                        "-confirmbigdel=false", "-ignore", "Name push.lock", "-ignore", "Name .docsync-tmp-*", "-silent"]
            for path in paths { args += ["-path", path] }
            let r = CLI.runTool("/usr/bin/unison", args, in: box.root, env: ["UNISON": unisonHome, "HOME": unisonHome])
            // 2: a file skipped (Unison making a conflict copy as it goes); the next pass takes it.
            #expect([0, 1, 2].contains(r.exit), "unison \(from) \(to) \(paths): \(r)")
            return r
        }

        func everyPair(_ body: (String, String) -> Void) {
            for (i, x) in names.enumerated() { for y in names[(i + 1)...] { body(x, y) } }
        }
    }

    /// Sets a field of a record by a text edit, as a user in an editor would.
    static func setField(_ replica: Replica, _ path: String, _ key: String, _ value: Int) {
        let text = replica.read(path)!
        let pattern = try! NSRegularExpression(pattern: "\"\(key)\"\\s*:\\s*-?[0-9]+")
        let edited = pattern.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: "\"\(key)\": \(value)")
        #expect(edited != text, "no field \(key) in \(path) of \(replica.root)")
        replica.write(path, edited)
    }

    @Test("three replicas on three Unison-synced copies converge, with every field edit merged, over rounds of partial and out-of-order copying",
          .enabled(if: Prerequisite.unison.runsHere))
    func threeReplicasConvergeUnderUnison() throws {
        try Prerequisite.unison.require()
        let drive = try Drive()
        let a = drive.replica("a")
        a.write("seed.json", "{\"name\": \"seed\", \"x\": 0, \"y\": 0, \"z\": 0}\n")
        var r = CLI.run(["init", "--remote", drive.copy("a"), "--name", "a", "a"], in: drive.box.root, env: ["DOCSYNC_REMOTE_FORMAT": "2"])
        #expect(r.exit == 0, r.comment)
        _ = a.ok("sync")
        drive.unison("a", "b")
        drive.unison("a", "c")
        for name in ["b", "c"] {
            r = CLI.run(["clone", "--name", name, drive.copy(name), name], in: drive.box.root)
            #expect(r.exit == 0, r.comment)
        }
        // The model: what every replica must hold at the end.
        var expectedRecords: Set<String> = ["seed.json"]
        var expectedSeed = ["x": 0, "y": 0, "z": 0]
        var random = SeededRandom(seed: 20261126)
        var exits: [Int32] = []
        for round in 1...4 {
            for name in drive.names {
                let replica = drive.replica(name)
                replica.write("\(name)\(round).json", "{\"by\": \"\(name)\", \"round\": \(round)}\n")
                expectedRecords.insert("\(name)\(round).json")
            }
            Self.setField(drive.replica("a"), "seed.json", "x", round)
            Self.setField(drive.replica("b"), "seed.json", "y", round)
            expectedSeed["x"] = round
            expectedSeed["y"] = round
            if round % 2 == 0 {
                Self.setField(drive.replica("c"), "seed.json", "z", round)
                expectedSeed["z"] = round
            }
            for name in drive.names { exits.append(drive.replica(name).sync().exit) }
            // The drive copies some of the files between some of the copies, in a random
            // order: objects without their commits, commits without their objects, one
            // replica's folder and not another's.
            let parts = [".docsync/objects", ".docsync/replicas", ".docsync/format"] + drive.names.map { _ in "" }
            drive.everyPair { x, y in
                guard random.next() % 3 != 0 else { return }
                let part = parts[Int(random.next() % UInt64(parts.count))]
                if random.next() % 2 == 0 { drive.unison(x, y, paths: part.isEmpty ? [] : [part]) } else { drive.unison(y, x, paths: part.isEmpty ? [] : [part]) }
            }
        }
        for _ in 1...3 {
            for name in drive.names { exits.append(drive.replica(name).sync().exit) }
            drive.everyPair { x, y in drive.unison(x, y) }
            drive.everyPair { x, y in drive.unison(x, y) }
        }
        for name in drive.names { exits.append(drive.replica(name).sync().exit) }
        // A mesh of pairwise Unison runs makes conflict copies even of files only one
        // replica writes (its record reaches a copy by two ways). Through a star, which
        // makes none, the owners' tidying reaches every copy.
        func star() { drive.unison("a", "b"); drive.unison("a", "c"); drive.unison("a", "b") }
        star()
        for name in drive.names { exits.append(drive.replica(name).sync().exit) }
        star()
        #expect(exits.allSatisfy { $0 == 0 }, "exit codes \(exits)")
        for name in drive.names {
            let replica = drive.replica(name)
            #expect(Set(replica.documents().keys) == expectedRecords, "\(name) holds \(replica.documents().keys.sorted())")
            let seed = replica.json("seed.json") ?? [:]
            for (key, value) in expectedSeed { #expect(seed[key] as? Int == value, "\(name): seed.\(key) is \(String(describing: seed[key])), expected \(value)") }
            let status = replica.ok("status", "--json")
            let parsed = JSONHelp.parse(status.stdout) as? [String: Any]
            #expect((parsed?["pending"] as? [Any])?.isEmpty ?? false, "\(name) has pending changes: \(status.stdout)")
            let verify = replica.run("verify")
            #expect(verify.exit == 0, verify.comment)
        }
        #expect(drive.replica("a").documents() == drive.replica("b").documents())
        #expect(drive.replica("b").documents() == drive.replica("c").documents())
        // Nothing a sync service would see as a file two machines wrote: no conflict copy
        // of a docsync file anywhere in the copies.
        for name in drive.names {
            let copies = Files.list(drive.copy(name) + "/.docsync", skipMetadata: false).filter {
                $0.contains("conflict") && !($0 as NSString).lastPathComponent.hasPrefix(".unison")
            }
            #expect(copies.isEmpty, "\(name)'s copy holds \(copies)")
        }
    }
}

/// A small seeded generator (SplitMix64), so a failing run replays.
struct SeededRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
