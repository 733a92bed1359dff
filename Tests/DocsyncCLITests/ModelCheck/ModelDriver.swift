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
            return Set(
                env.split(separator: ",").compactMap { Rule(rawValue: String($0).trimmingCharacters(in: .whitespaces)) }
            )
        }
        // `deletionCopyIsFinderBase` was fixed in b7f2728, recurred where gc had purged the
        // tombstone (a compacted feed or a purge commit named the finder's base as the
        // deleted version), and is fixed for that too (cc6f013).
        // `killedResolveHalfDone` is fixed: a resolve is journaled (file operation, local
        // action, resolve) before it writes the file, and the next run finishes it.
        // `firstContactReorderedCopy` is fixed: a merge equal to one side's values in
        // another member order is that side's version.
        // `plainGitEditUnseenChangeset` is fixed: the id of a plain-git version is derived
        // from the commit that introduced it (GitRemote+PlainGitEdits), not from the
        // puller's cursor.
        // `retryMergeUsesMergeTime` is fixed: a retry decides every document any pull of
        // the run met from the user's versions and takes back the records it no longer
        // makes.
        // `receiveOnlyRemerge` was the model's: of two serial orders that left a
        // receive-only replica's files alike, it took one whose base the engine did not
        // have (a pending version that status lists was excused as a resolve's).
        return []
    }()

    struct Mismatch: CustomStringConvertible {
        var rules: Set<Rule>
        /// True if the replicas' documents differ from the model (the run cannot go on).
        var changesDocuments: Bool
        var text: String
        var description: String {
            text + (rules.isEmpty ? "" : "  [rules: \(rules.sorted().map(\.rawValue).joined(separator: ", "))]")
        }
        var known: Bool { !rules.isDisjoint(with: MC.knownEngineDefects) }
    }

    /// The random-kill suite's seeded generator (SplitMix64), with the picks the driver uses.
    typealias SplitMix = RandomKillTests.Rng

    static let crashPoints = [
        "record.after-stamp", "record.after-journal", "pull.after-records", "pull.after-journal", "pull.after-files",
        "push.after-remote-commit", "remote.after-documents", "remote.after-feed"
    ]

    struct Figures {
        var ops: [String: Int] = [:]
        /// Documents a sync with a hidden folder named as not looked at.
        var unknownNamed = 0
        /// Files the drive's sync service copied between copies; stored-history checks
        /// (folder and drive kinds) and the documents they compared.
        var serviceCopies = 0
        var historyChecks = 0
        var historyDocuments = 0
        var kills: [String: Int] = [:]
        var crashAttempts = 0
        var conflictsFound = 0
        var deleteVsEdit = 0
        /// Renamed on both sides (an override over a rename): the rename that lost recorded.
        var renamesLost = 0
        var exit: [Int32: Int] = [:]
        var knownDefectHits: [Rule: Int] = [:]
        var stoppedBy: String?
        var steps = 0
        var seconds = 0.0
        /// Steps in which 2–3 replicas ran docsync at the same moment and the runs really
        /// overlapped (the last one started before the first one ended).
        var concurrentSteps = 0
        /// Steps that launched 2–3 runs together, overlapping or not.
        var launchedTogether = 0
        /// Issue 42: saves, renames and deletions made while a sync of that replica ran, and
        /// how many of those the run saw (the model's order "the edit first"); saves with
        /// an mtime in the past or the future; `restore --at` of versions from the remote's
        /// history; stored conflict copies compared byte for byte with the saved bytes.
        var editsDuringRuns = 0
        var editsSeenByTheRun = 0
        var clockSaves = 0
        /// Saves dated in the millisecond of another replica's pending save of the document.
        var sameMillisecondSaves = 0
        var restores = 0
        var conflictCopyBytesChecked = 0
        /// Syncs run as an unprivileged user with a folder made unreadable (`chmod 000`).
        var unreadableFolders = 0
        /// The replica whose clock is off, and by how much (`chooseClockSkew`).
        var clockSkew = "none"
        /// Where clocks are off: ms the driver waited to keep dates of two clocks apart, and
        /// runs whose span met another clock's date all the same (`ClockTimeline`).
        var clockWaitMs = 0
        var clockSpansMet = 0
        /// Concurrent runs that exited 75 (remote busy): counted as not having run.
        var busy75 = 0
        /// In how many concurrent steps the matching serial order was not the launch order.
        var reordered = 0
        /// SIGKILLs sent after a random delay (not at a named crash point), and those that
        /// landed (the process died of it: exit 137), by what was running.
        var randomKillsTried: [String: Int] = [:]
        var randomKillsLanded: [String: Int] = [:]
        /// Listed conflicts whose stored copy was read from `.docsync/conflicts/` and held
        /// the losing content the model expects (counted per check: one copy is checked
        /// again at every later check of that replica's list).
        var conflictCopiesChecked = 0
        /// `storedSide` checks of listed records (and `keptBy` with them).
        var pointOfViewChecks = 0
        /// Of those, stored sides of an identical edit whose maker the changesetId named
        /// against the model's order (see `checkPointOfView`).
        var echoMakerSwaps = 0
        /// Issue 21's second part: replicas that joined with plain files (first contact),
        /// `remote.url` changes, `resolve --take` by point of view, plain git commits.
        var firstContacts = 0
        var firstContactMerges = 0
        var urlChanges = 0
        var viewResolves = 0
        var plainGitEdits = 0
        /// Issue 24: whether r2 was a receive-only replica in this run (every fourth seed),
        /// and how many documents its `docsync revert`s put back.
        var receiveOnly = false
        var reverted = 0
        /// Whether r1 was a send-only replica (every fourth seed), and how many documents
        /// its `docsync override`s sent over held remote changes.
        var sendOnly = false
        var overridden = 0
        /// Whether r1 kept only part of the remote (`docsync sparse`, every fourth seed), and
        /// how many documents left it.
        var sparse = false
        /// The seed put `notes/` under the `lww` policy (`Model.lwwNotes`).
        var lww = false
        /// Concurrent steps whose merges were stamped in another order than the runs'
        /// serial one (`orderConcurrentMerges`).
        var mergesReordered = 0
        var leftSelection = 0
        /// Records a sparse replica had passed over and listed once it held the document
        /// (`retakeableRecords`).
        var recordsRetaken = 0
    }

    /// Where the three replicas sync to: a folder, a bare git repository by path, the same
    /// served by `git daemon` on 127.0.0.1 (git:// URL, receive-pack on the server side), or
    /// a drive: a copy of a folder remote per replica, a sync service between them
    /// (ModelDriveService.swift).
    enum RemoteKind: String, CaseIterable, Sendable, CustomStringConvertible {
        case folder, git, daemon, drive
        var description: String { rawValue }
        var isGit: Bool { self == .git || self == .daemon }
        var seedSalt: UInt64 {
            switch self {
            case .folder: 0
            case .git: 0x5EED_0000_0000_0017
            case .daemon: 0x5EED_0000_0000_D43E
            case .drive: 0x5EED_0000_0000_D41E
            }
        }
    }
}

extension MC {
    final class Run {
        let seed: UInt64
        let length: Int
        let remoteKind: RemoteKind
        var git: Bool { remoteKind.isGit }
        /// The bare repository behind the remote (git and daemon kinds), read with plain git.
        var gitRepository = ""
        var daemon: GitDaemon?
        var names = ["r0", "r1", "r2"]
        /// Each replica's id (`status --json` `replicaId`), by model index.
        var replicaIds: [String] = []
        /// Joined replicas (first contact, index 3 on): checked in their join step only.
        var joiners = 0
        /// Replicas whose `remote.url` is now another path to the same remote (a symlink).
        var aliased: Set<Int> = []
        /// Mismatches found by a step itself (not by comparing the trees), reported with the step's check.
        var stepMismatches: [Mismatch] = []
        var runStartMs: Int64 = 0
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
        /// How long a `docsync sync` takes here (ms, a running average): `editDuringSync`
        /// draws its moment within it, so that about as many edits land during the run as
        /// after it with a fast build as with a slow one.
        var syncMs = 60.0
        /// What the clocks dated, where they are off (`ClockTimeline`).
        var timeline = MC.ClockTimeline()

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
        /// Per replica, the conflict records that existed when its `gc` compacted its journal:
        /// a `--take` inside the array `i` then has no kept version to find the element by and
        /// takes the whole array (SYNC.md, resolve), which the model does not follow; nor does
        /// it on a replica that did not find the conflict (it may never have had that version).
        var compactedRecords: [Int: Set<Int>] = [:]
        /// Per replica: docs whose file was regenerated without ids and not synced since
        /// (the file carries no refId until the next sync stamps it).
        var regeneratedUnsynced: [Set<Int>] = [[], [], []]
        /// Per replica: docs with a save backdated hours and not synced since.
        var backdatedUnsynced: [Int: Set<Int>] = [:]
        /// Every version that was on the model's remote after some step, by doc and version id.
        var published: [Int: [Int: MC.Version]] = [:]
        /// Backdated saves: version id → the version it was edited from (its id sorts right
        /// after that one's); saves dated in the future: version id → when it was saved and
        /// by when the sync that dated it had ended.
        var backdatedParent: [Int: Int] = [:]
        /// The ticks of each document's two saves in one millisecond (`sameMillisecondSave`).
        var sameMillisecondTicks: [Int: (Int, Int)] = [:]
        var savedAhead: [Int: (saved: Int64, recordedBy: Int64)] = [:]
        /// Documents a plain-git commit ever edited (keeping a changesetId, which then names
        /// two contents in the remote's history).
        var plainGitDocs: Set<Int> = []
        /// The bytes each user save wrote, by version id.
        var savedBytes: [Int: [UInt8]] = [:]
        /// Whether the runs of the last `launch` overlapped in time.
        var lastLaunchOverlapped = false
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
        /// While a concurrent (or killed) step is compared with its alternatives.
        var stepCache: StepCache?
        /// The serial orders tried, when none matched (printed with the mismatch).
        var alternativesTried: [String]?
        /// Documents that got an edit identical to another replica's (either changesetId may stay).
        var echoDocs: Set<Int> = []
        /// The replicas that made each such identical edit (see `checkPointOfView`).
        var echoMakers: [Int: Set<Int>] = [:]

        init(seed: UInt64, length: Int, kind: RemoteKind) {
            self.seed = seed
            self.length = length
            self.remoteKind = kind
            rng = SplitMix(state: seed ^ kind.seedSalt)
            box = Sandbox("model\(kind == .folder ? "dir" : kind.rawValue)\(seed)")
        }

        deinit {
            daemon?.stop()
            for r in model.skewMs.keys where r < replicas.count { CLI.setClockOffset(nil, forFolder: replicas[r].root) }
        }

        var kind: String { remoteKind.rawValue }

        /// Makes the remote; nil, or why it could not be made (the daemon did not start).
        func makeRemote() -> String? {
            switch remoteKind {
            case .folder:
                remoteURL = box.remote
            case .drive:
                try? FileManager.default.createDirectory(atPath: driveRoot, withIntermediateDirectories: true)
                remoteURL = driveCopy(0)
            case .git:
                remoteURL = Reliability.remote(box, git: true)
                gitRepository = remoteURL
            case .daemon:
                do {
                    let d = try GitDaemon()
                    daemon = d
                    remoteURL = try d.makeRepository("records")
                    gitRepository = d.repositoryPath("records")
                } catch {
                    return "git daemon could not start: \(error)"
                }
            }
            return nil
        }

        // MARK: Running

        /// Runs the whole sequence; records an Issue on the first unexplained mismatch.
        func run() {
            let started = Date()
            if let problem = makeRemote() {
                figures.stoppedBy = problem
                Issue.record(Comment(rawValue: "\(problem) (\(kind), seed \(seed))"))
                return finish(started)
            }
            let made = CLI.run(["init", "--remote", remoteURL, "--name", names[0], names[0]], in: box.root)
            guard made.exit == 0 else {
                Issue.record("init failed: \(made)")
                return
            }
            for (i, name) in names.enumerated().dropFirst() {
                driveCatchUp(i)
                let c = CLI.run(["clone", "--name", name, remoteURL(for: i), name], in: box.root)
                guard c.exit == 0 else {
                    Issue.record("clone failed: \(c)")
                    return
                }
            }
            replicas = names.map { box.replica($0) }
            for r in 0..<3 {
                replicaIds.append(replicaId(r))
                model.replicaIdText[r] = replicaIds[r]
            }
            chooseClockSkew()
            // The max-delete guard is not part of the model: random `rm`s among a few
            // documents would trip it. Its own tests are in DeletionTests.
            // Half the seeds of every replica class (the fixed seeds 20261120 and 20261122
            // among them) keep `notes/` under the whole-document policy `lww`.
            model.lwwNotes = (seed / 4 + seed) % 2 == 0
            figures.lww = model.lwwNotes
            for r in replicas.indices {
                let c = replicas[r].run("config", "push.maxDeleteShare", "1")
                guard c.exit == 0, configurePolicies(r) else {
                    Issue.record("config failed: \(c)")
                    return
                }
            }
            // Every fourth seed, r2 only receives (sync.mode receive-only): its syncs pull and
            // never push, its records and settlements stay with it (issue 24).
            if seed % 4 == 3 {
                let c = replicas[2].run("config", "sync.mode", "receive-only")
                guard c.exit == 0 else {
                    Issue.record("config failed: \(c)")
                    return
                }
                model.receiveOnly = [2]
                figures.receiveOnly = true
            }
            // Every fourth seed (others), r1 keeps only part of the remote (`docsync sparse`):
            // `tasks/` and every file whose name ends in an odd digit (`Model.selected`).
            if seed % 4 == 2 {
                let c = replicas[1].run("sparse", "set", "tasks/", "*[13579].json")
                guard c.exit == 0 else {
                    Issue.record("sparse set failed: \(c)")
                    return
                }
                model.sparse = [1]
                figures.sparse = true
            }
            lastRunEndMs = nowMs()
            runStartMs = lastRunEndMs
            // A few documents everywhere to start from.
            for _ in 0..<3 { create(0) }
            var step = 0
            if !syncAndCheck(0, step: &step) { return finish(started) }
            for r in 1..<3 {
                if !syncAndCheck(r, step: &step) { return finish(started) }
            }
            // Every fourth seed (others), r1 only sends (sync.mode send-only), set once it
            // holds the first documents: remote changes are held, never applied, until it
            // overrides them.
            if seed % 4 == 1 {
                let c = replicas[1].run("config", "sync.mode", "send-only")
                guard c.exit == 0 else {
                    Issue.record("config failed: \(c)")
                    return
                }
                model.sendOnly = [1]
                figures.sendOnly = true
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
                let ops: [() -> String?] = [
                    { self.needsRecovery.contains(r) ? nil : self.edit(r, style: .inPlace) }, { self.crashSync(r) }
                ]
                for op in ops {
                    guard let d = op() else { continue }
                    step += 1
                    log.append("\(step). \(d)")
                    if !check(step: step, after: d) { break }
                }
            }
            // And at least one concurrent step and one random-time SIGKILL that landed (a
            // short delay lands more often).
            tries = 0
            let wantsConcurrent = remoteKind != .drive
            while figures.stoppedBy == nil
                && (figures.randomKillsLanded.isEmpty || (wantsConcurrent && figures.concurrentSteps == 0))
                && tries < 10
            {
                tries += 1
                let r = needsRecovery.sorted().first ?? rng.int(3)
                let ops: [() -> String?] = [
                    { self.needsRecovery.contains(r) ? self.sync(r) : self.edit(r, style: .inPlace) },
                    {
                        wantsConcurrent && self.figures.concurrentSteps == 0
                            ? self.concurrentSync() : self.killSync(r, maxDelay: 40 * tries)
                    }
                ]
                for op in ops {
                    guard let d = op() else { continue }
                    step += 1
                    log.append("\(step). \(d)")
                    if !check(step: step, after: d) { break }
                }
            }
            if figures.stoppedBy == nil {
                // Quiescence: everyone syncs twice, then everything must agree.
                for round in 0..<2 {
                    for r in 0..<3 {
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

        /// The merge settings every replica shares: the counter `k`, and `lww` under
        /// `notes/` when the seed draws it. False if a `config` failed.
        func configurePolicies(_ r: Int) -> Bool {
            var ok = replicas[r].run("config", "merge.counters", MC.counterField).exit == 0
            if model.lwwNotes { ok = replicas[r].run("config", "merge.policyFor.notes/**", "lww").exit == 0 && ok }
            return ok
        }

        func nowMs() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

        /// The time of a save on `r` now: later than the previous save and the end of the
        /// last run, and, where clocks are off, dated on `r`'s clock out of every other
        /// clock's run spans (`ClockTimeline`).
        func nextSaveMs(_ r: Int) -> Int64 {
            let skew = model.skewMs[r] ?? 0
            var t = max(clockMs + 2, nowMs(), lastRunEndMs + 2)
            if !model.skewMs.isEmpty {
                settleSpans()
                while case let wait = timeline.wait(from: t + skew, length: 0, skew: skew), wait > 0 {
                    figures.clockWaitMs += Int(wait)
                    t += wait
                }
                timeline.record(t + skew, t + skew, skew: skew)
            }
            while nowMs() < t { usleep(300) }
            clockMs = t
            return t
        }

        // MARK: Clock spans

        /// Runs waiting for the model to say whether they made versions (`model.madeVersions`
        /// grew since): their spans, dated on their clocks.
        var pendingSpans: [(lo: Int64, hi: Int64, skew: Int64, made: Int)] = []

        /// Keeps the spans of the runs that made versions; forgets what no clock reaches.
        func settleSpans() {
            for p in pendingSpans where model.madeVersions > p.made { timeline.record(p.lo, p.hi, skew: p.skew) }
            pendingSpans = []
            let reach = model.skewMs.values.map { abs($0) }.max() ?? 0
            timeline.forget(before: nowMs() - 2 * reach - 60_000)
        }

        /// Waits until runs of `rs` started now would date what they make out of every other
        /// clock's dates (for a span as long as a few syncs here). Returns when they start.
        func awaitClockGap(_ rs: [Int]) -> Int64 {
            guard !model.skewMs.isEmpty else { return nowMs() }
            settleSpans()
            let length = Int64(max(400, 3 * syncMs))
            for _ in 0..<200 {
                let now = nowMs()
                let wait =
                    rs.map { r -> Int64 in
                        let skew = model.skewMs[r] ?? 0
                        return timeline.wait(from: now + skew, length: length, skew: skew)
                    }.max() ?? Int64(0)
                if wait == 0 { return now }
                figures.clockWaitMs += Int(wait)
                usleep(useconds_t(min(wait, 5_000) * 1000))
            }
            return nowMs()
        }

        /// After runs of `rs` that started at `start`: their spans wait for the model; a span
        /// that met another clock's date anyway (the run took longer than the gap) is counted.
        func noteSpans(_ rs: [Int], from start: Int64) {
            guard !model.skewMs.isEmpty else { return }
            let end = nowMs()
            let skews = Set(rs.map { model.skewMs[$0] ?? 0 })
            for skew in skews {
                let apart = skews.filter { $0 != skew }.allSatisfy {
                    abs($0 - skew) > end - start + 2 * MC.ClockTimeline.margin
                }
                if !apart || timeline.meets(start + skew, end + skew, skew: skew) { figures.clockSpansMet += 1 }
                pendingSpans.append((start + skew, end + skew, skew, model.madeVersions))
            }
        }

        /// Where a rename of `doc` goes: a fresh path, but not under `lww` while its two
        /// saves of one millisecond are both still held: that policy compares them whole,
        /// and which of them is later is left unobserved (`sameMillisecondSave`; drive seed
        /// 35405, a document moved into `notes/` before the two met).
        func renameTarget(_ doc: Int) -> String {
            let to = freshPath()
            guard model.lwwNotes, MC.Model.lww(to), let (a, b) = sameMillisecondTicks[doc],
                model.holdsTick(of: doc, a), model.holdsTick(of: doc, b)
            else { return to }
            return String(to.dropFirst("notes/".count))
        }

        func value() -> String {
            defer { nextValue += 1 }
            return "e\(nextValue)"
        }

        func freshPath() -> String {
            defer { nextPath += 1 }
            switch rng.int(4) {
            case 0: return "notes/d\(nextPath).json"
            case 1: return "tasks/x/d\(nextPath).json"
            default: return "d\(nextPath).json"
            }
        }

        func docsync(_ r: Int, _ args: [String], env: [String: String] = [:]) -> RunResult {
            driveCatchUp(r)
            let started = awaitClockGap([r])
            model.runStartMs = started
            let result = replicas[r].run(args, env: env)
            lastRunEndMs = nowMs()
            noteSpans([r], from: started)
            if args == ["sync"], result.exit == 0 { syncMs = 0.8 * syncMs + 0.2 * Double(lastRunEndMs - started) }
            return result
        }

        // MARK: Files

        func write(_ r: Int, _ path: String, _ bytes: [UInt8], style: WriteStyle, mtime: Int64) {
            let full = replicas[r].path(path)
            try? FileManager.default.createDirectory(
                atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            switch style {
            case .inPlace where FileManager.default.fileExists(atPath: full):
                rewriteInPlace(full, bytes)
            case .editorRename, .inPlace:
                let temp =
                    (full as NSString).deletingLastPathComponent + "/.\((full as NSString).lastPathComponent).swp"
                try! Data(bytes).write(to: URL(fileURLWithPath: temp))
                // Dated before it appears: a run reading it between the rename and a later
                // utimensat saw the kernel's coarse write time, a few ms before the save's
                // (folder seed 50105, an edit during a run).
                setMtime(temp, mtime + (model.skewMs[r] ?? 0))
                precondition(rename(temp, full) == 0)
            }
            // As that machine's clock dates it.
            setMtime(full, mtime + (model.skewMs[r] ?? 0))
        }

        enum WriteStyle { case inPlace, editorRename }

        func setMtime(_ path: String, _ ms: Int64) {
            let ts = timespec(tv_sec: Int(ms / 1000), tv_nsec: Int(ms % 1000) * 1_000_000)
            var times = [ts, ts]
            precondition(utimensat(AT_FDCWD, path, &times, 0) == 0, "utimensat \(path)")
        }

        static func text(_ fields: Fields) -> [UInt8] {
            var members = MC.topFields.compactMap { k in fields[k].map { "  \"\(k)\": \"\($0)\"" } }
            if let count = fields[MC.counterField] { members.append("  \"\(MC.counterField)\": \(count)") }
            let nested = ["x", "y"].compactMap { k in fields["n." + k].map { "\"\(k)\": \"\($0)\"" } }
            if !nested.isEmpty { members.append("  \"n\": {" + nested.joined(separator: ", ") + "}") }
            // Always there, if empty: a file without `i` would remove the array, not its elements.
            let elements = MC.elementIds.compactMap { id in
                fields[MC.arrayField + "." + id].map { "{\"id\": \"\(id)\", \"v\": \"\($0)\"}" }
            }
            members.append("  \"\(MC.arrayField)\": [" + elements.joined(separator: ", ") + "]")
            let body = members.joined(separator: ",\n")
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
            model.local[r].filter { $0.value.invalidBytes == nil && !model.saveWouldTie(r, $0.key) }.keys.sorted()
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
                ("sync", 18), ("crashSync", 7), ("resolve", 6), ("gc", 3), ("concurrent", 10), ("killSync", 4),
                ("firstContact", joiners < 2 ? 2 : 0), ("urlChange", 2), ("plainGitEdit", git ? 3 : 0),
                ("revert", model.receiveOnly.contains(r) ? 3 : 0), ("override", model.sendOnly.contains(r) ? 4 : 0),
                ("regenerate", 3), ("hiddenFolder", 2), ("removeField", 3), ("addField", 2), ("editDuringSync", 6),
                ("backdatedSave", 2), ("futureSave", 2), ("restoreEarlier", 2), ("count", 5),
                ("removeElement", 2), ("addElement", 2), ("sameMillisecond", 3)
            ]
            var roll = rng.int(weights.map(\.1).reduce(0, +))
            var op = "sync"
            for (name, w) in weights {
                if roll < w {
                    op = name
                    break
                }
                roll -= w
            }
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
            case "concurrent": return concurrentSync()
            case "killSync": return killSync(r)
            case "firstContact": return firstContact()
            case "urlChange": return urlChange(r)
            case "plainGitEdit": return plainGitEdit()
            case "revert": return revert(r)
            case "override": return override(r)
            case "regenerate": return regenerate(r)
            case "hiddenFolder": return hiddenFolderSync(r)
            case "removeField": return removeField(r)
            case "addField": return addField(r)
            case "editDuringSync": return editDuringSync(r)
            case "backdatedSave": return backdatedSave(r)
            case "futureSave": return futureSave(r)
            case "restoreEarlier": return restoreEarlier(r)
            case "count": return count(r)
            case "removeElement": return removeElement(r)
            case "addElement": return addElement(r)
            case "sameMillisecond": return sameMillisecondSave(r)
            default: return nil
            }
        }

        @discardableResult
        func create(_ r: Int) -> String {
            let doc = nextDoc
            nextDoc += 1
            var fields = Dictionary(uniqueKeysWithValues: MC.fieldNames.map { ($0, value()) })
            fields[MC.counterField] = "0"
            let path = freshPath()
            let t = nextSaveMs(r)
            write(r, path, Run.text(fields), style: .editorRename, mtime: t)
            model.save(r, doc: doc, path: path, fields: fields, mtime: t)
            noteSaved(r, doc, Run.text(fields))
            return "r\(r) create doc\(doc) \(path) \(MC.show(fields))"
        }

        func edit(_ r: Int, style: WriteStyle) -> String? {
            let docs = validDocs(r)
            guard !docs.isEmpty else { return nil }
            let doc = rng.pick(docs)
            let entry = model.local[r][doc]!
            let field = rng.pick(MC.fieldNames)
            return setField(
                r, doc, entry, field, value(), style: style, verb: style == .inPlace ? "edit" : "editor-save")
        }

        func setField(
            _ r: Int, _ doc: Int, _ entry: LocalDoc, _ field: String, _ new: String, style: WriteStyle, verb: String
        ) -> String? {
            let path = entry.placed.path
            guard let old = entry.placed.version.fields[field],
                let bytes = replicas[r].bytes(path),
                let edited = Run.replacing(bytes, old, new)
            else { return nil }
            var fields = entry.placed.version.fields
            fields[field] = new
            let t = nextSaveMs(r)
            write(r, path, edited, style: style, mtime: t)
            model.save(r, doc: doc, path: path, fields: fields, mtime: t)
            noteSaved(r, doc, edited)
            return "r\(r) \(verb) doc\(doc) \(path) \(field)=\(new) (was \(old))"
        }

        /// The same edit another replica has pending (identical edits are not a conflict).
        func echoEdit(_ r: Int) -> String? {
            for other in (0..<3).filter({ $0 != r }) {
                for (doc, entry) in model.local[other] where entry.invalidBytes == nil {
                    guard let b = model.base[other][doc], let mine = model.local[r][doc], mine.invalidBytes == nil,
                        let mineBase = model.base[r][doc], mineBase.version.fields == b.version.fields,
                        mine.placed.version.fields == b.version.fields
                    else { continue }
                    for f in MC.fieldNames where entry.placed.version.fields[f] != b.version.fields[f] {
                        guard let v = entry.placed.version.fields[f] else { continue }
                        echoDocs.insert(doc)
                        echoMakers[doc, default: []].formUnion([r, other])
                        return setField(r, doc, mine, f, v, style: .inPlace, verb: "echo-edit (same as r\(other))")
                    }
                }
            }
            return nil
        }

        /// A script writes a document's file anew without its ids (an export, a template),
        /// one field changed. SPEC: a file without ids at a path the tree tracks is a new
        /// version of that document, so the model saves an edit of the same document.
        func regenerate(_ r: Int) -> String? {
            // Where the tree tracks it: what its last run recorded, else its base (a send-only
            // replica that recorded a deletion and holds the remote's edit does not track the
            // document, and a file without ids written back there is a new one: daemon 28301).
            let docs = validDocs(r).filter { d in
                let tracked = model.recorded[r][d].map { $0?.path } ?? model.base[r][d]?.path
                return tracked != nil && tracked == model.local[r][d]?.placed.path
            }
            guard !docs.isEmpty else { return nil }
            let doc = rng.pick(docs)
            let entry = model.local[r][doc]!
            var fields = entry.placed.version.fields
            let field = rng.pick(MC.fieldNames)
            fields[field] = value()
            let t = nextSaveMs(r)
            write(r, entry.placed.path, Run.text(fields), style: .editorRename, mtime: t)
            model.save(r, doc: doc, path: entry.placed.path, fields: fields, mtime: t)
            regeneratedUnsynced[r].insert(doc)
            return "r\(r) regenerate doc\(doc) \(entry.placed.path) without ids, \(field)=\(fields[field]!)"
        }

        /// A folder the scan cannot enter during a sync (moved away, a symlink in its
        /// place): SPEC, what the scan could not look at is unknown, never deleted. The sync
        /// must exit 1 naming each document the replica synced there; the folder comes back
        /// and the next sync finishes the work, which the model sees as one sync (the first
        /// one's conflicts may have been recorded under its exit 1, as for a killed run).
        func hiddenFolderSync(_ r: Int) -> String? {
            // Not a folder holding a file new since the last sync (a copy there, unseen by the
            // first run, would meet its original after that run pulled the original's
            // deletion: then it is the original written back, not the copy the model's one
            // sync makes of it).
            // Nor one a document was moved into since (its old path was looked at and found
            // empty: SYNC.md says that is a deletion there, and the document comes back as
            // written back once the folder can be read, not the rename the model makes).
            let folders = ["notes", "tasks"].filter { folder in
                model.base[r].values.contains { $0.path.hasPrefix(folder + "/") }
                    && FileManager.default.fileExists(atPath: replicas[r].path(folder))
                    && !model.local[r].contains {
                        $0.value.placed.path.hasPrefix(folder + "/")
                            && !(model.base[r][$0.key]?.path.hasPrefix(folder + "/") ?? false)
                    }
            }
            guard let folder = folders.isEmpty ? nil : rng.pick(folders) else { return nil }
            // Synced there and not moved out since (a file carrying the refId elsewhere is the
            // document moved: seen, not unknown).
            // Where the replica last recorded each document (a send-only replica records moves
            // it cannot send yet), else its base.
            func tracked(_ d: Int) -> String? {
                if let recorded = model.recorded[r][d] { return recorded?.path }
                return model.base[r][d]?.path
            }
            let inside = model.base[r].keys.compactMap { d -> (Int, String)? in
                // A deletion a `resolve` recorded (it records the whole tree) is known, not
                // unknown (folder seed 24117).
                if recordedUnsynced[r].contains(d) && model.local[r][d] == nil { return nil }
                guard let path = tracked(d), path.hasPrefix(folder + "/"),
                    model.local[r][d].map({ $0.placed.path.hasPrefix(folder + "/") }) ?? true
                else { return nil }
                return (d, path)
            }
            // Every document synced there was moved or deleted since (and recorded so): nothing
            // to be unknown, so nothing this step checks.
            guard !inside.isEmpty else { return nil }
            // Moved away with a symlink in its place, or (as a user without privileges: root
            // reads every folder) made unreadable with `chmod 000`.
            // Not on the daemon kind: its repository lies outside the sandbox handed over, and
            // git refuses a repository another user owns.
            let unreadable =
                remoteKind != .daemon && Prerequisite.unprivileged.runsHere && getuid() == 0 && rng.chance(0.5)
            let hidden: RunResult
            if unreadable {
                // The drive's files come in before the tree is handed over (as root).
                driveCatchUp(r)
                let handed = CLI.runTool("/bin/chown", ["-R", "65534:65534", box.root], in: "/")
                precondition(handed.exit == 0, "chown: \(handed)")
                precondition(chmod(replicas[r].path(folder), 0) == 0)
                let clock = CLI.clockEnvironment(for: replicas[r].root).map { "\($0.key)=\($0.value)" }.sorted()
                let started = awaitClockGap([r])
                model.runStartMs = started
                defer { noteSpans([r], from: started) }
                hidden = CLI.runTool(
                    "/usr/bin/setpriv",
                    ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/env"] + clock + [CLI.binary, "sync"],
                    in: replicas[r].root, env: ["HOME": box.root])
                lastRunEndMs = nowMs()
                precondition(chmod(replicas[r].path(folder), 0o755) == 0)
                // Back to root, the owner every other run expects (git refuses a repository
                // another user owns).
                let back = CLI.runTool("/bin/chown", ["-R", "0:0", box.root], in: "/")
                precondition(back.exit == 0, "chown: \(back)")
                figures.unreadableFolders += 1
            } else {
                let away = box.path("hidden-r\(r)")
                precondition(rename(replicas[r].path(folder), away) == 0)
                precondition(symlink(away, replicas[r].path(folder)) == 0)
                hidden = docsync(r, ["sync"])
                precondition(unlink(replicas[r].path(folder)) == 0)
                precondition(rename(away, replicas[r].path(folder)) == 0)
            }
            let named = inside.filter { hidden.stderr.contains("\($0.1): error: not looked at") }.count
            figures.unknownNamed += named
            if hidden.exit != 1 || named != inside.count {
                stepMismatches.append(
                    Mismatch(
                        rules: [], changesDocuments: false,
                        text:
                            "r\(r) sync with \(folder)/ \(unreadable ? "unreadable (chmod 000, as nobody)" : "hidden (a symlink)"): exit \(hidden.exit) (expected 1), named \(named) of \(inside.count) synced documents there (\(inside.map(\.1).sorted())) as not looked at: \(hidden.stderr.prefix(600))"
                    ))
            }
            let next = docsync(r, ["sync"])
            return applySync(
                r, next, recovering: true,
                prefix:
                    "r\(r) sync with \(folder)/ \(unreadable ? "unreadable" : "hidden") → exit \(hidden.exit), \(named) unknown; folder back, sync"
            )
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
            let t = nextSaveMs(r)
            write(r, path, bytes, style: .editorRename, mtime: t)
            model.save(r, doc: doc, path: path, fields: entry.placed.version.fields, mtime: nil, newDocument: true)
            model.taint(doc, .identity)
            pendingCopies[r].insert(source)
            pendingCopyOf[r][doc] = source
            return "r\(r) cp \(entry.placed.path) \(path) (doc\(source) → new doc\(doc))"
        }

        /// Nobody else has a pending rename or delete of `doc`, and `r` has seen its remote path.
        func quietElsewhere(_ r: Int, _ doc: Int) -> Bool {
            guard let remote = model.remote[doc], model.base[r][doc]?.path == remote.path else { return false }
            for o in 0..<3 where o != r {
                guard let b = model.base[o][doc] else { continue }
                guard let l = model.local[o][doc] else { return false }
                if l.placed.path != b.path { return false }
            }
            return !pendingCopies[r].contains(doc)
        }

        func move(_ r: Int) -> String? {
            // A file without ids moved away from its tracked path is a new file there, and
            // the document deleted (SPEC): not the rename the model would make of it.
            let docs = validDocs(r).filter { quietElsewhere(r, $0) && !regeneratedUnsynced[r].contains($0) }
            guard !docs.isEmpty else { return nil }
            let doc = rng.pick(docs)
            var entry = model.local[r][doc]!
            let from = entry.placed.path, to = renameTarget(doc)
            let full = replicas[r].path(to)
            try? FileManager.default.createDirectory(
                atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
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
            // A sparse replica writes one back only inside its selection: outside it, the file
            // is never recorded, and carrying the document's refId it would sit beside the
            // document once that came back in (two files of one document, which the model
            // does not hold).
            let candidates = lastSeen[r].keys.filter { d in
                model.local[r][d] == nil && refIds[d] != nil && !recordedUnsynced[r].contains(d)
                    && !model.local[r].values.contains { $0.placed.path == lastSeen[r][d]!.path }
                    && (!model.sparse.contains(r) || Model.selected(lastSeen[r][d]!.path))
            }.sorted()
            // Not where a clock is off: the file written back is dated after the version it
            // carries, which the model does not track by its id.
            guard !candidates.isEmpty, model.skewMs.isEmpty else { return nil }
            let doc = rng.pick(candidates)
            let seen = lastSeen[r][doc]!
            guard let object = JSONHelp.object(seen.bytes) else { return nil }
            var fields = Self.fields(object)
            let field = rng.pick(MC.fieldNames)
            guard let old = fields[field] else { return nil }
            let new = value()
            guard let bytes = Run.replacing(seen.bytes, old, new) else { return nil }
            fields[field] = new
            // With no base left here, a remote version with other elements of `i` would be
            // merged two-way, its elements ordered as the sequence merge does, which the
            // model's fields cannot follow (daemon seed 25302).
            func elements(_ f: MC.Fields) -> Set<String> { Set(f.keys.filter { $0.hasPrefix(MC.arrayField + ".") }) }
            if let remote = model.remote[doc], elements(remote.version.fields) != elements(fields) { return nil }
            let t = nextSaveMs(r)
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
                !recordedUnsynced[r].contains(d) && !regeneratedUnsynced[r].contains(d) && model.base[r][d] != nil
                    && model.base[r][d]?.path == model.local[r][d]?.placed.path
            }
            guard !docs.isEmpty else { return nil }
            let doc = rng.pick(docs)
            var entry = model.local[r][doc]!
            let field = rng.pick(MC.fieldNames)
            guard let old = entry.placed.version.fields[field], let bytes = replicas[r].bytes(entry.placed.path) else {
                return nil
            }
            let new = value()
            guard let intended = Run.replacing(bytes, old, new), let close = intended.lastIndex(of: UInt8(ascii: "}"))
            else { return nil }
            var bad = intended
            bad.remove(at: close)
            let t = nextSaveMs(r)
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
            let t = nextSaveMs(r)
            write(r, entry.placed.path, bytes, style: .inPlace, mtime: t)
            if revert, model.recorded[r][doc] == .some(entry.placed) {
                // The bytes of a version a sync recorded (stamped with its id, stored): the
                // file carries its own version again, which keeps its id and its date
                // (SYNC.md: a file keeps a changesetId this tree knows names exactly its
                // bytes), not a new save dated now. It matters where that
                // version was still pending (daemon seed 38311, step 203: receive-only r2,
                // whose put-back version then lost a collision by its first date).
                model.local[r][doc] = MC.LocalDoc(placed: entry.placed)
            } else {
                model.save(r, doc: doc, path: entry.placed.path, fields: fields, mtime: t)
            }
            broken[r][doc] = nil
            return
                "r\(r) fix doc\(doc) \(entry.placed.path) \(revert ? "(back to what it was)" : "(the meant edit) \(MC.show(fields))")"
        }

        private func fixAllInvalid(_ r: Int, round: Int) {
            for doc in model.local[r].filter({ $0.value.invalidBytes != nil }).keys.sorted() {
                log.append("   " + fixDoc(r, doc, revert: false))
            }
        }

        // MARK: docsync commands

        /// What one docsync run of a step is checked against.
        struct LastRun {
            var r: Int
            var result: RunResult
            var expected: Set<Int32>
            var rules: Set<Rule>
            /// A sync that completed: the remote, the refIds and `status` are checked after it.
            var synced: Bool
        }

        /// The runs of the step being checked (several in a concurrent step).
        var lastRuns: [LastRun] = []

        /// A sync's expectation: the model's exit code; a recovering sync (after a kill) may
        /// also exit 0 where the model says 3 (the killed run may already have told), and
        /// `extra` adds the exits of a killed run it completes.
        func expectation(
            _ r: Int, _ result: RunResult, _ outcome: Model.SyncOutcome, recovering: Bool, extra: Set<Int32> = []
        ) -> LastRun {
            var expected: Set<Int32> = [outcome.exit]
            expected.formUnion(extra)
            if recovering && expected.contains(3) { expected.insert(0) }
            if recovering && extra.contains(3) && outcome.exit == 0 { expected.insert(3) }
            return LastRun(r: r, result: result, expected: expected, rules: outcome.exitRules, synced: true)
        }

        func sync(_ r: Int) -> String {
            let result = docsync(r, ["sync"])
            return applySync(r, result, recovering: needsRecovery.contains(r), prefix: "r\(r) sync")
        }

        /// The driver's bookkeeping once the model ran `outcome` for a sync of `r`.
        func noteSync(
            _ r: Int, _ result: RunResult, _ outcome: Model.SyncOutcome, recovering: Bool, extra: Set<Int32> = []
        ) {
            needsRecovery.remove(r)
            pendingCopies[r] = []
            pendingCopyOf[r] = [:]
            regeneratedUnsynced[r] = []
            recordedUnsynced[r] = []
            backdatedUnsynced[r] = nil
            figures.conflictsFound += outcome.newRecords.count
            figures.deleteVsEdit += outcome.notes.filter { $0.contains("deleted") }.count
            figures.renamesLost += outcome.notes.filter { $0.contains("renamed on both sides") }.count
            figures.exit[result.exit, default: 0] += 1
            figures.leftSelection += result.stdout.split(separator: "\n").filter { $0.hasPrefix("leave   ") }.count
            lastRuns.append(expectation(r, result, outcome, recovering: recovering, extra: extra))
        }

        func applySync(_ r: Int, _ result: RunResult, recovering: Bool, prefix: String) -> String {
            let outcome = model.sync(r)
            noteSync(r, result, outcome, recovering: recovering)
            let notes = outcome.notes.isEmpty ? "" : "; model: " + outcome.notes.joined(separator: "; ")
            return "\(prefix) → exit \(result.exit) (model \(outcome.exit))\(notes)"
        }

        func crashSync(_ r: Int) -> String? {
            // Aim at a step this sync will reach: a kill that never lands tests nothing.
            var points = git ? MC.crashPoints.filter { $0 != "remote.after-documents" } : MC.crashPoints
            let localNews =
                model.local[r].contains { $0.value.invalidBytes == nil && $0.value.placed != model.base[r][$0.key] }
                || model.base[r].keys.contains { model.local[r][$0] == nil }
            let remoteNews = Set(model.remote.keys).union(model.base[r].keys).contains {
                model.remote[$0] != model.base[r][$0]
            }
            if localNews != remoteNews {
                let narrowed = points.filter { $0.hasPrefix("pull.") == remoteNews }
                if !narrowed.isEmpty { points = narrowed }
            }
            let point = rng.pick(points)
            figures.crashAttempts += 1
            let result = docsync(r, ["sync"], env: ["DOCSYNC_CRASH_AT": point])
            guard result.exit == 137 else {
                return applySync(
                    r, result, recovering: needsRecovery.contains(r),
                    prefix: "r\(r) sync (DOCSYNC_CRASH_AT=\(point), not reached)")
            }
            figures.kills[point, default: 0] += 1
            if point.hasPrefix("record.") {
                // Nothing left the tree: others may go on before it recovers.
                needsRecovery.insert(r)
                return "r\(r) sync KILLED at \(point) (recovers later)"
            }
            let recovery = docsync(r, ["sync"])
            return applySync(r, recovery, recovering: true, prefix: "r\(r) sync KILLED at \(point), then sync")
        }

        // MARK: Several runs at once, and kills at random moments

        /// Starts `docsync args` in every replica of `runs` at the same moment (one process
        /// each) and waits for all; if `victim` is set, SIGKILLs that run after `delayMs`
        /// (if it is still running). A run that died of the signal exits 137.
        func launch(
            _ runs: [(r: Int, args: [String])], victim: Int? = nil, delayMs: Int = 0, during: (() -> Void)? = nil
        ) -> [RunResult] {
            var processes: [(Process, String, [String])] = []
            for run in runs { driveCatchUp(run.r) }
            for run in runs {
                let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "docsync-model-\(UUID().uuidString)"
                ).path
                _ = FileManager.default.createFile(atPath: scratch + ".out", contents: nil)
                _ = FileManager.default.createFile(atPath: scratch + ".err", contents: nil)
                let p = Process()
                p.executableURL = URL(fileURLWithPath: CLI.binary)
                p.arguments = run.args
                p.currentDirectoryURL = URL(fileURLWithPath: replicas[run.r].root)
                p.environment = ProcessInfo.processInfo.environment.merging(
                    CLI.clockEnvironment(for: replicas[run.r].root), uniquingKeysWith: { _, b in b })
                p.standardOutput = FileHandle(forWritingAtPath: scratch + ".out")
                p.standardError = FileHandle(forWritingAtPath: scratch + ".err")
                p.standardInput = FileHandle.nullDevice
                processes.append((p, scratch, run.args))
            }
            // When each run ended, to count the steps whose runs really overlapped.
            let ended = Ended(count: processes.count)
            for (i, (p, _, _)) in processes.enumerated() { p.terminationHandler = { _ in ended.mark(i) } }
            let started = awaitClockGap(runs.map(\.r))
            model.runStartMs = started
            for (p, _, _) in processes { try! p.run() }
            let lastStart = Date()
            if let victim {
                let p = processes[runs.firstIndex { $0.r == victim }!].0
                if delayMs > 0 { usleep(useconds_t(delayMs * 1000)) }
                if p.isRunning { kill(p.processIdentifier, SIGKILL) }
            } else if let during {
                if delayMs > 0 { usleep(useconds_t(delayMs * 1000)) }
                during()
            }
            let results = processes.map { (p, scratch, args) -> RunResult in
                p.waitUntilExit()
                let out = (try? String(contentsOfFile: scratch + ".out", encoding: .utf8)) ?? ""
                let err = (try? String(contentsOfFile: scratch + ".err", encoding: .utf8)) ?? ""
                try? FileManager.default.removeItem(atPath: scratch + ".out")
                try? FileManager.default.removeItem(atPath: scratch + ".err")
                let code = p.terminationReason == .exit ? p.terminationStatus : 128 + p.terminationStatus
                return RunResult(args: args, stdout: out, stderr: err, exit: code)
            }
            lastLaunchOverlapped = processes.count > 1 && ended.first.map { $0 > lastStart } ?? false
            lastRunEndMs = nowMs()
            noteSpans(runs.map(\.r), from: started)
            return results
        }

        /// One serial order the model could follow for a step: the model after it, and the
        /// runs to check (with their model outcomes) if the engine followed it.
        struct Alternative {
            var label: String
            var model: Model
            var syncs: [(r: Int, result: RunResult, outcome: Model.SyncOutcome, recovering: Bool, extra: Set<Int32>)]
            var others: [LastRun] = []
        }

        /// Picks the alternative the replicas, the remote, the exit codes and the conflict
        /// lists agree with (the first with no mismatch; else the one with the fewest, which
        /// the step's check then reports), and takes over its model and bookkeeping.
        /// Returns its index and the number of alternatives that matched.
        @discardableResult
        func choose(_ alternatives: [Alternative]) -> (index: Int, matching: Int) {
            let (best, matching) = pick(alternatives)
            adopt(alternatives[best])
            return (best, matching)
        }

        /// The alternative with the fewest unexplained mismatches (the first of those with
        /// none), and how many have none. Changes nothing.
        func pick(_ alternatives: [Alternative]) -> (index: Int, matching: Int) {
            precondition(!alternatives.isEmpty)
            guard alternatives.count > 1 else { return (0, 1) }
            var best = 0, bestCount = Int.max, matching = 0
            var whyNot: [String] = []
            let saved = (model, lastRuns, lastSeen, csContent, versionCs, refIds)
            if stepCache == nil { stepCache = StepCache() }
            for (i, alt) in alternatives.enumerated() {
                model = alt.model
                lastRuns =
                    alt.syncs.map {
                        expectation($0.r, $0.result, $0.outcome, recovering: $0.recovering, extra: $0.extra)
                    } + alt.others
                // Known engine defects do not decide the order (they are reported as such).
                let unexplained = collectMismatches(step: 1, full: false).filter { !$0.known }
                let count = unexplained.count
                (model, lastRuns, lastSeen, csContent, versionCs, refIds) = saved
                if count == 0 { matching += 1 }
                if count < bestCount {
                    best = i
                    bestCount = count
                }
                // What this order would have got wrong (printed if no order matches).
                whyNot.append(unexplained.prefix(2).map { String($0.text.prefix(300)) }.joined(separator: " / "))
            }
            alternativesTried = bestCount > 0 ? zip(alternatives, whyNot).map { "\($0.label) [\($1)]" } : nil
            return (best, matching)
        }

        func adopt(_ alt: Alternative) {
            model = alt.model
            for s in alt.syncs { noteSync(s.r, s.result, s.outcome, recovering: s.recovering, extra: s.extra) }
            lastRuns += alt.others
        }

        /// Every ordering of `items`.
        static func permutations(_ items: [Int]) -> [[Int]] {
            guard items.count > 1 else { return [items] }
            var all: [[Int]] = []
            for (i, x) in items.enumerated() {
                var rest = items
                rest.remove(at: i)
                for p in permutations(rest) { all.append([x] + p) }
            }
            return all
        }

        /// `docsync sync` in the replicas `parts` at the same moment (one of them perhaps
        /// SIGKILLed after `delayMs`), then a recovery sync of a killed one. The model accepts
        /// any serial order of the runs: every permutation of the runs that took part is
        /// computed, a run that exited 75 (remote busy: its local changes are recorded in
        /// the journal, nothing was pulled or pushed, which for the model is the same as not
        /// having run) is left out, and a killed run may have done nothing or everything
        /// (its recovery sync comes after the others). The step continues with the model of
        /// the order the replicas, the remote, the exit codes and the conflict lists match.
        func syncTogether(_ parts: [Int], victim: Int?, delayMs: Int) -> String {
            let results = launch(parts.map { ($0, ["sync"]) }, victim: victim, delayMs: delayMs)
            var byReplica: [Int: RunResult] = [:]
            for (r, result) in zip(parts, results) { byReplica[r] = result }
            let what = victim == nil ? "" : (parts.count > 1 ? "together" : "sync")
            var killed: [Int] = []
            if let v = victim {
                figures.randomKillsTried[what, default: 0] += 1
                if byReplica[v]!.exit == 137 {
                    killed = [v]
                    figures.randomKillsLanded[what, default: 0] += 1
                }
            }
            let busy = parts.filter { byReplica[$0]!.exit == 75 }
            figures.busy75 += busy.count
            var recoveries: [Int: RunResult] = [:]
            for k in killed { recoveries[k] = docsync(k, ["sync"]) }
            let ran = parts.filter { !busy.contains($0) }
            var alternatives: [Alternative] = []
            // A run that gave up with 75 (the remote kept changing under its pushes) did
            // nothing, or pulled and then gave up its push: each of its attempts pulls first
            // ("the local part is still done").
            for busyMask in 0..<(1 << busy.count) {
                let pulledBusy = busy.enumerated().filter { busyMask & (1 << $0.offset) != 0 }.map(\.element)
                alternatives += syncAlternatives(
                    ran: ran, killed: killed, pulledBusy: pulledBusy, busy: busy, byReplica: byReplica,
                    recoveries: recoveries)
            }
            return finishTogether(
                parts, alternatives: alternatives, ran: ran, killed: killed, byReplica: byReplica,
                recoveries: recoveries, victim: victim, delayMs: delayMs)
        }

        /// The serial orders a concurrent step's runs may have taken (see `syncTogether`).
        func syncAlternatives(
            ran: [Int], killed: [Int], pulledBusy: [Int], busy: [Int], byReplica: [Int: RunResult],
            recoveries: [Int: RunResult]
        ) -> [Alternative] {
            var alternatives: [Alternative] = []
            for mask in 0..<(1 << ran.count) {
                let subset = ran.enumerated().filter { mask & (1 << $0.offset) != 0 }.map(\.element)
                guard ran.allSatisfy({ subset.contains($0) || killed.contains($0) }) else { continue }
                // A killed run did nothing, all of it, or (killed between them) its pull and not
                // its push.
                for order in Run.permutations(subset + pulledBusy) {
                    for pulledOnly in subset.contains(where: killed.contains) ? [false, true] : [false] {
                        var m = model
                        var syncs:
                            [(
                                r: Int, result: RunResult, outcome: Model.SyncOutcome, recovering: Bool,
                                extra: Set<Int32>
                            )] = []
                        var killedExit: [Int: Int32] = [:]
                        for r in order {
                            let gaveUp = pulledBusy.contains(r)
                            let outcome = m.sync(r, pushing: !gaveUp && !(pulledOnly && killed.contains(r)))
                            if killed.contains(r) {
                                killedExit[r] = outcome.exit
                            } else {
                                syncs.append((r, byReplica[r]!, outcome, needsRecovery.contains(r), gaveUp ? [75] : []))
                            }
                        }
                        for k in killed {
                            let outcome = m.sync(k)
                            syncs.append((k, recoveries[k]!, outcome, true, killedExit[k].map { [$0] } ?? []))
                        }
                        let label =
                            order.map {
                                killed.contains($0)
                                    ? "r\($0)(killed, \(pulledOnly ? "after its pull" : "completed"))"
                                    : pulledBusy.contains($0) ? "r\($0)(75 after its pull)" : "r\($0)"
                            }
                            .joined(separator: ",") + killed.map { ",r\($0) recovery" }.joined()
                        let others = busy.filter { !pulledBusy.contains($0) }.map {
                            LastRun(r: $0, result: byReplica[$0]!, expected: [75], rules: [], synced: false)
                        }
                        alternatives.append(Alternative(label: label, model: m, syncs: syncs, others: others))
                    }
                }
            }
            return alternatives
        }

        /// Chooses among a concurrent step's alternatives and describes the step.
        func finishTogether(
            _ parts: [Int], alternatives: [Alternative], ran: [Int], killed: [Int], byReplica: [Int: RunResult],
            recoveries: [Int: RunResult], victim: Int?, delayMs: Int
        ) -> String {
            var alternatives = alternatives
            var (chosen, matching) = pick(alternatives)
            if matching == 0 && ran.count > 1 {
                // A known engine defect: two runs that both merged a document with a remote
                // change, one of which then lost the push race, do not end as any serial order
                // would (the loser re-merges its own merge, stamped with the current time, so
                // the earlier save can win a field). Documents two of the runs had changed
                // get its rule, so a mismatch there is reported as that defect.
                let shared = Set(
                    model.local.indices.filter(ran.contains).flatMap { r in
                        Set(model.local[r].keys).union(model.base[r].keys).filter {
                            model.local[r][$0]?.placed != model.base[r][$0]
                        }
                    }.reduce(into: [Int: Int]()) { $0[$1, default: 0] += 1 }.filter { $0.value > 1 }.keys)
                if !shared.isEmpty {
                    for i in alternatives.indices {
                        for d in shared { alternatives[i].model.taint(d, .retryMergeUsesMergeTime) }
                    }
                    (chosen, matching) = pick(alternatives)
                }
            }
            let firstNewVersion = model.nextVersion
            adopt(alternatives[chosen])
            if ran.count > 1 { orderConcurrentMerges(ran, since: firstNewVersion) }
            if parts.count > 1 {
                figures.launchedTogether += 1
                if lastLaunchOverlapped { figures.concurrentSteps += 1 }
                if !alternatives[chosen].label.hasPrefix(ran.map { "r\($0)" }.joined(separator: ",")) {
                    figures.reordered += 1
                }
            }
            let exits = parts.map { "r\($0) \(byReplica[$0]!.exit)" }.joined(separator: ", ")
            let kill =
                victim.map {
                    " (SIGKILL r\($0) after \(delayMs) ms: \(killed.isEmpty ? "finished first" : "landed, then sync → exit \(recoveries[$0]!.exit)"))"
                } ?? ""
            let head =
                parts.count > 1
                ? "together: sync " + parts.map { "r\($0)" }.joined(separator: " ") : "r\(parts[0]) sync"
            return
                "\(head)\(kill) → \(exits); model order \(alternatives[chosen].label) (\(matching) of \(alternatives.count) orders match)"
        }

        /// Versions docsync made (merges) for one document on two replicas of one
        /// concurrent step are ordered as they were stamped. Why: the serial order the step
        /// is checked in is the order the runs read and wrote the remote; each run stamps its
        /// merge when it plans it, so a run that read the remote first can stamp later. SPEC
        /// rule 1 orders versions by changesetId ("the later changesetId wins"), which for
        /// runs at the same moment is physical time the model cannot know: it reads the
        /// changesetIds the files carry, and only to order these versions among themselves.
        func orderConcurrentMerges(_ ran: [Int], since firstNew: Int) {
            var made: [Int: [(cs: String, version: MC.Version)]] = [:]
            for r in ran {
                for (d, e) in model.local[r] where e.invalidBytes == nil {
                    let v = e.placed.version
                    guard v.id >= firstNew, v.mtimeMs == nil, v.author == r,
                        !(made[d]?.contains { $0.version.id == v.id } ?? false),
                        let object = replicas[r].json(e.placed.path), Self.fields(object) == v.fields,
                        let cs = object["changesetId"] as? String
                    else { continue }
                    made[d, default: []].append((cs, v))
                }
            }
            var ticks: [Int: Int] = [:]
            for (_, versions) in made where versions.count > 1 {
                let slots = versions.map(\.version.tick).sorted()
                for (slot, one) in zip(slots, versions.sorted { $0.cs < $1.cs }) where one.version.tick != slot {
                    ticks[one.version.id] = slot
                }
            }
            if !ticks.isEmpty { figures.mergesReordered += 1 }
            model.retick(ticks)
        }

        func concurrentSync() -> String? {
            // On a drive, two runs before the files of each other's push arrived fork the
            // history, which this model does not follow (ModelDriveService.swift).
            guard remoteKind != .drive else { return nil }
            let free = (0..<3).filter { !needsRecovery.contains($0) }
            guard free.count >= 2 else { return nil }
            var pool = free, parts: [Int] = []
            let n = free.count == 3 && rng.chance(0.5) ? 3 : 2
            for _ in 0..<n { parts.append(pool.remove(at: rng.int(pool.count))) }
            let victim = rng.chance(0.35) ? rng.pick(parts) : nil
            return syncTogether(parts, victim: victim, delayMs: randomDelay())
        }

        /// A random kill delay in 0…max ms; half of them in the first fifth, where a debug
        /// build's runs (30–100 ms here) are still going.
        func randomDelay(_ max: Int = 300) -> Int {
            rng.chance(0.5) ? rng.int(max / 5 + 1) : rng.int(max + 1)
        }

        /// `docsync sync` SIGKILLed after a random delay (0–300 ms), then a recovery sync.
        func killSync(_ r: Int, maxDelay: Int = 300) -> String? {
            guard !needsRecovery.contains(r) else { return nil }
            return syncTogether([r], victim: r, delayMs: randomDelay(maxDelay))
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
            var takeDeletion = false
            var how = "accept as is"
            var viewRules: Set<Rule> = []
            let storedBy = Model.storedBy(rec)
            // Untouched since the conflict: the colliding fields still hold the winner's
            // values (a deletion that lost: the document is still the kept version).
            let stillKept = rec.loser != nil ? untouched : entry.placed.version.id == rec.winner.id
            // Only the replica that found the conflict surely journaled the version it kept
            // (folder seed 24109: a record learned from the remote, taken on another replica,
            // took the whole array).
            let wholeArray =
                rec.fields.contains { $0.hasPrefix(MC.arrayField + ".") }
                && (compactedRecords[r, default: []].contains(rec.id) || rec.finder != r)
            // A lost rename is only settled as is (`--take` of a name moves the document,
            // which the model does not do).
            if rec.renameLost {
                how = "accept as is (a lost rename)"
            } else if !wholeArray, rec.finder == r, rec.loser != nil, sameDoc.count == 1, untouched, rng.chance(0.4) {
                let takeLocal = rng.chance(0.5)
                args += ["--take", takeLocal ? "local" : "remote"]
                if takeLocal == rec.loserWasLocal { takeLoser = rec }
                how = "--take \(takeLocal ? "local" : "remote") (\(takeLoser == nil ? "the winner" : "the loser"))"
            } else if !wholeArray, sameDoc.count == 1, stillKept, let by = storedBy, by != rec.keptBy, rng.chance(0.6) {
                // Any replica, from its own point of view (issue 21): `local` is this
                // replica's stored version where its version lost, else the document as it
                // is now (on a replica that made neither version it changes and deletes
                // nothing); `remote` the other one; a replica's name takes what it made.
                viewRules = [.pointOfView]
                figures.viewResolves += 1
                let takesStored: Bool
                // A replica's name: one of the two that made the versions (plain git has none).
                let makers = [by, rec.keptBy].filter { $0 >= 0 }
                switch makers.isEmpty ? rng.int(2) : rng.int(3) {
                case 0:
                    args += ["--take", "local"]
                    takesStored = by == r
                    how =
                        "--take local ("
                        + (by == r
                            ? "its own stored version"
                            : rec.keptBy == r ? "it made the kept version" : "it made neither version: nothing changes")
                        + ")"
                case 1:
                    args += ["--take", "remote"]
                    takesStored = by != r
                    how = "--take remote (" + (takesStored ? "the stored version" : "the kept version") + ")"
                default:
                    let who = rng.pick(makers)
                    args += ["--take", names[who]]
                    takesStored = who == by
                    how = "--take \(names[who]) (" + (takesStored ? "its stored version" : "its kept version") + ")"
                }
                if takesStored {
                    if rec.loser != nil {
                        takeLoser = rec
                    } else {
                        takeDeletion = true
                        how += ", deletes the document"
                    }
                }
            }
            let result: RunResult
            if !needsRecovery.contains(r), rng.chance(0.25) {
                // A resolve SIGKILLed at a random moment: it did nothing or all of it; the
                // recovery sync that follows must settle (or not) everywhere consistently.
                let delay = randomDelay()
                figures.randomKillsTried["resolve", default: 0] += 1
                let killed = launch([(r, args)], victim: r, delayMs: delay)[0]
                if killed.exit == 137 {
                    figures.randomKillsLanded["resolve", default: 0] += 1
                    let recovery = docsync(r, ["sync"])
                    var without = model
                    let o1 = without.sync(r)
                    var with = model
                    with.resolve(r, doc: rec.doc, takeLoser: takeLoser, takeDeletion: takeDeletion)
                    let o2 = with.sync(r)
                    var alternatives = [
                        Alternative(
                            label: "resolve did nothing, sync", model: without, syncs: [(r, recovery, o1, true, [])]),
                        Alternative(label: "resolve done, sync", model: with, syncs: [(r, recovery, o2, true, [])])
                    ]
                    if takeLoser != nil || takeDeletion {
                        // The known defect: the file written, the resolve not journaled.
                        var half = model
                        half.resolve(r, doc: rec.doc, takeLoser: takeLoser, takeDeletion: takeDeletion, settle: false)
                        let o3 = half.sync(r)
                        alternatives.append(
                            Alternative(
                                label: "resolve wrote the file only, sync", model: half,
                                syncs: [(r, recovery, o3, true, [])]))
                    }
                    let (chosen, _) = choose(alternatives)
                    if chosen == 2 {
                        stepMismatches.append(
                            Mismatch(
                                rules: [.killedResolveHalfDone], changesDocuments: false,
                                text: "r\(r): the killed resolve of doc\(rec.doc) took the values but left \(rec) open")
                        )
                    }
                    if takeLoser != nil { clockMs = max(clockMs, lastRunEndMs) }
                    return
                        "r\(r) resolve \(entry.placed.path) \(how) for \(rec) SIGKILLed after \(delay) ms, then sync → exit \(recovery.exit); model: \(["the resolve did nothing", "the resolve was done", "the resolve wrote the file only"][chosen])"
                }
                result = killed
                how += " (SIGKILL after \(delay) ms: finished first)"
            } else {
                result = docsync(r, args)
            }
            for d in Set(model.local[r].keys).union(model.base[r].keys)
            where model.local[r][d]?.placed != model.base[r][d] {
                recordedUnsynced[r].insert(d)
                if model.local[r][d]?.invalidBytes == nil { model.recorded[r][d] = .some(model.local[r][d]?.placed) }
            }
            model.resolve(r, doc: rec.doc, takeLoser: takeLoser, takeDeletion: takeDeletion)
            recordedUnsynced[r].insert(rec.doc)
            // Journaled, as `restore --at`'s: a save of it now is edited from the resolved
            // version and dated after it (folder seed 33118: on a replica that had seen a
            // clock a day ahead, a save right after a resolve sorted after the resolve's id).
            if model.local[r][rec.doc]?.invalidBytes == nil {
                model.recorded[r][rec.doc] = .some(model.local[r][rec.doc]?.placed)
            }
            if !viewRules.isEmpty { model.taint(rec.doc, .pointOfView) }
            // resolve records the tree first: an invalid file there makes it exit 1 (rule 7).
            var rules: Set<Rule> = rec.finder == r ? viewRules : viewRules.union([.conflictsTravel])
            if rec.fields.isEmpty { rules.insert(.deleteVsEdit) }
            lastRuns.append(
                LastRun(r: r, result: result, expected: [model.hasInvalid(r) ? 1 : 0], rules: rules, synced: false))
            if takeLoser != nil {
                // The resolve wrote the file: the model's clock moves past it.
                clockMs = max(clockMs, lastRunEndMs)
            }
            return "r\(r) resolve \(entry.placed.path) \(how) for \(rec) → exit \(result.exit)"
        }

        func gc(_ r: Int) -> String? {
            compactedRecords[r, default: []].formUnion(model.records.map(\.id))
            if !needsRecovery.contains(r), rng.chance(0.35) {
                // gc SIGKILLed at a random moment (it changes no document), then a recovery sync.
                let delay = randomDelay()
                figures.randomKillsTried["gc", default: 0] += 1
                let killed = launch([(r, ["gc"])], victim: r, delayMs: delay)[0]
                if killed.exit == 137 {
                    figures.randomKillsLanded["gc", default: 0] += 1
                    let recovery = docsync(r, ["sync"])
                    return applySync(
                        r, recovery, recovering: true, prefix: "r\(r) gc SIGKILLed after \(delay) ms, then sync")
                }
                lastRuns.append(LastRun(r: r, result: killed, expected: [0], rules: [], synced: false))
                return "r\(r) gc (SIGKILL after \(delay) ms: finished first) → exit \(killed.exit)"
            }
            let result = docsync(r, ["gc"])
            lastRuns.append(LastRun(r: r, result: result, expected: [0], rules: [], synced: false))
            return "r\(r) gc → exit \(result.exit)"
        }
    }
}

extension RandomKillTests.Rng {
    mutating func int(_ n: Int) -> Int { below(n) }
    mutating func chance(_ p: Double) -> Bool { Double(next() % 1_000_000) / 1_000_000 < p }
    mutating func pick<T>(_ items: [T]) -> T { items[int(items.count)] }
}

extension MC {
    /// When each of a launch's processes ended (set from their termination handlers).
    final class Ended: @unchecked Sendable {
        private let lock = NSLock()
        private var times: [Date?]

        init(count: Int) { times = Array(repeating: nil, count: count) }

        func mark(_ i: Int) {
            lock.lock()
            times[i] = Date()
            lock.unlock()
        }

        /// The earliest end, once every process's handler ran (it runs on another thread,
        /// perhaps after `waitUntilExit` returned).
        var first: Date? {
            for _ in 0..<200 {
                lock.lock()
                let all = times.allSatisfy { $0 != nil }
                let earliest = times.compactMap { $0 }.min()
                lock.unlock()
                if all { return earliest }
                usleep(1000)
            }
            return nil
        }
    }
}
