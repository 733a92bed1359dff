// Drives the BUILT docsync binary with random editor-style operations on three replicas
// and compares what it finds on disk, on the remote and in every conflict list with
// SyncModel.swift after every step. No engine code is used: only files, `git` and the
// binary's `--json` output.

import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension MC {
    /// Engine defects known today, by the rule they break. A mismatch attributed to one of
    /// these is printed loudly (`KNOWN ENGINE DEFECT`) instead of failing; one that changes
    /// the documents ends the run early (the model can no longer predict the replicas).
    /// Remove an entry once the engine follows the rule. `DOCSYNC_MODEL_KNOWN_DEFECTS`
    /// overrides the list (comma separated rule names, or `none`).
    static let knownEngineDefects: Set<Rule> = {
        if let env = ProcessInfo.processInfo.environment["DOCSYNC_MODEL_KNOWN_DEFECTS"] {
            return Set(env.split(separator: ",").compactMap { Rule(rawValue: String($0).trimmingCharacters(in: .whitespaces)) })
        }
        return []
    }()

    struct Mismatch: CustomStringConvertible {
        var rules: Set<Rule>
        /// True if the replicas' documents differ from the model (the run cannot go on).
        var changesDocuments: Bool
        var text: String
        var description: String { text + (rules.isEmpty ? "" : "  [rules: \(rules.sorted().map(\.rawValue).joined(separator: ", "))]") }
        var known: Bool { !rules.isDisjoint(with: MC.knownEngineDefects) }
    }

    /// The random-kill suite's seeded generator (SplitMix64), with the picks the driver uses.
    typealias SplitMix = RandomKillTests.Rng

    static let crashPoints = ["record.after-stamp", "record.after-journal", "pull.after-journal", "pull.after-files",
                              "push.after-remote-commit", "remote.after-documents", "remote.after-feed"]

    struct Figures {
        var ops: [String: Int] = [:]
        var kills: [String: Int] = [:]
        var crashAttempts = 0
        var conflictsFound = 0
        var deleteVsEdit = 0
        var exit: [Int32: Int] = [:]
        var knownDefectHits: [Rule: Int] = [:]
        var stoppedBy: String?
        var steps = 0
        var seconds = 0.0
    }
}

extension MC {
    final class Run {
        let seed: UInt64
        let length: Int
        let git: Bool
        let names = ["r0", "r1", "r2"]
        var rng: SplitMix
        let box: Sandbox
        var remoteURL = ""
        var replicas: [Replica] = []
        var model = Model(replicas: 3)
        var log: [String] = []
        var figures = Figures()

        // Save clock (ms): every save is later than the previous one and than the end of the
        // previous docsync run, and never later than now.
        var clockMs: Int64 = 0
        var lastRunEndMs: Int64 = 0

        var nextValue = 1
        var nextPath = 1
        var nextDoc = 1
        /// Learned from the files: each document's refId, each changesetId's content.
        var refIds: [Int: String] = [:]
        var csContent: [String: Fields] = [:]
        var versionCs: [Int: String] = [:]
        /// Per replica: the docs with a copy not recorded yet; a replica killed mid-record
        /// that must sync before anything else happens there.
        var pendingCopies: [Set<Int>] = [[], [], []]
        /// Per replica: copy → original, for the copies not recorded yet.
        var pendingCopyOf: [[Int: Int]] = [[:], [:], [:]]
        /// Per replica: docs whose change a `resolve` recorded (it records the whole tree)
        /// and no sync has pushed yet. Those are not broken or written back until then:
        /// the journal would push the recorded version, which the model does not follow.
        var recordedUnsynced: [Set<Int>] = [[], [], []]
        var needsRecovery: Set<Int> = []
        /// Per replica: the last valid bytes and path seen for each doc (for re-creation).
        var lastSeen: [[Int: (path: String, bytes: [UInt8])]] = [[:], [:], [:]]
        /// Per replica: bytes and intended bytes of a file broken by an invalid save.
        var broken: [[Int: (before: [UInt8], intended: [UInt8])]] = [[:], [:], [:]]
        var gitBlobs: [String: [UInt8]] = [:]
        var printedKnown: Set<String> = []
        /// Documents that got an edit identical to another replica's (either changesetId may stay).
        var echoDocs: Set<Int> = []

        init(seed: UInt64, length: Int, git: Bool) {
            self.seed = seed
            self.length = length
            self.git = git
            rng = SplitMix(state: seed ^ (git ? 0x5EED_0000_0000_0017 : 0))
            box = Sandbox("model\(git ? "git" : "dir")\(seed)")
        }

        var kind: String { git ? "git" : "folder" }

        // MARK: Running

        /// Runs the whole sequence; records an Issue on the first unexplained mismatch.
        func run() {
            let started = Date()
            remoteURL = Reliability.remote(box, git: git)
            let made = CLI.run(["init", "--remote", remoteURL, "--name", names[0], names[0]], in: box.root)
            guard made.exit == 0 else { Issue.record("init failed: \(made)"); return }
            for name in names.dropFirst() {
                let c = CLI.run(["clone", "--name", name, remoteURL, name], in: box.root)
                guard c.exit == 0 else { Issue.record("clone failed: \(c)"); return }
            }
            replicas = names.map { box.replica($0) }
            // The max-delete guard is not part of the model: random `rm`s among a few
            // documents would trip it. Its own tests are in DeletionTests.
            for replica in replicas {
                let c = replica.run("config", "push.maxDeleteShare", "1")
                guard c.exit == 0 else { Issue.record("config failed: \(c)"); return }
            }
            lastRunEndMs = nowMs()
            // A few documents everywhere to start from.
            for _ in 0 ..< 3 { create(0) }
            var step = 0
            if !syncAndCheck(0, step: &step) { return finish(started) }
            for r in 1 ..< 3 {
                if !syncAndCheck(r, step: &step) { return finish(started) }
            }
            while step < length {
                step += 1
                let description = performRandomOp()
                log.append("\(step). \(description)")
                if !check(step: step, after: description) { break }
            }
            // Every run must land at least one SIGKILL: if none did, edit and kill until one does.
            var tries = 0
            while figures.stoppedBy == nil && figures.kills.isEmpty && tries < 8 {
                tries += 1
                let r = needsRecovery.sorted().first ?? rng.int(3)
                let ops: [() -> String?] = [{ self.needsRecovery.contains(r) ? nil : self.edit(r, style: .inPlace) }, { self.crashSync(r) }]
                for op in ops {
                    guard let d = op() else { continue }
                    step += 1
                    log.append("\(step). \(d)")
                    if !check(step: step, after: d) { break }
                }
            }
            if figures.stoppedBy == nil {
                // Quiescence: everyone syncs twice, then everything must agree.
                for round in 0 ..< 2 {
                    for r in 0 ..< 3 {
                        step += 1
                        fixAllInvalid(r, round: round)
                        let d = sync(r)
                        log.append("\(step). \(d) (final)")
                        if !check(step: step, after: d, full: true) { return finish(started) }
                    }
                }
            }
            finish(started)
        }

        private func syncAndCheck(_ r: Int, step: inout Int) -> Bool {
            step += 1
            let d = sync(r)
            log.append("\(step). \(d)")
            return check(step: step, after: d)
        }

        private func finish(_ started: Date) {
            figures.seconds = Date().timeIntervalSince(started)
            figures.steps = log.count
        }

        func nowMs() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

        func nextSaveMs() -> Int64 {
            let t = max(clockMs + 2, nowMs(), lastRunEndMs + 2)
            while nowMs() < t { usleep(300) }
            clockMs = t
            return t
        }

        func value() -> String { defer { nextValue += 1 }; return "e\(nextValue)" }

        func freshPath() -> String {
            defer { nextPath += 1 }
            switch rng.int(4) {
            case 0: return "notes/d\(nextPath).json"
            case 1: return "tasks/x/d\(nextPath).json"
            default: return "d\(nextPath).json"
            }
        }

        func docsync(_ r: Int, _ args: [String], env: [String: String] = [:]) -> RunResult {
            let result = replicas[r].run(args, env: env)
            lastRunEndMs = nowMs()
            return result
        }

        // MARK: Files

        func write(_ r: Int, _ path: String, _ bytes: [UInt8], style: WriteStyle, mtime: Int64) {
            let full = replicas[r].path(path)
            try? FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            switch style {
            case .inPlace where FileManager.default.fileExists(atPath: full):
                rewriteInPlace(full, bytes)
            case .editorRename, .inPlace:
                let temp = (full as NSString).deletingLastPathComponent + "/.\((full as NSString).lastPathComponent).swp"
                try! Data(bytes).write(to: URL(fileURLWithPath: temp))
                precondition(rename(temp, full) == 0)
            }
            setMtime(full, mtime)
        }

        enum WriteStyle { case inPlace, editorRename }

        func setMtime(_ path: String, _ ms: Int64) {
            let ts = timespec(tv_sec: Int(ms / 1000), tv_nsec: Int(ms % 1000) * 1_000_000)
            var times = [ts, ts]
            precondition(utimensat(AT_FDCWD, path, &times, 0) == 0, "utimensat \(path)")
        }

        static func text(_ fields: Fields) -> [UInt8] {
            let body = MC.fieldNames.compactMap { k in fields[k].map { "  \"\(k)\": \"\($0)\"" } }.joined(separator: ",\n")
            return Array("{\n\(body)\n}\n".utf8)
        }

        /// `bytes` with the value `"old"` replaced by `"new"` (exactly one occurrence).
        static func replacing(_ bytes: [UInt8], _ old: String, _ new: String) -> [UInt8]? {
            let text = String(decoding: bytes, as: UTF8.self)
            guard text.components(separatedBy: "\"\(old)\"").count == 2 else { return nil }
            return Array(text.replacingOccurrences(of: "\"\(old)\"", with: "\"\(new)\"").utf8)
        }

        // MARK: Operations

        func validDocs(_ r: Int) -> [Int] {
            model.local[r].filter { $0.value.invalidBytes == nil }.keys.sorted()
        }

        func performRandomOp() -> String {
            // A replica killed mid-record syncs before anything else happens there.
            if let r = needsRecovery.sorted().first, rng.chance(0.5) { return sync(r) }
            let r = rng.int(3)
            if needsRecovery.contains(r) { return sync(r) }
            let alive = Set(model.local.flatMap(\.keys)).count
            let weights: [(String, Int)] = [
                ("create", alive < 4 ? 10 : (alive > 8 ? 1 : 4)), ("edit", 20), ("editorSave", 10), ("echoEdit", 3),
                ("cp", 3), ("mv", 4), ("rm", 4), ("recreate", 3), ("invalid", 3), ("fix", 6),
                ("sync", 26), ("crashSync", 8), ("resolve", 6), ("gc", 2),
            ]
            var roll = rng.int(weights.map(\.1).reduce(0, +))
            var op = "sync"
            for (name, w) in weights { if roll < w { op = name; break }; roll -= w }
            if let d = attempt(op, r) {
                figures.ops[op, default: 0] += 1
                return d
            }
            figures.ops["sync", default: 0] += 1
            return sync(r)
        }

        private func attempt(_ op: String, _ r: Int) -> String? {
            switch op {
            case "create": return create(r)
            case "edit": return edit(r, style: .inPlace)
            case "editorSave": return edit(r, style: .editorRename)
            case "echoEdit": return echoEdit(r)
            case "cp": return copy(r)
            case "mv": return move(r)
            case "rm": return remove(r)
            case "recreate": return recreate(r)
            case "invalid": return invalidSave(r)
            case "fix": return fix(r)
            case "crashSync": return crashSync(r)
            case "resolve": return resolve(r)
            case "gc": return gc(r)
            default: return nil
            }
        }

        @discardableResult
        func create(_ r: Int) -> String {
            let doc = nextDoc
            nextDoc += 1
            let fields = Dictionary(uniqueKeysWithValues: MC.fieldNames.map { ($0, value()) })
            let path = freshPath()
            let t = nextSaveMs()
            write(r, path, Run.text(fields), style: .editorRename, mtime: t)
            model.save(r, doc: doc, path: path, fields: fields, mtime: t)
            return "r\(r) create doc\(doc) \(path) \(MC.show(fields))"
        }

        func edit(_ r: Int, style: WriteStyle) -> String? {
            let docs = validDocs(r)
            guard !docs.isEmpty else { return nil }
            let doc = rng.pick(docs)
            let entry = model.local[r][doc]!
            let field = rng.pick(MC.fieldNames)
            return setField(r, doc, entry, field, value(), style: style, verb: style == .inPlace ? "edit" : "editor-save")
        }

        private func setField(_ r: Int, _ doc: Int, _ entry: LocalDoc, _ field: String, _ new: String, style: WriteStyle, verb: String) -> String? {
            let path = entry.placed.path
            guard let old = entry.placed.version.fields[field],
                  let bytes = replicas[r].bytes(path),
                  let edited = Run.replacing(bytes, old, new) else { return nil }
            var fields = entry.placed.version.fields
            fields[field] = new
            let t = nextSaveMs()
            write(r, path, edited, style: style, mtime: t)
            model.save(r, doc: doc, path: path, fields: fields, mtime: t)
            return "r\(r) \(verb) doc\(doc) \(path) \(field)=\(new) (was \(old))"
        }

        /// The same edit another replica has pending (identical edits are not a conflict).
        func echoEdit(_ r: Int) -> String? {
            for other in (0 ..< 3).filter({ $0 != r }) {
                for (doc, entry) in model.local[other] where entry.invalidBytes == nil {
                    guard let b = model.base[other][doc], let mine = model.local[r][doc], mine.invalidBytes == nil,
                          let mineBase = model.base[r][doc], mineBase.version.fields == b.version.fields,
                          mine.placed.version.fields == b.version.fields else { continue }
                    for f in MC.fieldNames where entry.placed.version.fields[f] != b.version.fields[f] {
                        guard let v = entry.placed.version.fields[f] else { continue }
                        echoDocs.insert(doc)
                        return setField(r, doc, mine, f, v, style: .inPlace, verb: "echo-edit (same as r\(other))")
                    }
                }
            }
            return nil
        }

        func copy(_ r: Int) -> String? {
            let docs = validDocs(r).filter { d in
                guard let b = model.base[r][d] else { return false }
                return b.path == model.local[r][d]!.placed.path
            }
            guard !docs.isEmpty else { return nil }
            let source = rng.pick(docs)
            let entry = model.local[r][source]!
            guard let bytes = replicas[r].bytes(entry.placed.path) else { return nil }
            let doc = nextDoc
            nextDoc += 1
            let path = freshPath()
            let t = nextSaveMs()
            write(r, path, bytes, style: .editorRename, mtime: t)
            model.save(r, doc: doc, path: path, fields: entry.placed.version.fields, mtime: nil)
            model.taint(doc, .identity)
            pendingCopies[r].insert(source)
            pendingCopyOf[r][doc] = source
            return "r\(r) cp \(entry.placed.path) \(path) (doc\(source) → new doc\(doc))"
        }

        /// Nobody else has a pending rename or delete of `doc`, and `r` has seen its remote path.
        private func quietElsewhere(_ r: Int, _ doc: Int) -> Bool {
            guard let remote = model.remote[doc], model.base[r][doc]?.path == remote.path else { return false }
            for o in 0 ..< 3 where o != r {
                guard let b = model.base[o][doc] else { continue }
                guard let l = model.local[o][doc] else { return false }
                if l.placed.path != b.path { return false }
            }
            return !pendingCopies[r].contains(doc)
        }

        func move(_ r: Int) -> String? {
            let docs = validDocs(r).filter { quietElsewhere(r, $0) }
            guard !docs.isEmpty else { return nil }
            let doc = rng.pick(docs)
            var entry = model.local[r][doc]!
            let from = entry.placed.path, to = freshPath()
            let full = replicas[r].path(to)
            try? FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            precondition(rename(replicas[r].path(from), full) == 0)
            entry.placed.path = to
            model.local[r][doc] = entry
            return "r\(r) mv \(from) \(to) (doc\(doc))"
        }

        func remove(_ r: Int) -> String? {
            let docs = validDocs(r).filter { quietElsewhere(r, $0) }
            guard !docs.isEmpty else { return nil }
            let doc = rng.pick(docs)
            let path = model.local[r][doc]!.placed.path
            replicas[r].remove(path)
            model.local[r][doc] = nil
            return "r\(r) rm \(path) (doc\(doc))"
        }

        /// Writes a deleted document back (same refId, a changed field).
        func recreate(_ r: Int) -> String? {
            let candidates = lastSeen[r].keys.filter { d in
                model.local[r][d] == nil && refIds[d] != nil && !recordedUnsynced[r].contains(d)
                    && !model.local[r].values.contains { $0.placed.path == lastSeen[r][d]!.path }
            }.sorted()
            guard !candidates.isEmpty else { return nil }
            let doc = rng.pick(candidates)
            let seen = lastSeen[r][doc]!
            guard let object = JSONHelp.object(seen.bytes) else { return nil }
            var fields: Fields = [:]
            for f in MC.fieldNames { fields[f] = object[f] as? String }
            let field = rng.pick(MC.fieldNames)
            guard let old = fields[field] else { return nil }
            let new = value()
            guard let bytes = Run.replacing(seen.bytes, old, new) else { return nil }
            fields[field] = new
            let t = nextSaveMs()
            write(r, seen.path, bytes, style: .editorRename, mtime: t)
            model.save(r, doc: doc, path: seen.path, fields: fields, mtime: t)
            model.taint(doc, .identity)
            return "r\(r) re-create doc\(doc) \(seen.path) with \(field)=\(new) (was \(old))"
        }

        func invalidSave(_ r: Int) -> String? {
            // Only a file tracked at its path: one moved, created or written back since the last
            // sync cannot be told, once broken, from a deletion plus an unknown file (nobody
            // can read its refId).
            let docs = validDocs(r).filter { d in
                !recordedUnsynced[r].contains(d) && model.base[r][d] != nil && model.base[r][d]?.path == model.local[r][d]?.placed.path
            }
            guard !docs.isEmpty else { return nil }
            let doc = rng.pick(docs)
            var entry = model.local[r][doc]!
            let field = rng.pick(MC.fieldNames)
            guard let old = entry.placed.version.fields[field], let bytes = replicas[r].bytes(entry.placed.path) else { return nil }
            let new = value()
            guard let intended = Run.replacing(bytes, old, new), let close = intended.lastIndex(of: UInt8(ascii: "}")) else { return nil }
            var bad = intended
            bad.remove(at: close)
            let t = nextSaveMs()
            write(r, entry.placed.path, bad, style: rng.chance(0.5) ? .inPlace : .editorRename, mtime: t)
            var fields = entry.placed.version.fields
            fields[field] = new
            entry.invalidBytes = bad
            entry.intended = fields
            model.local[r][doc] = entry
            broken[r][doc] = (bytes, intended)
            model.taint(doc, .invalidMerge)
            for (copy, original) in pendingCopyOf[r] where original == doc {
                model.taint(copy, .copyBesideInvalidOriginal)
                model.taint(doc, .copyBesideInvalidOriginal)
            }
            return "r\(r) invalid save doc\(doc) \(entry.placed.path) (meant \(field)=\(new))"
        }

        func fix(_ r: Int) -> String? {
            let docs = model.local[r].filter { $0.value.invalidBytes != nil }.keys.sorted()
            guard !docs.isEmpty else { return nil }
            return fixDoc(r, rng.pick(docs), revert: rng.chance(0.25))
        }

        @discardableResult
        private func fixDoc(_ r: Int, _ doc: Int, revert: Bool) -> String {
            let entry = model.local[r][doc]!
            let saved = broken[r][doc]!
            let bytes = revert ? saved.before : saved.intended
            let fields = revert ? entry.placed.version.fields : entry.intended!
            let t = nextSaveMs()
            write(r, entry.placed.path, bytes, style: .inPlace, mtime: t)
            model.save(r, doc: doc, path: entry.placed.path, fields: fields, mtime: t)
            broken[r][doc] = nil
            return "r\(r) fix doc\(doc) \(entry.placed.path) \(revert ? "(back to what it was)" : "(the meant edit) \(MC.show(fields))")"
        }

        private func fixAllInvalid(_ r: Int, round: Int) {
            for doc in model.local[r].filter({ $0.value.invalidBytes != nil }).keys.sorted() {
                log.append("   " + fixDoc(r, doc, revert: false))
            }
        }

        // MARK: docsync commands

        var lastOutcome: Model.SyncOutcome?
        var lastResult: RunResult?
        var lastCommandReplica: Int?
        var lastExpectedExits: Set<Int32> = []
        var lastExitRules: Set<Rule> = []

        func sync(_ r: Int) -> String {
            let result = docsync(r, ["sync"])
            return applySync(r, result, recovering: needsRecovery.contains(r), prefix: "r\(r) sync")
        }

        private func applySync(_ r: Int, _ result: RunResult, recovering: Bool, prefix: String) -> String {
            let outcome = model.sync(r)
            needsRecovery.remove(r)
            pendingCopies[r] = []
            pendingCopyOf[r] = [:]
            recordedUnsynced[r] = []
            figures.conflictsFound += outcome.newRecords.count
            figures.deleteVsEdit += outcome.notes.filter { $0.contains("deleted") }.count
            figures.exit[result.exit, default: 0] += 1
            lastOutcome = outcome
            lastResult = result
            lastCommandReplica = r
            lastExpectedExits = recovering && outcome.exit == 3 ? [0, 3] : [outcome.exit]
            lastExitRules = outcome.exitRules
            let notes = outcome.notes.isEmpty ? "" : "; model: " + outcome.notes.joined(separator: "; ")
            return "\(prefix) → exit \(result.exit) (model \(outcome.exit))\(notes)"
        }

        func crashSync(_ r: Int) -> String? {
            // Aim at a step this sync will reach: a kill that never lands tests nothing.
            var points = git ? MC.crashPoints.filter { $0 != "remote.after-documents" } : MC.crashPoints
            let localNews = model.local[r].contains { $0.value.invalidBytes == nil && $0.value.placed != model.base[r][$0.key] }
                || model.base[r].keys.contains { model.local[r][$0] == nil }
            let remoteNews = Set(model.remote.keys).union(model.base[r].keys).contains { model.remote[$0] != model.base[r][$0] }
            if localNews != remoteNews {
                let narrowed = points.filter { $0.hasPrefix("pull.") == remoteNews }
                if !narrowed.isEmpty { points = narrowed }
            }
            let point = rng.pick(points)
            figures.crashAttempts += 1
            let result = docsync(r, ["sync"], env: ["DOCSYNC_CRASH_AT": point])
            guard result.exit == 137 else {
                return applySync(r, result, recovering: needsRecovery.contains(r), prefix: "r\(r) sync (DOCSYNC_CRASH_AT=\(point), not reached)")
            }
            figures.kills[point, default: 0] += 1
            lastResult = nil
            lastCommandReplica = nil
            if point.hasPrefix("record.") {
                // Nothing left the tree: others may go on before it recovers.
                needsRecovery.insert(r)
                return "r\(r) sync KILLED at \(point) (recovers later)"
            }
            let recovery = docsync(r, ["sync"])
            return applySync(r, recovery, recovering: true, prefix: "r\(r) sync KILLED at \(point), then sync")
        }

        func resolve(_ r: Int) -> String? {
            let open = model.openRecords(r).filter { rec in
                guard let l = model.local[r][rec.doc] else { return false }
                return l.invalidBytes == nil
            }
            guard !open.isEmpty else { return nil }
            let rec = rng.pick(open)
            let entry = model.local[r][rec.doc]!
            let sameDoc = open.filter { $0.doc == rec.doc }
            let current = entry.placed.version.fields
            let untouched = rec.fields.allSatisfy { current[$0] == rec.winner.fields[$0] }
            var args = ["resolve", entry.placed.path]
            var takeLoser: ConflictRecord?
            var how = "accept as is"
            if rec.finder == r, rec.loser != nil, sameDoc.count == 1, untouched, rng.chance(0.7) {
                let takeLocal = rng.chance(0.5)
                args += ["--take", takeLocal ? "local" : "remote"]
                if takeLocal == rec.loserWasLocal { takeLoser = rec }
                how = "--take \(takeLocal ? "local" : "remote") (\(takeLoser == nil ? "the winner" : "the loser"))"
            }
            let result = docsync(r, args)
            for d in Set(model.local[r].keys).union(model.base[r].keys) where model.local[r][d]?.placed != model.base[r][d] {
                recordedUnsynced[r].insert(d)
            }
            model.resolve(r, doc: rec.doc, takeLoser: takeLoser)
            recordedUnsynced[r].insert(rec.doc)
            lastResult = result
            lastCommandReplica = r
            lastOutcome = nil
            // resolve records the tree first: an invalid file there makes it exit 1 (rule 7).
            lastExpectedExits = [model.hasInvalid(r) ? 1 : 0]
            lastExitRules = rec.finder == r ? [] : [.conflictsTravel]
            if rec.fields.isEmpty { lastExitRules.insert(.deleteVsEdit) }
            if takeLoser != nil, let f = model.local[r][rec.doc] {
                // The resolve wrote the file: the model's clock moves past it.
                clockMs = max(clockMs, lastRunEndMs)
                _ = f
            }
            return "r\(r) resolve \(entry.placed.path) \(how) for \(rec) → exit \(result.exit)"
        }

        func gc(_ r: Int) -> String? {
            let result = docsync(r, ["gc"])
            lastResult = result
            lastCommandReplica = r
            lastOutcome = nil
            lastExpectedExits = [0]
            lastExitRules = []
            return "r\(r) gc → exit \(result.exit)"
        }
    }
}

extension RandomKillTests.Rng {
    mutating func int(_ n: Int) -> Int { below(n) }
    mutating func chance(_ p: Double) -> Bool { Double(next() % 1_000_000) / 1_000_000 < p }
    mutating func pick<T>(_ items: [T]) -> T { items[int(items.count)] }
}
