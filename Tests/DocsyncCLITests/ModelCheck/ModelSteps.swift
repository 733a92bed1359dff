// The model check's steps added for issue 21's second part: a replica joining with a
// folder that already holds some of the remote's documents as plain files (first
// contact), `config remote.url` changes (refused to a place with no remote; another path
// to the same remote and back resets nothing), and commits made with plain git on a git
// remote that keep a document's changesetId with other content. (`resolve --take` from
// every replica's point of view is in ModelDriver.resolve; `storedSide`/`keptBy` are
// checked in ModelCompare.checkConflicts.)

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension MC.Run {
    /// This replica's id, from `status --json`.
    func replicaId(_ r: Int) -> String {
        let status = replicas[r].run(["status", "--json"])
        return (JSONHelp.parse(status.stdout) as? [String: Any])?["replicaId"] as? String ?? "?"
    }

    // MARK: First contact

    /// A new replica joins the remote with a folder that already holds some of the remote's
    /// documents as plain files without ids (the same content, or other values in some
    /// fields, perhaps lacking one), plus a document of its own: `init --remote` + `sync`,
    /// or `clone` into the folder. SYNC.md "First contact": each such file joins the
    /// remote's document at its path; the same content is that document (nothing pushed),
    /// other content is merged two-way (fields one side has are taken, fields both have go
    /// to the later save, the losing version is a recorded conflict, exit 3). Never a
    /// `name~xxxx.json` copy. The joiner is checked in this step and then left alone.
    func firstContact() -> String? {
        let onRemote = model.remote.keys.sorted()
        guard !onRemote.isEmpty else { return nil }
        joiners += 1
        let name = "j\(joiners)"
        let j = model.addReplica()
        names.append(name)
        replicas.append(box.replica(name))
        pendingCopies.append([])
        pendingCopyOf.append([:])
        regeneratedUnsynced.append([])
        recordedUnsynced.append([])
        lastSeen.append([:])
        broken.append([:])
        try? FileManager.default.createDirectory(atPath: replicas[j].root, withIntermediateDirectories: true)
        var said: [String] = []
        // Some of the remote's documents, as plain files without ids.
        var pool = onRemote
        let count = 1 + rng.int(min(3, pool.count))
        var older = 0
        for _ in 0..<count {
            let doc = pool.remove(at: rng.int(pool.count))
            let placed = model.remote[doc]!
            var fields = placed.version.fields
            let same = rng.chance(0.35)
            if !same {
                // The elements of `i` stay the remote's (a value may change): with other
                // elements on each side and no base, the merge orders them as SYNC.md's
                // sequence merge does, which the model's fields cannot follow.
                let changed = rng.pick(MC.fieldNames.filter { !$0.hasPrefix(MC.arrayField + ".") || fields[$0] != nil })
                fields[changed] = value()
                if rng.chance(0.3) {
                    // A field only the remote has: taken without a conflict.
                    let dropped = rng.pick(MC.fieldNames.filter { $0 != changed && !$0.hasPrefix(MC.arrayField + ".") })
                    fields[dropped] = nil
                }
            }
            // A file saved before the remote's version (its values lose) or after (they win).
            let old = !same && rng.chance(0.5)
            let mtime: Int64
            let tick: Int
            if old {
                older += 1
                mtime = runStartMs - 3_600_000 + Int64(older) * 1000
                // Dated by its mtime, among every other version by time (`Model.tick`).
                tick = Int(mtime) * MC.Model.floorStep
            } else {
                mtime = nextSaveMs(j)
                tick = Int(mtime) * MC.Model.floorStep
                model.tick = max(model.tick, tick)
            }
            // SPEC: "identical content is the same document". Identical means the bytes the
            // remote holds (its ids left out), as a copy of the same folder has them: the same
            // values in another layout are a later save of that document, pushed as one.
            var bytes = MC.Run.text(fields)
            if same,
                let holder = (0..<3).first(where: {
                    model.base[$0][doc] == placed && model.local[$0][doc]?.placed == placed
                        && model.local[$0][doc]?.invalidBytes == nil
                }),
                let held = replicas[holder].bytes(placed.path)
            {
                bytes = Array(Self.withoutIds(held).utf8)
            }
            write(j, placed.path, bytes, style: .editorRename, mtime: mtime)
            let version = model.newVersion(fields, tick: tick, mtime: mtime, author: j)
            model.local[j][doc] = MC.LocalDoc(placed: MC.Placed(version: version, path: placed.path))
            model.taint(doc, .firstContact)
            if old && fields.count < placed.version.fields.count { model.taint(doc, .firstContactReorderedCopy) }
            if !same { figures.firstContactMerges += 1 }
            said.append(
                "doc\(doc) \(placed.path) \(same ? "same content" : "\(MC.show(fields)) saved \(old ? "earlier" : "later")")"
            )
        }
        // And one of its own.
        let doc = nextDoc
        nextDoc += 1
        var fields = Dictionary(uniqueKeysWithValues: MC.fieldNames.map { ($0, value()) })
        fields[MC.counterField] = "0"
        let path = freshPath()
        let t = nextSaveMs(j)
        write(j, path, MC.Run.text(fields), style: .editorRename, mtime: t)
        model.save(j, doc: doc, path: path, fields: fields, mtime: t)
        said.append("own doc\(doc) \(path)")

        figures.firstContacts += 1
        let viaClone = rng.chance(0.5)
        let result: RunResult
        var cloned: RunResult?
        if viaClone {
            // `clone` pulls (README: the files it did not join "are sent by the next sync"),
            // so the model's one sync is the clone and the sync after it; the clone's exit
            // says whether it recorded a conflict, the sync's is 0 then.
            driveCatchUp(j)
            let started = awaitClockGap([j])
            model.runStartMs = started
            cloned = CLI.run(["clone", "--name", name, remoteURL(for: j), name], in: box.root)
            lastRunEndMs = nowMs()
            noteSpans([j], from: started)
            _ = configurePolicies(j)
            result = docsync(j, ["sync"])
        } else {
            driveCatchUp(j)
            let started = awaitClockGap([j])
            model.runStartMs = started
            let made = CLI.run(["init", "--remote", remoteURL(for: j), "--name", name, name], in: box.root)
            noteSpans([j], from: started)
            if made.exit != 0 {
                stepMismatches.append(
                    Mismatch(
                        rules: [.firstContact], changesDocuments: false,
                        text: "\(name): init --remote into a folder holding plain files exited \(made.exit)\n\(made)"))
            }
            _ = configurePolicies(j)
            result = docsync(j, ["sync"])
        }
        lastRunEndMs = nowMs()
        replicaIds.append(replicaId(j))
        model.replicaIdText[j] = replicaIds[j]
        // A clone pulls before `config` can set the replica's policies.
        if viaClone { model.unconfigured.insert(j) }
        let outcome = model.sync(j)
        model.unconfigured.remove(j)
        var syncOutcome = outcome
        if let cloned {
            lastRuns.append(
                LastRun(
                    r: j, result: cloned, expected: [outcome.exit], rules: outcome.exitRules.union([.firstContact]),
                    synced: false))
            if syncOutcome.exit == 3 { syncOutcome.exit = 0 }
        }
        noteSync(j, result, syncOutcome, recovering: false)
        lastRuns[lastRuns.count - 1].rules.insert(.firstContact)
        let notes = outcome.notes.isEmpty ? "" : "; model: " + outcome.notes.joined(separator: "; ")
        let how = cloned.map { "clone into the folder → exit \($0.exit), sync" } ?? "init --remote, sync"
        return
            "\(name) joins with \(said.joined(separator: ", ")): \(how) → exit \(result.exit) (model \(outcome.exit)\(cloned == nil ? "" : " for the clone"))\(notes)"
    }

    // MARK: remote.url

    /// The path the remote is reached by in the sandbox (folder or bare repository).
    var remotePath: String { git ? gitRepository : remoteURL }

    /// The path replica `r`'s remote is reached by (its own copy on a drive).
    func remotePath(for r: Int) -> String { remoteKind == .drive ? driveCopy(r) : remotePath }

    /// `config remote.url` to a place with no remote is refused (exit 1, config unchanged,
    /// nothing created there); then the tree is pointed at the same remote by another path
    /// (a symlink), or back: later syncs must behave as if the URL never changed.
    func urlChange(_ r: Int) -> String? {
        guard !needsRecovery.contains(r) else { return nil }
        let before = docsync(r, ["config", "remote.url"])
        let nowhere = box.path("nowhere\(nextPath)")
        nextPath += 1
        let emptyDir = rng.chance(0.5)
        if emptyDir { try? FileManager.default.createDirectory(atPath: nowhere, withIntermediateDirectories: true) }
        let refused = docsync(r, ["config", "remote.url", nowhere])
        let after = docsync(r, ["config", "remote.url"])
        lastRuns.append(LastRun(r: r, result: refused, expected: [1], rules: [], synced: false))
        if after.stdout != before.stdout || after.exit != 0 {
            stepMismatches.append(
                Mismatch(
                    rules: [], changesDocuments: false,
                    text:
                        "r\(r): a refused config remote.url changed it: \(before.stdout.debugDescription) → \(after.stdout.debugDescription)"
                ))
        }
        let left = Files.list(nowhere, skipMetadata: false)
        if emptyDir ? !left.isEmpty : FileManager.default.fileExists(atPath: nowhere) {
            stepMismatches.append(
                Mismatch(
                    rules: [], changesDocuments: false,
                    text: "r\(r): a refused config remote.url created \(nowhere) \(left)"))
        }
        let alias = box.path(remoteKind == .drive ? "alias-of-copy-\(r)" : "alias-of-remote")
        if !FileManager.default.fileExists(atPath: alias) {
            precondition(symlink(remotePath(for: r), alias) == 0, "symlink \(alias)")
        }
        let target: String
        if aliased.contains(r) {
            target = remoteURL(for: r)
            aliased.remove(r)
        } else {
            target = alias
            aliased.insert(r)
        }
        figures.urlChanges += 1
        let set = docsync(r, ["config", "remote.url", target])
        lastRuns.append(LastRun(r: r, result: set, expected: [0], rules: [], synced: false))
        return
            "r\(r) config remote.url \(emptyDir ? "an empty folder" : "a missing path") → exit \(refused.exit) (refused: 1); "
            + "config remote.url \(target == alias ? "the symlink to the remote" : "back to the remote's own URL") → exit \(set.exit)"
    }

    // MARK: Plain git

    /// Someone edits a document with plain git on the remote (a `git clone`, a field
    /// changed, its changesetId left as it was, commit, push); then a replica syncs. That
    /// pull must give the new content a fresh changesetId (one changesetId names one
    /// content): `learnChangeset` checks every changesetId seen on replicas and the remote.
    /// `docsync revert` on the receive-only replica (issue 24): its local changes dropped,
    /// the synced versions back.
    func revert(_ r: Int) -> String? {
        guard model.receiveOnly.contains(r), !needsRecovery.contains(r) else { return nil }
        let result = docsync(r, ["revert"])
        let reverted = model.revert(r)
        // What revert records first and drops is no copy or recorded change any more.
        pendingCopies[r] = []
        pendingCopyOf[r] = [:]
        recordedUnsynced[r] = []
        figures.reverted += reverted.count
        lastRuns.append(
            LastRun(r: r, result: result, expected: [model.hasInvalid(r) ? 1 : 0], rules: [], synced: false))
        return "r\(r) revert (docs \(reverted.map(String.init).joined(separator: ","))) → exit \(result.exit)"
    }

    /// `docsync override` on the send-only replica (issue 24): of every held change, or of
    /// one document named by its path here (or the remote's, for a document deleted here);
    /// then its push, as a sync.
    func override(_ r: Int) -> String? {
        guard model.sendOnly.contains(r), !needsRecovery.contains(r) else { return nil }
        let held = model.heldDocs(r).sorted().filter { d in
            model.local[r][d]?.invalidBytes == nil && (model.local[r][d] != nil || model.base[r][d] != nil)
        }
        guard !held.isEmpty else { return nil }
        func path(_ d: Int) -> String? { model.local[r][d]?.placed.path ?? model.seenRemote[r][d]?.path }
        // One document, by a path no other held change is at (here or on the remote).
        let alone = held.filter { d in
            let p = path(d)
            return p != nil
                && !model.heldDocs(r).contains { o in
                    o != d && (model.local[r][o]?.placed.path == p || model.seenRemote[r][o]?.path == p)
                }
        }
        var args = ["override"]
        var only: Int? = nil
        if rng.chance(0.5), !alone.isEmpty {
            only = rng.pick(alone)
            args.append(path(only!)!)
        }
        let result = docsync(r, args)
        let overridden = model.override(r, only: only)
        figures.overridden += overridden.count
        return applySync(
            r, result, recovering: false,
            prefix:
                "r\(r) override \(only.map { "doc\($0) " } ?? "")(docs \(overridden.map(String.init).joined(separator: ",")))"
                + (result.exit == 0
                    ? "" : " [\(result.stderr.split(separator: "\n").prefix(3).joined(separator: " | "))]")
        )
    }

    func plainGitEdit() -> String? {
        guard git else { return nil }
        // The replica that syncs next applies and sends the version it re-stamps: not a
        // receive-only or send-only one, and a sparse one only for a document it holds.
        let free = (0..<3).filter {
            !needsRecovery.contains($0) && !model.receiveOnly.contains($0) && !model.sendOnly.contains($0)
        }
        guard !free.isEmpty else { return nil }
        let r = rng.pick(free)
        let docs = model.remote.keys.sorted().filter {
            model.local[r][$0]?.invalidBytes == nil && (!model.sparse.contains(r) || model.base[r][$0] != nil)
                // Not where a save is already dated right after the remote's version (from
                // a clock behind it): dated right after it too, the commit's version would
                // tie with that save, and the tie goes by the counters, the commit's taken
                // from its blob id (GIT-REMOTES.md), which the model does not follow
                // (daemon seed 34303, two clocks ahead). In that millisecond with any
                // counter: the blob's counter may be above it (daemon seed 36305, a
                // restore made in the millisecond after the remote's version).
                && !model.holdsMillisecond(of: $0, MC.Model.floored(after: model.remote[$0]!.version.tick))
        }
        guard !docs.isEmpty else { return nil }
        let doc = rng.pick(docs)
        let placed = model.remote[doc]!
        let field = rng.pick(MC.fieldNames.filter { placed.version.fields[$0] != nil })
        let old = placed.version.fields[field]!
        let new = value()
        let work = box.path("plain-git")
        try? FileManager.default.removeItem(atPath: work)
        let gitTool = { (args: [String], dir: String, env: [String: String]) in
            CLI.runTool("/usr/bin/git", args, in: dir, env: Reliability.gitEnv.merging(env) { _, b in b })
        }
        let cloned = gitTool(["clone", "-q", "-b", "main", remotePath, work], box.root, [:])
        guard cloned.exit == 0, let bytes = Files.bytes(work + "/" + placed.path),
            let edited = MC.Run.replacing(bytes, old, new)
        else {
            stepMismatches.append(
                Mismatch(
                    rules: [], changesDocuments: false,
                    text: "plain git clone of the remote failed or has no \(placed.path): \(cloned)"))
            return "plain git edit of doc\(doc) failed"
        }
        let keptCs = (JSONHelp.object(bytes)?["changesetId"] as? String) ?? "?"
        // The commit is made in a later second than every save so far (git's times are whole
        // seconds): whether the engine dates the new version by the commit or by the pull,
        // it is later than every save before it. Every changesetId issued so far is too,
        // without reading any replica's clock (the model reads no engine state): a save's id
        // is dated by its mtime, never later than now (SPEC rule 1), and a merge's by the
        // run that made it, and every run ended before `lastRunEndMs`. Where clocks are off,
        // the second is also out of every other clock's run spans (`ClockTimeline`), and the
        // commit is dated by it to the second, however long git takes.
        var second = (max(clockMs, lastRunEndMs) / 1000 + 1) * 1000
        if !model.skewMs.isEmpty {
            settleSpans()
            while timeline.wait(from: second, length: 0, skew: 0) > 0 { second += 1000 }
            timeline.record(second, second, skew: 0)
        }
        while nowMs() < second { usleep(2000) }
        let date = ["GIT_COMMITTER_DATE": "@\(second / 1000) +0000", "GIT_AUTHOR_DATE": "@\(second / 1000) +0000"]
        try! Data(edited).write(to: URL(fileURLWithPath: work + "/" + placed.path))
        let committed = gitTool(
            [
                "-c", "user.name=Plain Git", "-c", "user.email=plain@example.invalid", "commit", "-q", "-am",
                "edit \(placed.path) by hand"
            ], work, date)
        let pushed = gitTool(["push", "-q", "origin", "HEAD:main"], work, [:])
        try? FileManager.default.removeItem(atPath: work)
        guard committed.exit == 0, pushed.exit == 0 else {
            stepMismatches.append(
                Mismatch(
                    rules: [], changesDocuments: false, text: "plain git commit/push failed: \(committed) \(pushed)"))
            return "plain git edit of doc\(doc) failed"
        }
        clockMs = max(clockMs, nowMs())
        var fields = placed.version.fields
        fields[field] = new
        model.plainGitEdit(doc: doc, fields: fields, committedMs: second)
        if model.base[r][doc]?.version.id != placed.version.id {
            // The puller's last sync did not see the changesetId the commit kept.
            model.taint(doc, .plainGitEditUnseenChangeset)
        }
        figures.plainGitEdits += 1
        plainGitDocs.insert(doc)
        let result = docsync(r, ["sync"])
        let said = applySync(r, result, recovering: false, prefix: "r\(r) sync")
        lastRuns[lastRuns.count - 1].rules.insert(.plainGitIdentity)
        return
            "plain git: \(placed.path) (doc\(doc)) \(field)=\(new) (was \(old)), changesetId \(keptCs) kept, commit, push; then \(said)"
    }
}
