import DocSyncJSON
import Foundation
import Testing

@testable import DocSyncKit

/// Replicas that each sync with their own copy of one drive-layout folder remote, as on
/// Dropbox or Syncthing: `propagate` plays the sync service, copying files from one copy
/// to another, all of them or only some (files arrive late and in any order).
final class DriveCopies {
    let folder = TempFolder("drive")
    private(set) var names: [String] = []

    func copy(_ name: String) -> String { folder.sub("copy-" + name) }
    func tree(_ name: String) -> String { folder.sub(name) }

    /// A replica with a copy of its own: the first makes the remote, the others copy the
    /// first one's copy as it is now and clone from theirs.
    @discardableResult
    func make(_ name: String) throws -> String {
        if let first = names.first {
            try FileManager.default.copyItem(atPath: copy(first), toPath: copy(name))
            let (ws, _) = try TreeSetup.clone(url: copy(name), into: tree(name), replicaName: name)
            ws.close()
        } else {
            try DriveFolderRemote.create(at: copy(name))
            let (ws, _) = try Workspace.initialize(at: tree(name), remoteURL: copy(name), replicaName: name)
            ws.close()
        }
        names.append(name)
        return tree(name)
    }

    /// Copies every file of `from`'s copy that `to`'s lacks or holds otherwise (where
    /// `only` says yes). Every docsync file has one writer, so "otherwise" is "newer".
    func propagate(_ from: String, _ to: String, only: (String) -> Bool = { _ in true }) {
        let source = copy(from), target = copy(to)
        let walker = FileManager.default.enumerator(atPath: source)!
        while let relative = walker.nextObject() as? String {
            let path = source + "/" + relative
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir), !isDir.boolValue,
                !relative.hasSuffix("push.lock"), only(relative)
            else { continue }
            let destination = target + "/" + relative
            if FileManager.default.contentsEqual(atPath: path, andPath: destination) { continue }
            // The newer file wins, as with every such service.
            if let there = try? FileManager.default.attributesOfItem(atPath: destination)[.modificationDate] as? Date,
                let here = try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date,
                there > here
            {
                continue
            }
            try? FileManager.default.createDirectory(
                atPath: (destination as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try? FileManager.default.removeItem(atPath: destination)
            try! FileManager.default.copyItem(atPath: path, toPath: destination)
            if let date = try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] {
                try? FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: destination)
            }
        }
    }

    /// The commits folder, in `name`'s copy, of the replica that made commit `seq`.
    func commitsFolder(in name: String, holding seq: Int) -> String {
        let replicas = copy(name) + "/.docsync/replicas"
        let owner = try! FileManager.default.contentsOfDirectory(atPath: replicas).first {
            FileManager.default.fileExists(atPath: replicas + "/\($0)/commits/\(seq).json")
        }!
        return replicas + "/" + owner + "/commits"
    }

    /// Every file of `name`'s copy, relative to it.
    func files(_ name: String) -> Set<String> {
        let root = copy(name)
        var found = Set<String>()
        let walker = FileManager.default.enumerator(atPath: root)!
        while let relative = walker.nextObject() as? String {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDir), !isDir.boolValue {
                found.insert(relative)
            }
        }
        return found
    }

    /// Every copy gets every file.
    func propagateAll() {
        for a in names { for b in names where a != b { propagate(a, b) } }
    }

    @discardableResult
    func sync(_ name: String) throws -> SyncReport {
        let ws = try Workspace.open(at: tree(name), readOnly: false)
        defer { ws.close() }
        return try ws.sync.run(.both)
    }

    func write(_ name: String, _ relative: String, _ text: String) {
        try! Data(text.utf8).write(to: URL(fileURLWithPath: tree(name) + "/" + relative))
    }

    func read(_ name: String, _ relative: String) -> String? {
        (try? Data(contentsOf: URL(fileURLWithPath: tree(name) + "/" + relative))).map {
            String(decoding: $0, as: UTF8.self)
        }
    }

    func jsonField(_ name: String, _ relative: String, _ key: String) -> String? {
        guard let text = read(name, relative),
            let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let value = object[key]
        else { return nil }
        return "\(value)"
    }

    func documents(_ name: String) -> Set<String> {
        Set(((try? FileManager.default.contentsOfDirectory(atPath: tree(name))) ?? []).filter { $0.hasSuffix(".json") })
    }

    /// Sets a field of a document with a text edit, as a user would.
    func edit(_ name: String, _ relative: String, _ key: String, to value: Int) {
        let text = read(name, relative)!
        let pattern = try! NSRegularExpression(pattern: "\"\(key)\"\\s*:\\s*[0-9]+")
        let edited = pattern.stringByReplacingMatches(
            in: text, range: NSRange(text.startIndex..., in: text), withTemplate: "\"\(key)\": \(value)")
        precondition(edited != text, "no field \(key) in \(relative)")
        write(name, relative, edited)
    }
}

@Suite struct DriveRemoteTests {
    /// Two replicas push at the same time, each to its own copy, then the service brings
    /// the copies together: one push wins the fork, the other is merged on top of it,
    /// field by field, and both end with both edits.
    @Test func forkedPushesMergeFieldByField() throws {
        let drive = DriveCopies()
        try drive.make("a")
        drive.write("a", "seed.json", "{\"x\": 1, \"y\": 1}")
        try drive.sync("a")
        try drive.make("b")
        drive.edit("a", "seed.json", "x", to: 2)
        drive.edit("b", "seed.json", "y", to: 3)
        try drive.sync("a")
        try drive.sync("b")
        drive.propagateAll()
        let first = try drive.sync("a"), second = try drive.sync("b")
        // Exactly one of the two lost the fork and says so.
        let told = [first, second].filter { $0.notices.contains { $0.contains("at the same time") } }
        #expect(told.count == 1)
        drive.propagateAll()
        try drive.sync("a")
        try drive.sync("b")
        for name in ["a", "b"] {
            #expect(drive.jsonField(name, "seed.json", "x") == "2", "\(name)")
            #expect(drive.jsonField(name, "seed.json", "y") == "3", "\(name)")
        }
        #expect(drive.read("a", "seed.json") == drive.read("b", "seed.json"))
    }

    /// A commit whose version has not arrived is "not here yet": said, nothing deleted,
    /// nothing failed; once the object arrives it is pulled.
    @Test func commitBeforeItsObjectWaits() throws {
        let drive = DriveCopies()
        try drive.make("a")
        drive.write("a", "keep.json", "{\"k\": 1}")
        try drive.sync("a")
        try drive.make("b")
        drive.write("b", "new.json", "{\"n\": 1}")
        try drive.sync("b")
        drive.propagate("b", "a") { $0.contains("/commits/") }
        let early = try drive.sync("a")
        #expect(early.notices.contains { $0.contains("not fully arrived yet") })
        #expect(early.problems.isEmpty)
        #expect(drive.documents("a") == ["keep.json"])
        drive.propagate("b", "a")
        let late = try drive.sync("a")
        #expect(late.pulled.map(\.path) == ["new.json"])
        #expect(drive.documents("a") == ["keep.json", "new.json"])
    }

    /// A commit file the service is still copying (torn) is not read yet, and a file
    /// that arrives below a number already read is still read (the cursor stops at gaps).
    @Test func tornAndOutOfOrderCommitFilesAreReadWhenWhole() throws {
        let drive = DriveCopies()
        try drive.make("a")
        try drive.make("b")
        drive.write("b", "one.json", "{\"n\": 1}")
        try drive.sync("b")
        drive.write("b", "two.json", "{\"n\": 2}")
        try drive.sync("b")
        // Objects arrive; commit 2 arrives whole, commit 1 half-copied.
        drive.propagate("b", "a") { !$0.contains("/commits/") }
        let folder = drive.commitsFolder(in: "b", holding: 2).dropFirst(drive.copy("b").count) + "/"
        try FileManager.default.createDirectory(atPath: drive.copy("a") + folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: drive.copy("b") + folder + "2.json", toPath: drive.copy("a") + folder + "2.json")
        let whole = try Data(contentsOf: URL(fileURLWithPath: drive.copy("b") + folder + "1.json"))
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: drive.copy("a") + folder + "1.json"))
        let early = try drive.sync("a")
        #expect(early.notices.contains { $0.contains("incomplete") })
        #expect(drive.documents("a").isEmpty)
        try whole.write(to: URL(fileURLWithPath: drive.copy("a") + folder + "1.json"))
        try drive.sync("a")
        #expect(drive.documents("a") == ["one.json", "two.json"])
    }

    /// A sync service's conflict copy of a commit file is read (nothing in it is lost)
    /// and, holding a commit already read under its own name, removed.
    @Test func serviceCopyOfCommitFileIsReadAndTidied() throws {
        let drive = DriveCopies()
        try drive.make("a")
        try drive.make("b")
        drive.write("a", "x.json", "{\"v\": 1}")
        try drive.sync("a")
        let commits = drive.commitsFolder(in: "a", holding: 1)
        // B receives the commit only under a service's name for it.
        try FileManager.default.moveItem(
            atPath: commits + "/1.json", toPath: commits + "/1.sync-conflict-20261126-101112-ABCDEFG.json")
        drive.propagate("a", "b")
        drive.write("b", "y.json", "{\"v\": 2}")
        try drive.sync("b")
        #expect(drive.documents("b") == ["x.json", "y.json"])
        // Both names for one commit: the copy goes.
        try FileManager.default.copyItem(
            atPath: commits + "/1.sync-conflict-20261126-101112-ABCDEFG.json",
            toPath: commits + "/1 (conflicted copy).json")
        try FileManager.default.moveItem(
            atPath: commits + "/1.sync-conflict-20261126-101112-ABCDEFG.json", toPath: commits + "/1.json")
        drive.propagate("b", "a")
        try drive.sync("a")
        #expect(!FileManager.default.fileExists(atPath: commits + "/1 (conflicted copy).json"))
        #expect(FileManager.default.fileExists(atPath: commits + "/1.json"))
        #expect(drive.documents("a") == ["x.json", "y.json"])
    }

    /// A folder whose files went back (an older copy restored) is noticed and said, and
    /// nothing is changed.
    @Test func folderThatWentBackIsSaid() throws {
        let drive = DriveCopies()
        try drive.make("a")
        drive.write("a", "x.json", "{\"v\": 1}")
        try drive.sync("a")
        drive.edit("a", "x.json", "v", to: 2)
        try drive.sync("a")
        try FileManager.default.removeItem(atPath: drive.commitsFolder(in: "a", holding: 2) + "/2.json")
        let before = drive.read("a", "x.json")
        #expect {
            try drive.sync("a")
        } throws: { error in
            (error as? RemoteError)?.localizedDescription.contains("went back in time") == true
        }
        #expect(drive.read("a", "x.json") == before)
    }

    /// A pack whose index arrived before all of its bytes holds nothing yet: the push
    /// that wrote it waits, and is read once the pack is whole.
    @Test func packStillBeingCopiedWaits() throws {
        let drive = DriveCopies()
        try drive.make("a")
        try drive.make("b")
        for i in 0..<40 { drive.write("b", "doc\(i).json", "{\"n\": \(i)}") }
        try drive.sync("b")
        drive.propagate("b", "a")
        let packs = drive.copy("a") + "/.docsync/objects/packs"
        let pack = try #require(
            try FileManager.default.contentsOfDirectory(atPath: packs).first { $0.hasSuffix(".pack") })
        let whole = try Data(contentsOf: URL(fileURLWithPath: packs + "/" + pack))
        try whole.prefix(whole.count - 10).write(to: URL(fileURLWithPath: packs + "/" + pack))
        let early = try drive.sync("a")
        #expect(early.notices.contains { $0.contains("not fully arrived yet") }, "\(early.notices)")
        #expect(drive.documents("a").isEmpty && early.problems.isEmpty)
        try whole.write(to: URL(fileURLWithPath: packs + "/" + pack))
        try drive.sync("a")
        #expect(drive.documents("a").count == 40)
    }

    /// A docsync release before the drive layout reads `format` with format 1's code: it
    /// refuses the remote with a sentence, and never reads it as empty.
    @Test func format1ReaderRefusesTheDriveLayoutClearly() throws {
        let drive = DriveCopies()
        try drive.make("a")
        drive.write("a", "x.json", "{\"v\": 1}")
        try drive.sync("a")
        #expect {
            _ = try DirectoryRemote(url: drive.copy("a")).changes(since: nil)
        } throws: { error in
            (error as? RemoteError)?.localizedDescription.contains(
                "not a docsync remote format this version understands") == true
        }
    }

    /// The readable copies are a view: one edited in the remote folder (or not arrived)
    /// is no problem for `verify`, and is never pulled.
    @Test func aLaggingViewIsNoProblem() throws {
        let drive = DriveCopies()
        try drive.make("a")
        drive.write("a", "x.json", "{\"v\": 1}")
        try drive.sync("a")
        try drive.make("b")
        try Data("{\"v\": \"edited in the share\"}".utf8).write(to: URL(fileURLWithPath: drive.copy("a") + "/x.json"))
        try FileManager.default.removeItem(atPath: drive.copy("b") + "/x.json")
        for name in ["a", "b"] {
            let ws = try Workspace.open(at: drive.tree(name), readOnly: true)
            #expect(ws.checks.verify() == [], "\(name)")
            ws.close()
        }
        try drive.make("c")
        #expect(drive.jsonField("c", "x.json", "v") == "1")
    }

    /// A format-1 remote upgraded in place: the tree that was at its last position goes
    /// on from there; one that was behind reads the state whole and still gets every
    /// change, including a deletion, and pushes its own.
    @Test func upgradeKeepsEveryReplicaSyncing() throws {
        let set = ReplicaSet(format: .shared)
        let a = try set.make("a")
        set.write(a, "keep.json", "{\"k\": 1}")
        set.write(a, "gone.json", "{\"g\": 1}")
        set.write(a, "other.json", "{\"o\": 1}")
        try set.sync(a)
        let b = try set.make("b")
        set.write(a, "keep.json", set.read(a, "keep.json")!.replacingOccurrences(of: "\"k\": 1", with: "\"k\": 2"))
        try FileManager.default.removeItem(atPath: a + "/gone.json")
        let pushed = try set.sync(a)
        #expect(pushed.pushed.count == 2)
        #expect(FolderRemoteFormat.of(set.remote) == .shared)
        let upgrade = try DriveFolderRemote.upgrade(
            set.remote, replica: ReplicaInfo(replicaId: "upgrader0001", name: "upgrader"))
        #expect(upgrade.from != nil)
        #expect(FolderRemoteFormat.of(set.remote) == .drive)
        #expect(!FileManager.default.fileExists(atPath: set.remote + "/.docsync/generation"))
        let continued = try set.sync(a)
        #expect(continued.pulled.isEmpty && continued.problems.isEmpty)
        set.write(b, "fromb.json", "{\"b\": 1}")
        try set.sync(b)
        #expect(set.snapshot(b).keys.sorted() == ["fromb.json", "keep.json", "other.json"])
        #expect(field(set.read(b, "keep.json"), "k") == "2")
        try set.sync(a)
        #expect(set.snapshot(a).keys.sorted() == ["fromb.json", "keep.json", "other.json"])
        // Upgrading again does nothing.
        #expect(
            try DriveFolderRemote.upgrade(set.remote, replica: ReplicaInfo(replicaId: "upgrader0001", name: "upgrader"))
                .from == nil)
    }

    /// An upgrade that died before its commit point left a root commit behind; the next
    /// upgrade's `format` names its own, and the stray one is never read as the remote.
    @Test func strayRootOfADeadUpgradeIsIgnored() throws {
        let set = ReplicaSet(format: .shared)
        let a = try set.make("a")
        set.write(a, "one.json", "{\"n\": 1}")
        try set.sync(a)
        let stray = DriveCommit(
            header: .init(
                commit: "upgrader0001.1.00000000", replica: "upgrader0001", seq: 1, parent: nil, height: 1, time: 0,
                entries: 0,
                checkpoint: true, upgradedFrom: "0:0"), entries: [])
        try DriveFolderRemote(url: set.remote).writeCommit(stray)
        set.write(a, "two.json", "{\"n\": 2}")
        try set.sync(a)
        _ = try DriveFolderRemote.upgrade(set.remote, replica: ReplicaInfo(replicaId: "upgrader0001", name: "upgrader"))
        let b = try set.make("b")
        #expect(set.snapshot(b).keys.sorted() == ["one.json", "two.json"])
        set.write(b, "three.json", "{\"n\": 3}")
        try set.sync(b)
        try set.sync(a)
        #expect(set.snapshot(a).keys.sorted() == ["one.json", "three.json", "two.json"])
    }

    /// A git remote in a folder a sync service copies is warned about on every sync.
    @Test func gitRemoteInADriveFolderWarns() throws {
        let folder = TempFolder("gitindrive")
        try FileManager.default.createDirectory(
            atPath: folder.sub("Shared/.stfolder"), withIntermediateDirectories: true)
        _ = try GitRepository.openOrCreateBare(at: folder.sub("Shared/notes.git"))
        let (ws, _) = try Workspace.initialize(
            at: folder.sub("tree"), remoteURL: folder.sub("Shared/notes.git"), kind: .git, replicaName: "a")
        ws.close()
        try Data("{\"v\": 1}".utf8).write(to: URL(fileURLWithPath: folder.sub("tree/x.json")))
        let open = try Workspace.open(at: folder.sub("tree"), readOnly: false)
        defer { open.close() }
        let report = try open.sync.run(.both)
        #expect(
            report.warnings.contains { $0.contains("sync service") && $0.contains(".stfolder") }, "\(report.warnings)")
        #expect(report.pushed.count == 1)
    }

    /// gc purges a tombstone every replica has read with a checkpoint commit; a replica
    /// whose cursor is below it reads the state whole and deletes its unchanged copy.
    @Test func gcPurgesWithACheckpoint() throws {
        let drive = DriveCopies()
        try drive.make("a")
        drive.write("a", "gone.json", "{\"g\": 1}")
        drive.write("a", "keep.json", "{\"k\": 1}")
        drive.write("a", "other.json", "{\"o\": 1}")
        try drive.sync("a")
        try drive.make("b")
        try FileManager.default.removeItem(atPath: drive.tree("a") + "/gone.json")
        #expect(try drive.sync("a").pushed.count == 1)
        drive.propagateAll()
        try drive.sync("b")
        #expect(drive.documents("b") == ["keep.json", "other.json"])
        drive.propagateAll()
        let ws = try Workspace.open(at: drive.tree("a"), readOnly: false)
        let report = try ws.gc.collect(dryRun: false)
        ws.close()
        #expect(report.remote?.purged.map(\.path) == ["gone.json"])
        drive.propagateAll()
        try drive.sync("b")
        try drive.sync("a")
        #expect(
            drive.documents("a") == ["keep.json", "other.json"] && drive.documents("b") == ["keep.json", "other.json"])
    }
}

/// The history rules as pure functions, on commits held in a dictionary.
@Suite struct DriveHistoryTests {
    final class Commits: DriveCommitSource {
        var all: [String: DriveCommit] = [:]
        func header(_ id: String) -> DriveCommit.Header? { all[id]?.header }
        func commit(_ id: String) -> DriveCommit? { all[id] }

        @discardableResult
        func add(
            _ replica: String, _ seq: Int, on parent: String?, _ docs: [String: String], checkpoint: Bool = false,
            parents: [String: [String]]? = nil
        ) -> String {
            let height = (parent.flatMap { all[$0]?.header.height } ?? 0) + 1
            let entries = docs.sorted { $0.key < $1.key }.map { refId, changeset in
                var entry = FeedLine(
                    refId: refId, changesetId: changeset, hash: String(repeating: "0", count: 64),
                    path: refId + ".json",
                    deleted: false, replica: replica, time: 0)
                entry.parents = parents?[refId]
                return entry
            }
            var header = DriveCommit.Header(
                commit: "\(replica).\(seq).0000000\(seq)", replica: replica, seq: seq, parent: parent, height: height,
                time: 0, entries: entries.count)
            if checkpoint { header.checkpoint = true }
            all[header.commit] = DriveCommit(header: header, entries: entries)
            return header.commit
        }
    }

    @Test func theLongerChainWinsAndTiesGoToTheGreaterId() {
        let c = Commits()
        let root = c.add("aaa", 1, on: nil, ["d": "1"])
        let a2 = c.add("aaa", 2, on: root, ["d": "2a"])
        let b2 = c.add("bbb", 1, on: root, ["d": "2b"])
        #expect(DriveHistory.tip([c.header(a2)!, c.header(b2)!])?.commit == b2)
        let a3 = c.add("aaa", 3, on: a2, ["e": "1"])
        #expect(DriveHistory.tip([c.header(a3)!, c.header(b2)!])?.commit == a3)
        #expect(DriveHistory.commonAncestor(a3, b2, in: c) == root)
        #expect(DriveHistory.descends(a3, from: root, in: c))
        #expect(!DriveHistory.descends(a3, from: b2, in: c))
    }

    @Test func changesAreTheLatestEntryPerDocumentBetweenTwoCommits() {
        let c = Commits()
        let root = c.add("aaa", 1, on: nil, ["d": "1", "e": "1"])
        let two = c.add("aaa", 2, on: root, ["d": "2"])
        let three = c.add("bbb", 1, on: two, ["d": "3", "f": "1"])
        let changes = DriveHistory.changes(from: (root, 1), to: three, in: c)
        #expect(changes?.snapshot == false)
        #expect(changes?.entries.map { "\($0.refId)=\($0.changesetId)" } == ["d=3", "f=1"])
        #expect(DriveHistory.changes(from: (two, 2), to: root, in: c) == nil)
        #expect(DriveHistory.state(at: three, in: c)?.map { "\($0.refId)=\($0.changesetId)" } == ["e=1", "d=3", "f=1"])
    }

    /// The state at a commit over random chains (checkpoints among them), against a model:
    /// from the nearest checkpoint up, a document's last entry, in the order of each
    /// document's last appearance. Guards `latest(of:)`, which reads the commits in place
    /// rather than joined into one list.
    @Test func theStateIsTheLastEntryPerDocumentInTheOrderOfLastAppearance() {
        var random = SeededGenerator(seed: 2_611_27)
        for _ in 0..<40 {
            let c = Commits()
            var chain: [(id: String, docs: [String: String], checkpoint: Bool)] = []
            var parent: String?
            for seq in 1...Int.random(in: 1...8, using: &random) {
                var docs: [String: String] = [:]
                for _ in 0..<Int.random(in: 0...6, using: &random) {
                    docs["d\(Int.random(in: 0..<9, using: &random))"] = "\(seq)"
                }
                let checkpoint = seq > 1 && Int.random(in: 0..<4, using: &random) == 0
                parent = c.add("aaa", seq, on: parent, docs, checkpoint: checkpoint)
                chain.append((parent!, docs, checkpoint))
            }
            // The model: entries from the last checkpoint (or the root) up, one list; a
            // document's entry kept where it appears last.
            let start = chain.lastIndex { $0.checkpoint } ?? 0
            let flat = chain[start...].flatMap { link in
                link.docs.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            }
            let model = flat.enumerated().filter { i, entry in
                !flat[(i + 1)...].contains { $0.split(separator: "=")[0] == entry.split(separator: "=")[0] }
            }.map(\.element)
            #expect(DriveHistory.state(at: parent, in: c)?.map { "\($0.refId)=\($0.changesetId)" } == model)
        }
    }

    /// The merge base of a fork, per document: the latest version both chains hold,
    /// not only the state where they split.
    @Test func aForksMergeBaseIsTheLatestVersionBothChainsHold() {
        func entry(_ refId: String, _ changeset: String, deleted: Bool = false) -> FeedLine {
            FeedLine(
                refId: refId, changesetId: changeset, hash: nil, path: refId + ".json", deleted: deleted, replica: "r",
                time: 0)
        }
        let common = [entry("d", "1"), entry("e", "1"), entry("f", "1")]
        // Both chains hold d@2 (re-sent by its author after it lost), only ours holds d@3;
        // e@2 is a deletion on theirs and a version on ours: not the same.
        let ours = [entry("d", "2"), entry("d", "3"), entry("e", "2")]
        let theirs = [entry("d", "2"), entry("d", "4"), entry("e", "2", deleted: true)]
        let base = DriveHistory.mergeBase(common: common, ours: ours, theirs: theirs)
        #expect(base["d"]?.changesetId == "2")
        #expect(base["e"]?.changesetId == "1" && base["e"]?.deleted == false)
        #expect(base["f"]?.changesetId == "1")
    }

    /// The versions a version descends from are the ones its entries name: a merge pushed
    /// by a replica that only carried a losing push's version (it never made it) still
    /// descends from it, which the commits alone do not say.
    @Test func namedParentsMakeTheMergeBaseExact() {
        func ancestry(named: Bool) -> VersionAncestry {
            let c = Commits()
            func p(_ ids: [String]) -> [String: [String]]? { named ? ["d": ids] : nil }
            let root = c.add("r1", 1, on: nil, ["d": "1"], parents: p([]))
            c.add("r2", 1, on: root, ["d": "2"], parents: p(["1"]))  // loses the fork; r1 pulled it
            let won = c.add("r3", 1, on: root, ["d": "3"], parents: p(["1"]))
            // r4 had pulled 2 too; it merges 2 into 3 and pushes first.
            let merged = c.add("r4", 1, on: won, ["d": "6"], parents: p(["3", "2"]))
            c.add("r3", 2, on: merged, ["d": "7"], parents: p(["6"]))
            return VersionAncestry(commits: Array(c.all.values))
        }
        let exact = ancestry(named: true)
        #expect(Set(exact.ancestors(of: "d", changesetId: "7").keys) == ["7", "6", "3", "2", "1"])
        #expect(
            exact.commonAncestor(of: "d", "2", "7")?.changesetId == "2",
            "r1 held 2, which 7 carries: its merge is measured from 2, so 7's later fields win")
        #expect(exact.commonAncestor(of: "d", "2", "3")?.changesetId == "1", "two sides of one fork meet at the root")
        #expect(
            ancestry(named: false).commonAncestor(of: "d", "2", "7")?.changesetId == "1",
            "without named parents the commits imply less (why entries name them)")
    }

    /// Merges that crossed leave two latest common versions, neither below the other. The
    /// base is their merge (git's recursive merge): measured from only the later one, the
    /// field the other carried looked changed on both sides, and r1's 46 lost to an
    /// older 10 (what the drive model check found).
    @Test func crossedMergesMeetAtTheMergeOfTheirBases() throws {
        let c = Commits()
        let contents: [String: String] = [
            "1": #"{"f0":0,"f1":0,"f2":0}"#,
            "2": #"{"f0":0,"f1":10,"f2":0}"#,  // r1
            "3": #"{"f0":0,"f1":10,"f2":20}"#,  // r2, on 2
            "4": #"{"f0":5,"f1":0,"f2":0}"#,  // r0, on 1: never merges
            "5": #"{"f0":5,"f1":46,"f2":20}"#,  // r1 merged 3 and 4, then set f1
            "6": #"{"f0":5,"f1":10,"f2":21}"#  // r2 merged 4 and 3, then set f2
        ]
        let root = c.add("r0", 1, on: nil, ["d": "1"], parents: ["d": []])
        let two = c.add("r1", 1, on: root, ["d": "2"], parents: ["d": ["1"]])
        let three = c.add("r2", 1, on: two, ["d": "3"], parents: ["d": ["2"]])
        let four = c.add("r0", 2, on: root, ["d": "4"], parents: ["d": ["1"]])
        c.add("r1", 2, on: three, ["d": "5"], parents: ["d": ["3", "4"]])
        c.add("r2", 2, on: four, ["d": "6"], parents: ["d": ["4", "3"]])
        let ancestry = VersionAncestry(commits: Array(c.all.values))
        #expect(ancestry.latestCommonAncestors(of: "d", "5", "6").map(\.changesetId) == ["3", "4"])
        func bytes(_ entry: FeedLine) -> [UInt8]? { contents[entry.changesetId].map { Array($0.utf8) } }
        let merging = ForkMergeBase(
            ancestry: ancestry, bytes: bytes, merge: ContentPolicy.versionMerge(config: Config()))
        guard case let .merged(named, base)? = merging.base(of: "d", "5", "6") else {
            Issue.record("not a merged base")
            return
        }
        #expect(named.changesetId == "4", "named after the latest version it merges")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(base)) as? [String: Any])
        #expect(["f0", "f1", "f2"].map { object[$0] as? Int } == [5, 10, 20], "\(object)")
        // The pull's merge from that base keeps both later values.
        let final = ContentPolicy.versionMerge(config: Config())(
            "d.json", base, ("5", Array(contents["5"]!.utf8)), ("6", Array(contents["6"]!.utf8)))
        let finalBytes = try #require(final)
        let merged = try #require(try JSONSerialization.jsonObject(with: Data(finalBytes)) as? [String: Any])
        #expect(merged["f1"] as? Int == 46 && merged["f2"] as? Int == 21 && merged["f0"] as? Int == 5)
        let single = ForkMergeBase(ancestry: ancestry, bytes: bytes, merge: nil)
        guard case let .version(latest)? = single.base(of: "d", "5", "6") else {
            Issue.record("without a merge, not the latest version")
            return
        }
        #expect(latest.changesetId == "4")
    }

    /// Found by the drive model check's campaign: a version pushed again after its chain
    /// lost a fork was sent as itself and named no parents, so a replica that had the
    /// second push but not the first found nothing both versions descend from, merged
    /// with no base, and two edits of different fields collided (a conflict).
    @Test func aVersionSentAgainNamesTheParentsOfItsFirstPush() throws {
        let drive = DriveCopies()
        try drive.make("a")
        drive.write("a", "seed.json", "{\"x\": 0}")
        try drive.sync("a")
        try drive.make("b")
        try drive.make("c")
        drive.write("a", "d.json", "{\"fa\": 0, \"fc\": 0}")
        try drive.sync("a")  // a's second push: d's first version
        let first = drive.jsonField("a", "d.json", "changesetId")!
        drive.propagate("a", "c")
        try drive.sync("c")
        #expect(drive.jsonField("c", "d.json", "fa") == "0", "c took d")
        drive.edit("a", "d.json", "fa", to: 1)
        try drive.sync("a")  // a's third push: d made from its first version
        for x in 1...3 {  // b's longer chain, without d, wins
            drive.edit("b", "seed.json", "x", to: x)
            try drive.sync("b")
        }
        drive.propagate("b", "a")
        let resend = try drive.sync("a")
        #expect(resend.notices.contains { $0.contains("at the same time") }, "a lost the fork and sent d again")
        drive.edit("c", "d.json", "fc", to: 1)
        try drive.sync("c")  // c's push, made from d's first version, loses to a's resend
        // Everything reaches c but a's third push (the first one of the version a sent again).
        let a = try Workspace.open(at: drive.tree("a"), readOnly: true)
        let third = ".docsync/replicas/\(a.config.replicaId)/commits/3.json"
        a.close()
        drive.propagate("b", "c")
        drive.propagate("a", "c") { $0 != third }
        #expect(!FileManager.default.fileExists(atPath: drive.copy("c") + "/" + third))
        let resent = try String(
            contentsOfFile: drive.copy("c") + "/" + third.replacingOccurrences(of: "3.json", with: "4.json"),
            encoding: .utf8)
        let line = resent.split(separator: "\n").first { $0.contains(drive.jsonField("a", "d.json", "refId")!) }
        #expect(
            line?.contains("\"parents\":[\"\(first)\"]") == true, "the resend names d's first version: \(line ?? "")")
        let merged = try drive.sync("c")
        #expect(merged.conflicts.isEmpty, "different fields: no conflict, \(merged.conflicts)")
        #expect(drive.jsonField("c", "d.json", "fa") == "1")
        #expect(drive.jsonField("c", "d.json", "fc") == "1")
    }

    /// Found by the drive model check's campaign: a merge pushed on the winning chain named
    /// a parent whose commit had not arrived at a third copy (the merging replica's own
    /// version, on a chain that lost). Read there at once, its ancestry stopped short, the
    /// merge base was the document's first version, and a field only that replica changed
    /// collided with its own older value (a conflict). A commit naming a parent not here is
    /// now "not here yet", like one whose objects have not arrived.
    @Test func aCommitNamingAParentNotHereYetWaits() throws {
        // a gets everything but c's push that lost (the parent c's merge names).
        try Self.crossedForkReadWithout { $0.filter { $0.contains("/commits/") } }
    }

    /// Found by the drive model check's campaign (seed 22343823): the parent a commit
    /// names was held only by a commit that had itself not fully arrived (its object had
    /// not), and counted as here. The reader then measured the merge from an older base,
    /// as when the parent's commit had not arrived at all. A parent counts as here only
    /// when a commit holding it counts.
    @Test func aCommitNamingAVersionOfAWaitingCommitWaitsToo() throws {
        // a gets everything but the object of c's push that lost: its commit file is here.
        try Self.crossedForkReadWithout { $0.filter { !$0.contains("/commits/") } }
    }

    /// Three replicas: c's push (fc = 13, made from a's fa = 2) loses a fork to b's longer
    /// chain and c merges it onto b's, naming it as a parent. a then reads everything but
    /// the files of c's lost push that `withheld` picks (from the files that push added to
    /// c's copy): the merge must wait, a's own field must not collide with itself, and
    /// once everything arrives all three hold every field's last value.
    static func crossedForkReadWithout(_ withheld: (Set<String>) -> Set<String>) throws {
        let drive = DriveCopies()
        try drive.make("a")
        drive.write("a", "seed.json", "{\"fa\": 0, \"fb\": 0, \"fc\": 0}")
        try drive.sync("a")
        try drive.make("b")
        try drive.make("c")
        drive.edit("a", "seed.json", "fa", to: 2)
        try drive.sync("a")
        drive.propagate("a", "c")
        try drive.sync("c")  // c takes fa = 2
        let before = drive.files("c")
        drive.edit("c", "seed.json", "fc", to: 13)
        try drive.sync("c")  // c's push: made from a's
        let kept = withheld(drive.files("c").subtracting(before))
        #expect(!kept.isEmpty)
        for fb in [5, 14, 15] {  // b's longer chain wins
            drive.edit("b", "seed.json", "fb", to: fb)
            try drive.sync("b")
        }
        drive.propagate("b", "c")
        try drive.sync("c")  // c lost: its version merged onto b's, naming it as a parent
        drive.edit("a", "seed.json", "fa", to: 17)
        try drive.sync("a")
        drive.propagate("b", "a")
        drive.propagate("c", "a") { !kept.contains($0) }
        drive.edit("a", "seed.json", "fa", to: 33)
        let report = try drive.sync("a")
        #expect(report.conflicts.isEmpty, "a's own field changed only on a's side: \(report.conflicts)")
        #expect(report.notices.contains { $0.contains("earlier version(s) not here yet") }, "\(report.notices)")
        #expect(drive.jsonField("a", "seed.json", "fa") == "33")
        for _ in 0..<3 {
            drive.propagateAll()
            for name in ["a", "b", "c"] {
                let round = try drive.sync(name)
                #expect(round.conflicts.isEmpty, "\(name): \(round.conflicts)")
            }
        }
        for name in ["a", "b", "c"] {
            #expect(drive.jsonField(name, "seed.json", "fa") == "33", "\(name)")
            #expect(drive.jsonField(name, "seed.json", "fb") == "15", "\(name)")
            #expect(drive.jsonField(name, "seed.json", "fc") == "13", "\(name)")
        }
    }

    /// A version sent again by a replica that did not make it (its tree held it on a
    /// position the remote left) names the parents it was first pushed with, read from
    /// the maker's commit files.
    @Test func anotherReplicasVersionSentAgainNamesItsFirstParents() throws {
        let folder = TempFolder("drive-resend")
        let url = folder.sub("remote")
        try DriveFolderRemote.create(at: url)
        let remote = DriveFolderRemote(url: url)
        let (maker, sender) = ("aaaaaaaaaaaa", "bbbbbbbbbbbb")
        func version(_ ms: UInt64, _ text: String) -> (DocVersion, [UInt8]) {
            let id = ChangesetID(wallMillis: ms, counter: 0, replica: maker).description
            let bytes = Array("{\"refId\": \"d\", \"changesetId\": \"\(id)\", \"v\": \"\(text)\"}\n".utf8)
            return (DocVersion(refId: "d", changesetId: id, hash: ContentHash.of(bytes), path: "d.json"), bytes)
        }
        let (v1, b1) = version(1_000, "one"), (v2, b2) = version(2_000, "two")
        var cursor = try remote.commit(
            [RemoteWrite(refId: "d", new: v1, previous: nil, content: b1)], expecting: nil,
            replica: ReplicaInfo(replicaId: maker, name: "maker"))
        var second = RemoteWrite(refId: "d", new: v2, previous: v1, content: b2)
        second.parents = [v1.changesetId]
        cursor = try remote.commit([second], expecting: cursor, replica: ReplicaInfo(replicaId: maker, name: "maker"))
        var again = RemoteWrite(refId: "d", new: v2, previous: nil, content: b2)
        again.sentAgain = true
        _ = try remote.commit([again], expecting: cursor, replica: ReplicaInfo(replicaId: sender, name: "sender"))
        let text = try String(contentsOfFile: url + "/.docsync/replicas/\(sender)/commits/1.json", encoding: .utf8)
        #expect(text.contains("\"parents\":[\"\(v1.changesetId)\"]"), "\(text)")
    }

    /// Found by the Syncthing test: within one run, a pull merged a third replica's
    /// version (z) into the tree's pending edit (y); the push found that a fork had been
    /// lost meanwhile (another push won over the third replica's while the run worked),
    /// and the retry merged again from what the user had, without z, but still named the
    /// third replica's version as a parent. Everyone then read z = 0 as the newer value:
    /// the third replica's own edit was lost, every exit 0.
    @Test func aRetryThatMergesFromTheUsersVersionDoesNotNameWhatItDropped() throws {
        let drive = DriveCopies()
        for name in ["p", "q", "r"] { try drive.make(name) }
        // Roles by replica id: of two pushes made on one commit, the greater id wins.
        var ids: [String: String] = [:]
        for name in ["p", "q", "r"] {
            let ws = try Workspace.open(at: drive.tree(name), readOnly: true)
            ids[name] = ws.config.replicaId
            ws.close()
        }
        let byId = ["p", "q", "r"].sorted { ids[$0]! < ids[$1]! }
        let (c, b, a) = (byId[0], byId[1], byId[2])  // a's push beats c's
        drive.write(a, "seed.json", "{\"x\": 0, \"y\": 0, \"z\": 0}")
        try drive.sync(a)
        drive.propagateAll()
        try drive.sync(b)
        try drive.sync(c)
        #expect(drive.jsonField(b, "seed.json", "z") == "0" && drive.jsonField(c, "seed.json", "z") == "0")
        drive.edit(c, "seed.json", "z", to: 2)
        try drive.sync(c)
        drive.edit(a, "seed.json", "x", to: 3)
        try drive.sync(a)
        drive.propagate(c, b)
        drive.edit(b, "seed.json", "y", to: 3)
        // b's pull takes c's push; a's push, which wins over it, arrives before b's push.
        let ws = try Workspace.open(at: drive.tree(b), readOnly: false)
        var arrived = false
        ws.progress = { event in
            if case .finished(.pull) = event, !arrived {
                arrived = true
                drive.propagate(a, b)
            }
        }
        let report = try ws.sync.run(.both)
        ws.close()
        #expect(arrived && report.conflicts.isEmpty)
        for _ in 0..<3 {
            drive.propagateAll()
            for name in [a, b, c] {
                let round = try drive.sync(name)
                #expect(round.conflicts.isEmpty, "\(name): \(round.conflicts)")
            }
        }
        for name in [a, b, c] {
            #expect(drive.jsonField(name, "seed.json", "x") == "3", "\(name)")
            #expect(drive.jsonField(name, "seed.json", "y") == "3", "\(name)")
            #expect(drive.jsonField(name, "seed.json", "z") == "2", "\(name): c's edit is kept")
        }
    }

    /// a creates d; c takes it and a edits `fa`; b's longer chain without d wins; c, having
    /// lost, sends d again and edits `fc`; a pulls b's chain only: it lost too, and d waits
    /// to be sent again as new (no base). c's pushes have not reached a yet.
    static func documentWaitingToBeSentAgainAsNew() throws -> DriveCopies {
        let drive = DriveCopies()
        try drive.make("a")
        drive.write("a", "seed.json", "{\"x\": 0}")
        try drive.sync("a")
        try drive.make("b")
        try drive.make("c")
        drive.write("a", "d.json", "{\"fa\": 0, \"fc\": 0}")
        try drive.sync("a")
        drive.propagate("a", "c")
        try drive.sync("c")  // c takes d
        drive.edit("a", "d.json", "fa", to: 1)
        try drive.sync("a")
        for x in 1...3 {  // b's longer chain, without d, wins
            drive.edit("b", "seed.json", "x", to: x)
            try drive.sync("b")
        }
        drive.propagate("b", "c")
        try drive.sync("c")  // c lost: sends d again
        drive.edit("c", "d.json", "fc", to: 2)
        try drive.sync("c")
        drive.propagate("b", "a")
        let a = try Workspace.open(at: drive.tree("a"), readOnly: false)
        let rewound = try a.sync.run(.pull)  // a lost too: d waits to be sent again, as new
        a.close()
        #expect(rewound.notices.contains { $0.contains("at the same time") })
        return drive
    }

    /// Found by the drive model check's campaign (seed 22525960): a tree whose push lost a
    /// fork to a chain without the document sends it again as a new document (its base has
    /// none); a later pull met another replica's version of it, and measured the merge
    /// from nothing, as the tree's base held no version: every field that differed
    /// collided, and the tree's own newer value went to the conflict store. The merge is
    /// measured from the versions the pending content carries, base or not.
    @Test func aDocumentSentAgainAsNewMergesFromWhatItCarries() throws {
        let drive = try Self.documentWaitingToBeSentAgainAsNew()
        drive.propagate("c", "a")
        let merged = try drive.sync("a")
        #expect(merged.conflicts.isEmpty, "different fields: no conflict, \(merged.conflicts)")
        #expect(drive.jsonField("a", "d.json", "fa") == "1")
        #expect(drive.jsonField("a", "d.json", "fc") == "2")
    }

    /// Found by the Syncthing test (a spurious conflict, exit 3): the same, when the push
    /// of the run that merged it lost a race and the retry merged again from the user's
    /// version: that merge was measured from the user's base alone, not from what the
    /// user's content carried beyond it.
    @Test func aRetryMergesFromWhatTheUsersVersionCarries() throws {
        let drive = try Self.documentWaitingToBeSentAgainAsNew()
        drive.propagate("c", "a")
        // A push of c changing d again arrives between a's pull and a's push: a's push
        // lost the race, and the retry merges d again.
        drive.edit("c", "d.json", "fc", to: 3)
        try drive.sync("c")
        let ws = try Workspace.open(at: drive.tree("a"), readOnly: false)
        var arrived = false
        ws.progress = { event in
            if case .finished(.pull) = event, !arrived {
                arrived = true
                drive.propagate("c", "a")
            }
        }
        let merged = try ws.sync.run(.both)
        ws.close()
        #expect(arrived)
        #expect(merged.conflicts.isEmpty, "different fields: no conflict, \(merged.conflicts)")
        #expect(drive.jsonField("a", "d.json", "fa") == "1")
        #expect(drive.jsonField("a", "d.json", "fc") == "3", "\(merged.notices)")
    }

    /// A named parent whose commit has not arrived: the replica's earlier version of the
    /// document that is here stands in for it, so the merge base is not older than it
    /// must be (what the long campaign met: a spurious conflict, seed 21124297).
    @Test func aParentNotHereYetIsReplacedByAnOlderOneThatIs() {
        let c = Commits()
        let root = c.add("r0", 1, on: nil, ["d": "1"], parents: ["d": []])
        let two = c.add("r2", 1, on: root, ["d": "2"], parents: ["d": ["1"]])  // r2 sets its field
        c.add("r0", 2, on: two, ["d": "3"], parents: ["d": ["2"]])  // r0 merged it
        let own = c.add("r2", 2, on: two, ["d": "4"], parents: ["d": ["2"]])
        let missing = c.add("r2", 3, on: own, ["d": "5"], parents: ["d": ["4"]])
        c.add("r2", 4, on: missing, ["d": "6"], parents: ["d": ["5"]])
        c.all[missing] = nil  // r2's third push has not arrived here
        let ancestry = VersionAncestry(commits: Array(c.all.values))
        #expect(ancestry.ancestors(of: "d", changesetId: "6").keys.contains("2"))
        #expect(ancestry.commonAncestor(of: "d", "3", "6")?.changesetId == "2")
    }

    /// A checkpoint restates versions made before it: there, they have no parents.
    @Test func aCheckpointsVersionsAreRoots() {
        let c = Commits()
        let top = c.add("r1", 1, on: nil, ["d": "5"], checkpoint: true)
        let a = c.add("r1", 2, on: top, ["d": "6"], parents: ["d": ["5"]])
        c.add("r2", 1, on: top, ["d": "7"], parents: ["d": ["5"]])
        _ = a
        let ancestry = VersionAncestry(commits: Array(c.all.values))
        #expect(ancestry.commonAncestor(of: "d", "6", "7")?.changesetId == "5")
    }

    /// After a lost fork only this replica's own edits are replayed: a value it carried
    /// over from another replica's push is in the base, so the winning chain's later
    /// value of that field is taken, not fought.
    @Test func aLostForkReplaysOnlyOwnEdits() throws {
        func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
        let shared = bytes(#"{"x": 1, "y": 1, "z": 1}"#)
        let fromC = bytes(#"{"x": 1, "y": 1, "z": 2}"#)  // c's edit, on the losing chain
        let mine = bytes(#"{"x": 5, "y": 1, "z": 2, "new": true}"#)  // a's merge of it with a's own edits: x, new
        let chain: [(replica: String, bytes: [UInt8], madeOn: [UInt8]?)] = [("c", fromC, shared), ("a", mine, fromC)]
        let base = try #require(ForkRebase.base(chain: chain, me: "a"))
        let value = try JSONValueParser.parse(base)
        #expect(FieldPaths.value(at: "x", in: value) == .number("1"))
        #expect(FieldPaths.value(at: "new", in: value) == nil)
        #expect(FieldPaths.value(at: "z", in: value) == .number("2"), "the carried value is in the base: not a's edit")
        // A merge this replica made carries another's value too: its own change is only
        // what differs from the version it was made on.
        let merged = bytes(#"{"x": 5, "y": 7, "z": 2}"#)
        let onlyMine = try #require(
            ForkRebase.base(chain: [("a", merged, bytes(#"{"x": 1, "y": 7, "z": 2}"#))], me: "a"))
        #expect(try JSONValueParser.parse(onlyMine) == JSONValueParser.parse(bytes(#"{"x": 1, "y": 7, "z": 2}"#)))
        // A version made on none (this replica created the document there): not told.
        #expect(ForkRebase.base(chain: [("a", mine, nil)], me: "a") == nil)
        // The winning chain's value of a's own field x is one a held before (a merge
        // elsewhere carried it over): stale there, not a change; the base takes it.
        let older = bytes(#"{"x": 3, "y": 1, "z": 2}"#)
        let stale = try #require(
            ForkRebase.base(
                chain: chain, me: "a", winning: bytes(#"{"x": 3, "y": 9, "z": 2}"#), held: [shared, older, fromC]))
        #expect(FieldPaths.value(at: "x", in: try JSONValueParser.parse(stale)) == .number("3"))
        // A value a never held is a real change there: the base keeps a's pre-edit value.
        let fresh = try #require(
            ForkRebase.base(
                chain: chain, me: "a", winning: bytes(#"{"x": 8, "y": 9, "z": 2}"#), held: [shared, older, fromC]))
        #expect(FieldPaths.value(at: "x", in: try JSONValueParser.parse(fresh)) == .number("1"))
    }

    @Test func aCheckpointOnTheWayMakesASnapshot() {
        let c = Commits()
        let root = c.add("aaa", 1, on: nil, ["d": "1", "e": "1"])
        let checkpoint = c.add("aaa", 2, on: root, ["d": "1"], checkpoint: true)
        let after = c.add("aaa", 3, on: checkpoint, ["f": "1"])
        let changes = DriveHistory.changes(from: (root, 1), to: after, in: c)
        #expect(changes?.snapshot == true)
        #expect(changes?.entries.map(\.refId) == ["d", "f"])
        #expect(DriveHistory.changes(from: (checkpoint, 2), to: after, in: c)?.snapshot == false)
    }

    @Test func gitRepositoryInADriveFolderIsNoticed() {
        let syncthing: Set<String> = ["/home/u/Sync/.stfolder"]
        #expect(
            DriveFolderSigns.reason(for: "/home/u/Sync/notes.git", exists: syncthing.contains, list: { _ in [] })
                == "/home/u/Sync holds .stfolder")
        #expect(
            DriveFolderSigns.reason(for: "/home/u/Dropbox/notes.git", exists: { _ in false }, list: { _ in [] }) != nil)
        #expect(DriveFolderSigns.reason(for: "/srv/git/notes.git", exists: { _ in false }, list: { _ in [] }) == nil)
        let copied = DriveFolderSigns.reason(
            for: "/srv/git/notes.git", exists: { _ in false },
            list: { $0 == "/srv/git/notes.git/refs/heads" ? ["main", "main (conflicted copy)"] : [] })
        #expect(copied?.contains("conflict copy of a branch") == true)
    }

    @Test func serviceConflictNamesAreRecognised() {
        let copies = [
            "notes (conflicted copy).json", "notes (Ada's conflicted copy 2026-11-26).json", "notes (1).json",
            "notes (conflicted copy 2026-11-26 101112).json", "notes_conflict-20261126-101112.json",
            "notes.sync-conflict-20261126-101112-ABCDEFG.json", "notes (conflict on 2026-11-26).json",
            "notes (conflict #1 on 2026-11-26).json", "notes.Conflict.json"
        ]
        for name in copies { #expect(SyncServiceConflictName.original(of: name) == "notes.json", "\(name)") }
        #expect(SyncServiceConflictName.original(of: "notes-laptop.json", hosts: ["laptop"]) == "notes.json")
        for name in ["notes.json", "notes (draft).json", "conflict.json", "2026 (budget).json", "notes-laptop.json"] {
            #expect(SyncServiceConflictName.original(of: name) == nil, "\(name)")
        }
    }
}
