// The comparison half of the model check: what every replica, the remote and every
// conflict list hold, against SyncModel.swift. Each mismatch names the rules the
// prediction depended on, so a known engine defect can be told from a new failure.

import Foundation
import Testing

extension MC.Run {
    typealias Mismatch = MC.Mismatch
    typealias Rule = MC.Rule

    /// What a step's checks read from the replicas, kept while the alternatives of a
    /// concurrent step are compared (nothing changes on disk in between).
    struct StepCache {
        var remote: [String: [UInt8]]?
        var history: MC.StoredHistory?
        var conflicts: [Int: (records: [EngineRecord]?, error: String)] = [:]
        var status: [Int: RunResult] = [:]
        var log: [Int: RunResult] = [:]
    }

    /// Checks after a step; false ends the run (a failure was recorded, or a known
    /// defect made the documents unpredictable).
    func check(step: Int, after description: String, full: Bool = false) -> Bool {
        var found = collectMismatches(step: step, full: full) + stepMismatches
        stepMismatches = []
        if !found.isEmpty, let tried = alternativesTried {
            // Owed to whatever the other mismatches are owed to.
            found.append(
                Mismatch(
                    rules: found.allSatisfy(\.known) ? found.reduce(into: Set<Rule>()) { $0.formUnion($1.rules) } : [],
                    changesDocuments: false,
                    text: "no serial order of this step's runs matches; the model tried: "
                        + tried.joined(separator: " | ")))
        }
        alternativesTried = nil
        stepCache = nil
        lastRuns = []
        notePublished()
        return handle(found, step: step)
    }

    /// Everything that differs from the model after the step whose runs are `lastRuns`.
    func collectMismatches(step: Int, full: Bool) -> [Mismatch] {
        var found: [Mismatch] = []
        let synced = Set(lastRuns.filter(\.synced).map(\.r))
        for run in lastRuns where !run.expected.contains(run.result.exit) {
            let rules = run.rules.union(model.docRules.values.reduce(into: Set<Rule>()) { $0.formUnion($1) })
            found.append(
                Mismatch(
                    rules: rules, changesDocuments: false,
                    text:
                        "r\(run.r) exited \(run.result.exit); the model expects \(run.expected.sorted())\n\(run.result)"
                ))
        }
        for r in synced.sorted() { found += learn(r) }
        if !synced.isEmpty { found += checkRemote() }
        for r in synced.sorted() { found += checkStatus(r) }
        let ran = Set(lastRuns.map(\.r))
        for r in ran.sorted() { found += checkConflicts(r) }
        // A joined replica (first contact) is checked in the step it joins.
        for r in Set(0..<3).union(ran).sorted() { found += checkFiles(r) }
        if full || step % 25 == 0 {
            if synced.isEmpty { found += checkRemote() }
            for r in 0..<3 where !ran.contains(r) && !needsRecovery.contains(r) { found += checkConflicts(r) }
        }
        return found
    }

    private func handle(_ found: [Mismatch], step: Int) -> Bool {
        if found.isEmpty {
            forgetSettledRules()
            return true
        }
        let unknown = found.filter { !$0.known }
        if !unknown.isEmpty {
            let report = failureReport(found, step: step)
            print(report)
            Issue.record(Comment(rawValue: report))
            figures.stoppedBy = "failure at step \(step)"
            return false
        }
        for m in found {
            for rule in m.rules.intersection(MC.knownEngineDefects) { figures.knownDefectHits[rule, default: 0] += 1 }
            let key =
                m.rules.intersection(MC.knownEngineDefects).sorted().map(\.rawValue).joined(separator: ",")
                + m.text.prefix(60)
            if printedKnown.insert(key).inserted {
                print(
                    """
                    ⚠️  KNOWN ENGINE DEFECT (\(m.rules.intersection(MC.knownEngineDefects).sorted().map(\.rawValue).joined(separator: ", "))) \
                    \(kind) seed \(seed) step \(step): \(m.text)
                    """)
            }
        }
        if found.contains(where: \.changesDocuments) {
            figures.stoppedBy =
                "known engine defect at step \(step) ("
                + Set(found.flatMap { $0.rules.intersection(MC.knownEngineDefects) }).sorted().map(\.rawValue).joined(
                    separator: ", ") + ")"
            print(
                """
                ⚠️  KNOWN ENGINE DEFECT: the replicas left the model at step \(step) (\(kind), seed \(seed)); this run stops here.
                \(failureReport(found, step: step))
                """)
            return false
        }
        return true
    }

    func failureReport(_ found: [Mismatch], step: Int) -> String {
        let logPath = NSTemporaryDirectory() + "docsync-model-\(kind)-\(seed).log"
        try? log.joined(separator: "\n").write(toFile: logPath, atomically: true, encoding: .utf8)
        let kept = NSTemporaryDirectory() + "docsync-model-\(kind)-\(seed)-trees"
        try? FileManager.default.removeItem(atPath: kept)
        try? FileManager.default.copyItem(atPath: box.root, toPath: kept)
        return """
            MODEL MISMATCH (\(kind) remote, seed \(seed), step \(step) of \(length))
            \(found.map { "- " + $0.description }.joined(separator: "\n"))
            model now:
            \(modelSummary())
            last steps (full log: \(logPath); trees kept in \(kept)):
            \(log.suffix(40).joined(separator: "\n"))
            replay: DOCSYNC_MODEL_SEED=\(seed) DOCSYNC_MODEL_OPS=\(length) DOCSYNC_MODEL_KIND=\(kind) swift test --skip-build --filter ModelCheck
            """
    }

    func modelSummary() -> String {
        var lines: [String] = []
        let docs = Set(model.remote.keys).union(model.local.flatMap(\.keys)).union(model.base.flatMap(\.keys)).sorted()
        for d in docs {
            var parts = [
                "  doc\(d) \(refIds[d]?.prefix(8) ?? "(no refId yet)"): remote \(model.remote[d]?.description ?? "-")"
            ]
            for r in 0..<3 {
                let l =
                    model.local[r][d].map {
                        $0.invalidBytes != nil ? "INVALID (was \($0.placed))" : $0.placed.description
                    } ?? "-"
                parts.append("r\(r) \(l) base \(model.base[r][d]?.version.description ?? "-")")
            }
            lines.append(parts.joined(separator: " | "))
        }
        for rec in model.records {
            lines.append("  \(rec) known by \(rec.knownBy.sorted()) settled for \(rec.settledKnownBy.sorted())")
        }
        return lines.joined(separator: "\n")
    }

    /// Documents on which everybody agrees no longer owe their expectations to old decisions.
    private func forgetSettledRules() {
        for doc in Array(model.docRules.keys) {
            let r = model.remote[doc]
            let quiet = (0..<3).allSatisfy { i in
                model.local[i][doc]?.invalidBytes == nil && model.local[i][doc]?.placed == r && model.base[i][doc] == r
            }
            let open = model.records.contains { $0.doc == doc && $0.settledKnownBy.count < 3 }
            if quiet && !open { model.docRules[doc] = nil }
        }
    }

    private func rules(_ doc: Int?) -> Set<Rule> { doc.flatMap { model.docRules[$0] } ?? [] }

    private func doc(forRefId refId: String?) -> Int? {
        guard let refId else { return nil }
        return refIds.first { $0.value == refId }?.key
    }

    static func fields(_ object: [String: Any]) -> MC.Fields {
        var f: MC.Fields = [:]
        for k in MC.topFields { if let v = object[k] as? String { f[k] = v } }
        if let count = object[MC.counterField] as? Int { f[MC.counterField] = String(count) }
        if let nested = object["n"] as? [String: Any] {
            for (k, v) in nested { if let v = v as? String { f["n." + k] = v } }
        }
        for element in object[MC.arrayField] as? [[String: Any]] ?? [] {
            if let id = element["id"] as? String, let v = element["v"] as? String { f[MC.arrayField + "." + id] = v }
        }
        return f
    }

    // MARK: Files of a replica

    func checkFiles(_ r: Int) -> [Mismatch] {
        var found: [Mismatch] = []
        let name = "r\(r)"
        var disk = Files.list(replicas[r].root, skipMetadata: true)
        if needsRecovery.contains(r) { disk = disk.filter { !$0.contains(".docsync-tmp") } }
        var expected: [String: (Int, MC.LocalDoc)] = [:]
        for (d, e) in model.local[r] { expected[e.placed.path] = (d, e) }
        var syncedRefIds: [String: String] = [:]
        for path in Set(disk).union(expected.keys).sorted() {
            let bytes = replicas[r].bytes(path)
            guard let (d, e) = expected[path] else {
                let obj = bytes.flatMap(JSONHelp.object)
                let owner = doc(forRefId: obj?["refId"] as? String)
                found.append(
                    Mismatch(
                        rules: rules(owner), changesDocuments: true,
                        text:
                            "\(name) has \(path)\(owner.map { " (doc\($0))" } ?? "") \(obj.map { MC.show(Self.fields($0)) } ?? ""); the model has no document there"
                    ))
                continue
            }
            guard let bytes, disk.contains(path) else {
                found.append(
                    Mismatch(
                        rules: rules(d), changesDocuments: true,
                        text: "\(name) is missing \(path): the model has doc\(d) \(e.placed) there"))
                continue
            }
            if let bad = e.invalidBytes {
                if bytes != bad {
                    found.append(
                        Mismatch(
                            rules: rules(d).union([.invalidMerge]), changesDocuments: true,
                            text:
                                "\(name) \(path): the user's invalid bytes were changed to \(String(decoding: bytes, as: UTF8.self).debugDescription)"
                        ))
                }
                continue
            }
            guard let object = JSONHelp.object(bytes) else {
                found.append(
                    Mismatch(
                        rules: rules(d), changesDocuments: true,
                        text:
                            "\(name) \(path) is not a valid document: \(String(decoding: bytes, as: UTF8.self).debugDescription)"
                    ))
                continue
            }
            let fields = Self.fields(object)
            if fields != e.placed.version.fields {
                found.append(
                    Mismatch(
                        rules: rules(d), changesDocuments: true,
                        text:
                            "\(name) \(path) (doc\(d)) holds \(MC.show(fields)); the model expects \(e.placed.version) (base \(model.base[r][d]?.version.description ?? "-"), remote \(model.remote[d]?.description ?? "-"))"
                    ))
            }
            let nestedKeys = (object["n"] as? [String: Any]).map { Set($0.keys).subtracting(["x", "y"]) } ?? []
            let extra = Set(object.keys).subtracting(
                ["refId", "changesetId", "n", MC.counterField, MC.arrayField] + MC.topFields
            )
            .union(nestedKeys.map { "n." + $0 })
            if !extra.isEmpty {
                found.append(
                    Mismatch(
                        rules: rules(d), changesDocuments: true,
                        text: "\(name) \(path) has unexpected keys \(extra.sorted())"))
            }
            // Every save keeps `i` in `id` order; a merge of sorted sequences is sorted (SYNC.md,
            // Arrays: the sequence merge keeps each side's order), unless both sides inserted
            // into one gap (then by save time: `Rule.arrayOrderBySaveTime`).
            let ids = (object[MC.arrayField] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            if ids != ids.sorted() && !model.orderNotFollowed.contains(d) {
                found.append(
                    Mismatch(
                        rules: rules(d), changesDocuments: true,
                        text: "\(name) \(path) holds the elements of i out of order: \(ids)"))
            }
            let refId = object["refId"] as? String
            // A regenerated file carries no ids until its replica's next sync.
            if let known = refIds[d], refId != known, refId != nil || !regeneratedUnsynced[r].contains(d) {
                found.append(
                    Mismatch(
                        rules: rules(d).union([.identity]), changesDocuments: true,
                        text: "\(name) \(path) (doc\(d)) has refId \(refId ?? "none"), the document's refId is \(known)"
                    ))
            }
            if let refId, model.base[r][d] != nil, model.local[r][d]?.placed == model.base[r][d] {
                if let other = syncedRefIds[refId] {
                    found.append(
                        Mismatch(
                            rules: rules(d).union([.identity]), changesDocuments: true,
                            text: "\(name): \(path) and \(other) share refId \(refId)"))
                }
                syncedRefIds[refId] = path
            }
            if refId != nil { lastSeen[r][d] = (path, bytes) }
        }
        return found
    }

    /// After a sync of `r`: every synced document's refId and changesetId.
    func learn(_ r: Int) -> [Mismatch] {
        var found: [Mismatch] = []
        for (d, e) in model.local[r] where e.invalidBytes == nil && model.base[r][d] == e.placed {
            guard let object = replicas[r].json(e.placed.path) else { continue }
            guard let refId = object["refId"] as? String else {
                found.append(
                    Mismatch(
                        rules: rules(d), changesDocuments: true,
                        text: "r\(r) \(e.placed.path) has no refId after a sync"))
                continue
            }
            if refIds[d] == nil {
                if let other = doc(forRefId: refId) {
                    found.append(
                        Mismatch(
                            rules: rules(d).union(rules(other)).union([.identity]), changesDocuments: true,
                            text:
                                "r\(r) \(e.placed.path): doc\(d) got refId \(refId), which is doc\(other)'s (a copy must get its own)"
                        ))
                    continue
                }
                refIds[d] = refId
            }
            guard let cs = object["changesetId"] as? String else {
                found.append(
                    Mismatch(
                        rules: rules(d), changesDocuments: true,
                        text: "r\(r) \(e.placed.path) has no changesetId after a sync"))
                continue
            }
            found += learnChangeset(
                cs, fields: Self.fields(object), version: e.placed.version, doc: d, where: "r\(r) \(e.placed.path)")
        }
        return found
    }

    func learnChangeset(_ cs: String, fields: MC.Fields, version: MC.Version?, doc: Int?, where place: String)
        -> [Mismatch]
    {
        var found: [Mismatch] = []
        if cs.range(of: "^[0-9a-f]{12}-[0-9a-f]{4}-[0-9a-z]{4,32}$", options: .regularExpression) == nil {
            found.append(
                Mismatch(
                    rules: [.identity], changesDocuments: false,
                    text: "\(place): changesetId \(cs) is not <12 hex>-<4 hex>-<replica>"))
        }
        if let known = csContent[cs], known != fields {
            found.append(
                Mismatch(
                    rules: rules(doc).union([.identity]), changesDocuments: false,
                    text:
                        "\(place): changesetId \(cs) names \(MC.show(fields)) here but \(MC.show(known)) elsewhere (one changesetId, one content)"
                ))
        }
        csContent[cs] = fields
        if let v = version, v.fields == fields, versionCs[v.id] == nil {
            versionCs[v.id] = cs
            let wall = Int64(cs.prefix(12), radix: 16)
            if var window = savedAhead[v.id] {
                // SPEC rule 1: a save's time is its mtime, "never later than now", and after
                // the version it was edited from (one from a clock ahead: right after it).
                if let parent = model.savedFrom[v.id] {
                    guard let pcs = versionCs[parent], let pw = Int64(pcs.prefix(12), radix: 16) else { return found }
                    window = (max(window.saved, pw + 1), max(window.recordedBy, pw + 1))
                }
                guard let wall, wall < window.saved || wall > window.recordedBy else { return found }
                found.append(
                    Mismatch(
                        rules: rules(doc).union([.saveTime, .clockHazard]), changesDocuments: false,
                        text:
                            "\(place): the version saved with an mtime in the future got changesetId \(cs): its time part should be when the sync recorded it (\(window.saved)…\(window.recordedBy))"
                    ))
            } else if var m = v.mtimeMs, !echoDocs.contains(doc ?? -1), let wall {
                // A save dated before the version it was edited from sorts right after that one
                // (backdated, saved on a clock behind, or edited from a clock ahead's version).
                if let parent = backdatedParent[v.id] ?? model.savedFrom[v.id] {
                    if let pcs = versionCs[parent], let pw = Int64(pcs.prefix(12), radix: 16) {
                        m = max(m, pw + 1)
                    } else if backdatedParent[v.id] != nil || !model.skewMs.isEmpty {
                        return found
                    }
                }
                if wall != m {
                    found.append(
                        Mismatch(
                            rules: rules(doc).union([.saveTime]), changesDocuments: false,
                            text:
                                "\(place): the version saved with mtime \(m) (\(String(m, radix: 16))) got changesetId \(cs): its time part should be the save's"
                        ))
                }
            }
        }
        return found
    }

    // MARK: The remote

    func remoteFiles() -> [String: [UInt8]] {
        if let cached = stepCache?.remote { return cached }
        let files = readRemoteFiles()
        stepCache?.remote = files
        return files
    }

    private func readRemoteFiles() -> [String: [UInt8]] {
        if !git {
            var files: [String: [UInt8]] = [:]
            for p in Files.list(remoteURL, skipMetadata: true) where !Files.isTransient(p) {
                files[p] = Files.bytes(remoteURL + "/" + p)
            }
            return files
        }
        let list = CLI.runTool(
            "/usr/bin/git", ["--git-dir", gitRepository, "ls-tree", "-r", "main"], in: "/", env: Reliability.gitEnv)
        guard list.exit == 0 else { return [:] }
        var files: [String: [UInt8]] = [:]
        for line in list.stdout.split(separator: "\n") {
            let parts = line.split(separator: "\t", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let path = String(parts[1]), sha = String(parts[0].split(separator: " ").last ?? "")
            if path.hasPrefix(".docsync/") { continue }
            if gitBlobs[sha] == nil {
                let blob = CLI.runTool(
                    "/usr/bin/git", ["--git-dir", gitRepository, "cat-file", "blob", sha], in: "/",
                    env: Reliability.gitEnv)
                gitBlobs[sha] = Array(blob.stdout.utf8)
            }
            files[path] = gitBlobs[sha]
        }
        return files
    }

    func checkRemote() -> [Mismatch] {
        // A drive's readable view may come late (REMOTE-LAYOUT.md): its history is the remote.
        if remoteKind == .drive { return checkHistory() }
        return checkView() + (git ? [] : checkHistory())
    }

    /// The stored history of a folder remote (drive layout) against the model's remote: every
    /// live document's latest entry on the tip's chain, at the model's path, its object's
    /// bytes the model's values under the entry's ids; nothing live the model does not have.
    func checkHistory() -> [Mismatch] {
        let history = stepCache?.history ?? MC.StoredHistory(folder: historyFolder())
        stepCache?.history = history
        figures.historyChecks += 1
        figures.historyDocuments += history.documents.count
        var found = history.problems.map {
            Mismatch(rules: [], changesDocuments: true, text: "the stored history: \($0)")
        }
        var expected: [String: (Int, MC.Placed)] = [:]
        var unlearned: [String: (Int, MC.Placed)] = [:]
        for (d, p) in model.remote {
            if let refId = refIds[d] { expected[refId] = (d, p) } else { unlearned[p.path] = (d, p) }
        }
        for (refId, entry) in history.documents.sorted(by: { $0.key < $1.key }) where !entry.deleted {
            guard let (d, p) = expected.removeValue(forKey: refId) ?? unlearned.removeValue(forKey: entry.path) else {
                let owner = doc(forRefId: refId)
                found.append(
                    Mismatch(
                        rules: rules(owner), changesDocuments: true,
                        text:
                            "the stored history holds \(entry.path) (\(owner.map { "doc\($0)" } ?? "refId \(refId)"), \(entry.changesetId)) live; the model's remote does not have it"
                    ))
                continue
            }
            guard let bytes = history.bytes(entry.hash), let obj = JSONHelp.object(bytes) else {
                found.append(
                    Mismatch(
                        rules: rules(d), changesDocuments: true,
                        text:
                            "the stored history's version \(entry.changesetId) of doc\(d) names object \(entry.hash), which objects/ does not hold whole (or it is not a document)"
                    ))
                continue
            }
            let fields = Self.fields(obj)
            if entry.path != p.path || fields != p.version.fields {
                found.append(
                    Mismatch(
                        rules: rules(d), changesDocuments: true,
                        text:
                            "the stored history has doc\(d) at \(entry.path) holding \(MC.show(fields)); the model's remote has \(p.path) \(p.version)"
                    ))
            }
            if obj["refId"] as? String != refId || obj["changesetId"] as? String != entry.changesetId {
                found.append(
                    Mismatch(
                        rules: rules(d).union([.identity]), changesDocuments: true,
                        text:
                            "the stored history's entry \(refId) \(entry.changesetId) names an object with ids \(obj["refId"] as? String ?? "none") \(obj["changesetId"] as? String ?? "none")"
                    ))
            }
        }
        for (d, p) in Array(expected.values) + Array(unlearned.values) {
            found.append(
                Mismatch(
                    rules: rules(d), changesDocuments: true,
                    text:
                        "the stored history has no live doc\(d) (model: \(p.path) \(p.version)); its entry: \(refIds[d].flatMap { history.documents[$0] }.map { "\($0.path) \($0.changesetId)\($0.deleted ? " deleted" : "")" } ?? "none")"
                ))
        }
        return found
    }

    func checkView() -> [Mismatch] {
        var found: [Mismatch] = []
        let files = remoteFiles()
        var expected: [String: (Int, MC.Placed)] = [:]
        for (d, p) in model.remote { expected[p.path] = (d, p) }
        for path in Set(files.keys).union(expected.keys).sorted() {
            let obj = files[path].flatMap(JSONHelp.object)
            guard let (d, p) = expected[path] else {
                let owner = doc(forRefId: obj?["refId"] as? String)
                found.append(
                    Mismatch(
                        rules: rules(owner), changesDocuments: true,
                        text:
                            "the remote has \(path)\(owner.map { " (doc\($0))" } ?? "") \(obj.map { MC.show(Self.fields($0)) } ?? ""); the model has nothing there"
                    ))
                continue
            }
            guard let obj else {
                found.append(
                    Mismatch(
                        rules: rules(d), changesDocuments: true,
                        text: "the remote is missing \(path) (doc\(d) \(p.version)), or it is not a document"))
                continue
            }
            let fields = Self.fields(obj)
            if fields != p.version.fields {
                found.append(
                    Mismatch(
                        rules: rules(d), changesDocuments: true,
                        text: "the remote's \(path) (doc\(d)) holds \(MC.show(fields)); the model expects \(p.version)")
                )
            }
            if let known = refIds[d], (obj["refId"] as? String) != known {
                found.append(
                    Mismatch(
                        rules: rules(d).union([.identity]), changesDocuments: true,
                        text:
                            "the remote's \(path) has refId \(obj["refId"] as? String ?? "none"), doc\(d)'s is \(known)"
                    ))
            }
            if let cs = obj["changesetId"] as? String {
                found += learnChangeset(cs, fields: fields, version: p.version, doc: d, where: "remote \(path)")
            }
        }
        return found
    }

    // MARK: Conflict lists and status

    struct EngineRecord {
        var refId: String
        var fields: [String]
        var deleted: Bool
        /// A rename that lost to the other side's (`renameLost`).
        var renameLost: Bool
        /// `file`: the stored copy's path under the tree (nil if the record names none).
        var file: String?
        /// The field values of the stored copy, read from `file` (nil if unreadable).
        var copy: MC.Fields?
        /// This replica's point of view: `local` if the stored version (or deletion) was made here.
        var storedSide: String?
        /// The replica id that made the kept version.
        var keptBy: String?
        /// The replica id in the record's changesetId (its last part): the stored version's
        /// maker when the record stores a version (a deletion record's changesetId is the
        /// deleted version's, not the deleter's).
        var storedMaker: String?
        /// The replica whose version or deletion lost (`lostBy`).
        var lostBy: String?
        var raw: String
    }

    func engineConflicts(_ r: Int) -> (records: [EngineRecord]?, error: String) {
        if let cached = stepCache?.conflicts[r] { return cached }
        let listed = readEngineConflicts(r)
        stepCache?.conflicts[r] = listed
        return listed
    }

    private func readEngineConflicts(_ r: Int) -> (records: [EngineRecord]?, error: String) {
        let result = replicas[r].run(["conflicts", "--json"])
        guard result.exit == 0,
            let list = (JSONHelp.parse(result.stdout) as? [String: Any])?["conflicts"] as? [[String: Any]]
        else {
            return (nil, "\(result)")
        }
        var records: [EngineRecord] = []
        for item in list {
            let refId = item["refId"] as? String ?? "?"
            let fields = MC.conflictFields(item["fields"] as? [String] ?? [])
            let file = item["file"] as? String
            let copy = file.flatMap { replicas[r].json($0) }.map(Self.fields)
            let raw =
                (try? JSONSerialization.data(withJSONObject: item, options: [.sortedKeys])).map {
                    String(decoding: $0, as: UTF8.self)
                } ?? "\(item)"
            records.append(
                EngineRecord(
                    // A lost version with no fields is a whole document (`override`'s record).
                    refId: refId, fields: fields, deleted: item["deleted"] as? Bool ?? false,
                    renameLost: item["renameLost"] as? Bool ?? false, file: file, copy: copy,
                    storedSide: item["storedSide"] as? String,
                    keptBy: item["keptBy"] as? String,
                    storedMaker: (item["changesetId"] as? String)?.split(separator: "-").last.map(String.init),
                    lostBy: item["lostBy"] as? String, raw: raw))
        }
        return (records, "")
    }

    /// Every open record the model says `r` lists must be listed, with the stored losing
    /// version readable at `file` and holding exactly the losing content (for a field
    /// conflict the losing version's fields; for a deletion that lost, the deleted version,
    /// where the model knows it); and nothing else may be listed open.
    func checkConflicts(_ r: Int) -> [Mismatch] {
        let (listed, error) = engineConflicts(r)
        guard var engine = listed else {
            return [
                Mismatch(rules: [], changesDocuments: false, text: "r\(r): docsync conflicts --json failed: \(error)")
            ]
        }
        var found: [Mismatch] = []
        for rec in model.openRecords(r) {
            let refId = refIds[rec.doc]
            let expectedCopy = rec.loser?.fields ?? rec.deletedVersion?.fields
            let candidates = engine.indices.filter { i in
                (refId == nil || engine[i].refId == refId) && engine[i].fields == MC.conflictFields(rec.fields)
                    && engine[i].deleted == (rec.loser == nil) && engine[i].renameLost == rec.renameLost
            }
            let fitting = candidates.filter { expectedCopy == nil || engine[$0].copy == expectedCopy }
            // Two records of one loss (a deletion that edits on two replicas beat) differ only
            // in the version each kept: pair by that first (folder seed 11103).
            let keptBy =
                rec.keptBy < replicaIds.count
                ? (rec.keptBy == MC.Model.plainGit ? "git0" : replicaIds[rec.keptBy]) : nil
            // And two deletions of one version by two replicas, which one edit beat, differ
            // only in who deleted (folder seed 32107): pair by that too.
            let lostBy = MC.Model.storedBy(rec).flatMap {
                $0 == MC.Model.plainGit ? "git0" : $0 < replicaIds.count ? replicaIds[$0] : nil
            }
            func pairs(_ i: Int, kept: Bool, lost: Bool) -> Bool {
                (!kept || (keptBy != nil && engine[i].keptBy == keptBy))
                    && (!lost || (lostBy != nil && engine[i].lostBy == lostBy))
            }
            if let i = fitting.first(where: { pairs($0, kept: true, lost: true) })
                ?? fitting.first(where: { pairs($0, kept: true, lost: false) })
                ?? fitting.first(where: { pairs($0, kept: false, lost: true) }) ?? fitting.first
            {
                if engine[i].copy != nil {
                    figures.conflictCopiesChecked += 1
                    found += checkCopyBytes(r, rec, engine[i])
                } else if rec.loser != nil {
                    found.append(
                        Mismatch(
                            rules: rules(rec.doc).union([.fieldMerge]), changesDocuments: false,
                            text:
                                "r\(r) lists \(rec) but its stored copy \(engine[i].file ?? "(no file named)") cannot be read: \(engine[i].raw)"
                        ))
                }
                found += checkPointOfView(r, rec, engine[i])
                engine.remove(at: i)
                continue
            }
            var rules = rules(rec.doc).union([.fieldMerge])
            if rec.finder != r { rules.insert(.conflictsTravel) }
            if rec.fields.isEmpty { rules.insert(.deleteVsEdit) }
            if let i = candidates.first {
                let held = engine[i].copy.map(MC.show) ?? "nothing readable"
                if rec.loser == nil, let base = rec.finderBase, engine[i].copy == base.fields {
                    // The known defect: the finder's base stored under the deleted version's name.
                    rules = [.deletionCopyIsFinderBase]
                }
                found.append(
                    Mismatch(
                        rules: rules, changesDocuments: false,
                        text:
                            "r\(r) lists \(rec), but its stored copy \(engine[i].file ?? "(no file named)") holds \(held); the model expects \(expectedCopy.map(MC.show) ?? "?"): \(engine[i].raw)"
                    ))
                engine.remove(at: i)
                continue
            }
            found.append(
                Mismatch(rules: rules, changesDocuments: false, text: "r\(r)'s docsync conflicts does not list \(rec)"))
        }
        for rec in model.retakeableRecords(r) {
            let refId = refIds[rec.doc]
            guard
                let i = engine.firstIndex(where: { e in
                    (refId == nil || e.refId == refId) && e.fields == MC.conflictFields(rec.fields)
                        && e.deleted == (rec.loser == nil) && e.renameLost == rec.renameLost
                })
            else { continue }
            model.retake(r, record: rec.id)
            figures.recordsRetaken += 1
            engine.remove(at: i)
        }
        for e in engine {
            let d = doc(forRefId: e.refId)
            var rules = rules(d)
            let settledHere = model.records.contains {
                $0.doc == d && $0.knownBy.contains(r) && $0.settledKnownBy.contains(r)
            }
            let settledElsewhere = model.records.contains {
                $0.doc == d && $0.settledKnownBy.count > ($0.settledKnownBy.contains(r) ? 1 : 0)
            }
            if settledElsewhere || settledHere { rules.insert(.conflictsTravel) }
            found.append(
                Mismatch(
                    rules: rules, changesDocuments: false,
                    text:
                        "r\(r)'s docsync conflicts lists an open conflict the model does not have\(d.map { " (doc\($0))" } ?? ""): \(e.raw)"
                ))
        }
        return found
    }

    /// SYNC.md: the stored version is byte for byte the losing version as it was saved
    /// (with the ids the sync stamped into it): checked where the loser is a user save the
    /// driver wrote.
    func checkCopyBytes(_ r: Int, _ rec: MC.ConflictRecord, _ listed: EngineRecord) -> [Mismatch] {
        guard let loser = rec.loser, let saved = savedBytes[loser.id], let file = listed.file,
            let stored = replicas[r].bytes(file)
        else { return [] }
        figures.conflictCopyBytesChecked += 1
        let want = Self.withoutIds(saved), got = Self.withoutIds(stored)
        guard want != got else { return [] }
        return [
            Mismatch(
                rules: rules(rec.doc), changesDocuments: false,
                text:
                    "r\(r)'s stored copy \(file) of \(rec) is not the losing version as saved: stored \(got.debugDescription), saved \(want.debugDescription)"
            )
        ]
    }

    /// SYNC.md: a record names its versions by the replica that made each; the stored one
    /// is `local` only on the replica that made it (`storedSide`), `keptBy` is the replica
    /// in the kept changesetId.
    func checkPointOfView(_ r: Int, _ rec: MC.ConflictRecord, _ listed: EngineRecord) -> [Mismatch] {
        var found: [Mismatch] = []
        if let by = MC.Model.storedBy(rec) {
            var expected = by == r ? "local" : "remote"
            // Both versions made by `r` and the record found by `r` (its earlier push, the
            // remote's side, against its later write-back): the side that lost in its sync
            // (SYNC.md, "Whose version is local"; folder seed 30118).
            if by == r, rec.keptBy == r, rec.finder == r { expected = rec.loserWasLocal ? "local" : "remote" }
            // An edit identical to another replica's reaches the remote under either's
            // changesetId, and the order a concurrent sync is matched with can leave which
            // open (seed 305497954, daemon: five orders matched, the model's made r1 the
            // maker, the changesetId was r0's). The maker is then the one the stored
            // changesetId names, provided it is one of the replicas that made the edit.
            // Only for a stored version: an echo edit makes versions, never deletions.
            if rec.loser != nil, !rec.renameLost, let makers = echoMakers[rec.doc], makers.contains(by),
                let maker = listed.storedMaker.flatMap({ replicaIds.firstIndex(of: $0) }), makers.contains(maker)
            {
                if maker != by { figures.echoMakerSwaps += 1 }
                expected = maker == r ? "local" : "remote"
            }
            if listed.storedSide != expected {
                found.append(
                    Mismatch(
                        rules: rules(rec.doc).union([.pointOfView]), changesDocuments: false,
                        text:
                            "r\(r) lists \(rec) with storedSide \(listed.storedSide ?? "none"); the stored \(rec.loser == nil ? "deletion" : "version") was made by \(by == MC.Model.plainGit ? "plain git" : names[by]), so the model expects \(expected): \(listed.raw)"
                    ))
            }
            figures.pointOfViewChecks += 1
        }
        // An identical edit on two replicas may keep either changesetId.
        if !echoDocs.contains(rec.doc), rec.keptBy < replicaIds.count {
            // Versions committed with plain git get ids of the replica `git0`.
            let expected = rec.keptBy == MC.Model.plainGit ? "git0" : replicaIds[rec.keptBy]
            if listed.keptBy != expected {
                found.append(
                    Mismatch(
                        rules: rules(rec.doc).union([.pointOfView]), changesDocuments: false,
                        text:
                            "r\(r) lists \(rec) with keptBy \(listed.keptBy ?? "none"); the kept version was made by \(rec.keptBy == MC.Model.plainGit ? "plain git" : names[rec.keptBy]) (\(expected)): \(listed.raw)"
                    ))
            }
        }
        return found
    }

    /// A receive-only replica's base moves only by what its pulls saw (`seen` in its
    /// journal): each document's last one must hold its base's content in the model. Why:
    /// a pending version there keeps its files alike whichever order a concurrent step's
    /// runs took, but not its base, which a later merge or `revert` goes back to (folder
    /// seed 31, step 282: the model took the order where r2 pulled before r0's push).
    func checkBases(_ r: Int) -> [Mismatch] {
        let result = stepCache?.log[r] ?? replicas[r].run(["log", "--json"])
        stepCache?.log[r] = result
        let entries = (JSONHelp.parse(result.stdout) as? [String: Any])?["entries"] as? [[String: Any]] ?? []
        var lastSeen: [String: String] = [:]
        for entry in entries where entry["kind"] as? String == "seen" {
            guard let refId = entry["refId"] as? String, let cs = entry["changesetId"] as? String else { continue }
            lastSeen[refId] = entry["deleted"] as? Bool == true ? "" : cs
        }
        var found: [Mismatch] = []
        for (refId, cs) in lastSeen where !cs.isEmpty {
            guard let d = doc(forRefId: refId), let b = model.base[r][d], let content = csContent[cs],
                content != b.version.fields
            else { continue }
            found.append(
                Mismatch(
                    rules: rules(d), changesDocuments: false,
                    text:
                        "r\(r) (receive-only): its base of doc\(d) is \(cs) \(MC.show(content)) (its last pull's); the model's is \(b.version)"
                ))
        }
        return found
    }

    /// A send-only replica holds every remote change aside: `status` lists exactly the
    /// documents whose remote version (as its last pull read it) is not its base.
    func checkNotApplied(_ r: Int, _ status: [String: Any]) -> [Mismatch] {
        var found: [Mismatch] = []
        // A send-only replica holds every remote change aside, listed as not applied.
        // Each with the path the held version has (what applying it would give): this also
        // tells apart the orders of a concurrent step that leave its files alike.
        // And with its content, where its changesetId names one already seen.
        var listed: [Int: String] = [:]
        for entry in status["notApplied"] as? [[String: Any]] ?? [] {
            guard let d = doc(forRefId: entry["refId"] as? String) else { continue }
            listed[d] = entry["path"] as? String ?? ""
            if let held = model.seenRemote[r][d]?.version, let cs = entry["changesetId"] as? String,
                let content = csContent[cs], content != held.fields
            {
                listed[d]! += " holding \(MC.show(content))"
            }
        }
        // A document whose file is invalid now is left out of both sides, as for pending:
        // the model does not know whether its last valid save was recorded.
        let invalidNow = Set(model.local[r].filter { $0.value.invalidBytes != nil }.keys)
        for d in invalidNow { listed[d] = nil }
        var expected: [Int: String] = [:]
        for d in model.heldDocs(r).subtracting(invalidNow) {
            expected[d] =
                model.seenRemote[r][d]?.path ?? model.local[r][d]?.placed.path ?? model.base[r][d]?.path ?? ""
        }
        if listed != expected {
            found.append(
                Mismatch(
                    rules: Set(listed.keys).union(expected.keys).reduce(into: Set<Rule>([.override])) {
                        $0.formUnion(rules($1))
                    }, changesDocuments: false,
                    text:
                        "r\(r) (send-only): status lists remote changes not applied \(listed.sorted { $0.key < $1.key }), the model \(expected.sorted { $0.key < $1.key }): \(status["notApplied"] ?? [])"
                ))
        }
        return found
    }

    /// Documents changed since `r`'s last sync recorded the tree (a save, move or
    /// deletion during that run which the run did not see).
    func changedSinceRecorded(_ r: Int) -> Set<Int> {
        r < model.unseenEdits.count ? model.unseenEdits[r] : []
    }

    func checkStatus(_ r: Int) -> [Mismatch] {
        let result = stepCache?.status[r] ?? replicas[r].run(["status", "--json"])
        stepCache?.status[r] = result
        guard let status = JSONHelp.parse(result.stdout) as? [String: Any] else {
            return [
                Mismatch(
                    rules: [], changesDocuments: false,
                    text: "r\(r): docsync status --json printed no report: \(result)")
            ]
        }
        var found: [Mismatch] = []
        // The rules behind the documents an entry names.
        func entryRules(_ entries: [[String: Any]]) -> Set<Rule> {
            entries.reduce(into: Set<Rule>()) { $0.formUnion(rules(doc(forRefId: $1["refId"] as? String))) }
        }
        let pending = status["pending"] as? [[String: Any]] ?? []
        if model.sendOnly.contains(r) { found += checkNotApplied(r, status) }
        if model.receiveOnly.contains(r) { found += checkBases(r) }
        if model.receiveOnly.contains(r) || model.sendOnly.contains(r) {
            // A receive-only replica never sends: what it changed stays pending; a send-only
            // one keeps pending what it changed of documents with a held remote change.
            // A document it created has no refId in the model's map (learned from the remote,
            // which it never reaches): it is found by its path here.
            // A document whose file is invalid now is left out of both sides: the model does
            // not know whether its last valid save was recorded before the file broke.
            let invalid = Set(model.local[r].filter { $0.value.invalidBytes != nil }.keys)
            let listed = Set(
                pending.compactMap { entry in
                    doc(forRefId: entry["refId"] as? String)
                        ?? model.local[r].first { $0.value.placed.path == entry["path"] as? String }?.key
                }
            ).subtracting(invalid)
            let changedSince = changedSinceRecorded(r)
            let expected = model.locallyChanged(r).subtracting(changedSince)
                .union(model.recordedChanges(r).intersection(changedSince))
            // Listed beyond the model: only a version of its own with the base's content
            // (a save or `resolve` back to the base's values is a recorded action that stays
            // pending). This also tells apart the orders of a concurrent step that leave a
            // receive-only replica's files alike but its bases not. Nor one whose elements
            // left `id` order for good (`orderNotFollowed`): the model's fields carry no
            // order, so a replica that keeps its own order (receive-only: pending for ever)
            // merges it with the next remote version where the model sees no change (git
            // seed 35227, step 105).
            let extra = listed.subtracting(expected).filter {
                !model.holdsOwnVersionOfBase(r, $0) && !model.orderNotFollowed.contains($0)
            }
            if !expected.isSubset(of: listed) || !extra.isEmpty {
                found.append(
                    Mismatch(
                        rules: entryRules(pending), changesDocuments: false,
                        text:
                            "r\(r) (\(model.sendOnly.contains(r) ? "send-only" : "receive-only")): status lists pending changes of docs \(listed.sorted()), the model \(expected.sorted()): \(pending)"
                    ))
            }
        } else if !pending.isEmpty {
            found.append(
                Mismatch(
                    rules: entryRules(pending), changesDocuments: false,
                    text: "r\(r): status lists \(pending.count) pending changes right after a sync: \(pending)"))
        }
        let invalidPaths = Set(model.local[r].values.filter { $0.invalidBytes != nil }.map(\.placed.path))
        // A file saved, moved or deleted after the sync recorded the tree (an edit during
        // the run that the run did not see) is unrecorded, as it should be.
        let changedSince = changedSinceRecorded(r)
        let unrecorded = (status["unrecorded"] as? [[String: Any]] ?? []).filter {
            !invalidPaths.contains($0["path"] as? String ?? "")
                && !(doc(forRefId: $0["refId"] as? String).map { changedSince.contains($0) } ?? false)
        }
        if !unrecorded.isEmpty {
            found.append(
                Mismatch(
                    rules: entryRules(unrecorded), changesDocuments: false,
                    text: "r\(r): status lists unrecorded changes right after a sync: \(unrecorded)"))
        }
        let open = (status["conflicts"] as? [[String: Any]] ?? []).filter { $0["resolved"] == nil }
        let expected = model.openRecords(r)
        let retakeable = model.retakeableRecords(r).count
        if open.count < expected.count || open.count > expected.count + retakeable {
            var rules: Set<Rule> = [.fieldMerge]
            for rec in model.records {
                rules.formUnion(self.rules(rec.doc))
                if rec.finder != r || rec.settledKnownBy.count > 0 { rules.insert(.conflictsTravel) }
                if rec.fields.isEmpty { rules.insert(.deleteVsEdit) }
            }
            found.append(
                Mismatch(
                    rules: rules, changesDocuments: false,
                    text:
                        "r\(r): status counts \(open.count) open conflicts, the model \(expected.count)\(retakeable > 0 ? " (and up to \(retakeable) passed over before)" : "")"
                ))
        }
        return found
    }
}
