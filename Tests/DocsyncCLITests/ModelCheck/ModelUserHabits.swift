// The model check's steps added for issue 42's second part, what people do that the
// first steps never did: remove a field (and add one back), save, rename or delete a file
// while a sync of that replica runs, save with an mtime in the past (`cp -p`, a restore
// from a backup) or in the future, and bring an earlier version back with
// `restore --at` (every version that reached the remote stays retrievable, gc or not).
// Each is checked against SyncModel.swift like every other step.

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension MC.Run {
    // MARK: Fields removed and added

    /// Removes one field from a document's file (one stays at least), as an editor would.
    func removeField(_ r: Int) -> String? {
        let docs = validDocs(r).filter { d in
            MC.topFields.filter { model.local[r][d]!.placed.version.fields[$0] != nil }.count >= 2
        }
        guard !docs.isEmpty else { return nil }
        let doc = rng.pick(docs)
        let entry = model.local[r][doc]!
        let field = rng.pick(MC.topFields.filter { entry.placed.version.fields[$0] != nil })
        let old = entry.placed.version.fields[field]!
        guard let bytes = replicas[r].bytes(entry.placed.path),
            let cut = Self.removingListed(bytes, "\"\(field)\": \"\(old)\"")
        else {
            return nil
        }
        var fields = entry.placed.version.fields
        fields[field] = nil
        let t = nextSaveMs(r)
        write(r, entry.placed.path, cut, style: rng.chance(0.5) ? .inPlace : .editorRename, mtime: t)
        model.save(r, doc: doc, path: entry.placed.path, fields: fields, mtime: t)
        noteSaved(r, doc, cut)
        return "r\(r) remove field \(field) from doc\(doc) \(entry.placed.path) (was \(old))"
    }

    /// Removes one element of the identity array `i` (SYNC.md, Arrays, rule 2).
    func removeElement(_ r: Int) -> String? {
        let docs = validDocs(r).filter { d in
            MC.elementIds.contains { model.local[r][d]!.placed.version.fields[MC.arrayField + "." + $0] != nil }
        }
        guard !docs.isEmpty else { return nil }
        let doc = rng.pick(docs)
        let entry = model.local[r][doc]!
        let id = rng.pick(MC.elementIds.filter { entry.placed.version.fields[MC.arrayField + "." + $0] != nil })
        let old = entry.placed.version.fields[MC.arrayField + "." + id]!
        // As the model and the engine both write an element; another layout skips the step.
        guard let bytes = replicas[r].bytes(entry.placed.path),
            let cut = Self.removingListed(bytes, "{\"id\": \"\(id)\", \"v\": \"\(old)\"}")
        else { return nil }
        var fields = entry.placed.version.fields
        fields[MC.arrayField + "." + id] = nil
        let t = nextSaveMs(r)
        write(r, entry.placed.path, cut, style: rng.chance(0.5) ? .inPlace : .editorRename, mtime: t)
        model.save(r, doc: doc, path: entry.placed.path, fields: fields, mtime: t)
        noteSaved(r, doc, cut)
        return "r\(r) remove element \(id) of i from doc\(doc) \(entry.placed.path) (was \(old))"
    }

    /// Adds a field the document lacks (first member of the object).
    func addField(_ r: Int) -> String? {
        let docs = validDocs(r).filter { d in
            MC.topFields.contains { model.local[r][d]!.placed.version.fields[$0] == nil }
        }
        guard !docs.isEmpty else { return nil }
        let doc = rng.pick(docs)
        let entry = model.local[r][doc]!
        let field = rng.pick(MC.topFields.filter { entry.placed.version.fields[$0] == nil })
        guard let bytes = replicas[r].bytes(entry.placed.path),
            let open = bytes.firstIndex(of: UInt8(ascii: "{"))
        else { return nil }
        let new = value()
        var added = bytes
        added.insert(contentsOf: Array("\n  \"\(field)\": \"\(new)\",".utf8), at: open + 1)
        var fields = entry.placed.version.fields
        fields[field] = new
        let t = nextSaveMs(r)
        write(r, entry.placed.path, added, style: .editorRename, mtime: t)
        model.save(r, doc: doc, path: entry.placed.path, fields: fields, mtime: t)
        noteSaved(r, doc, added)
        return "r\(r) add field \(field)=\(new) to doc\(doc) \(entry.placed.path)"
    }

    /// Adds an element the identity array `i` lacks, in `id` order. Why in order: every
    /// file keeps its elements sorted by `id`, which the model's fields cannot tell apart
    /// from another order, while the engine's versions can (an element moved is a change);
    /// a sequence merge of sorted lists stays sorted, which the comparison checks.
    func addElement(_ r: Int) -> String? {
        let docs = validDocs(r).filter { d in
            MC.elementIds.contains { model.local[r][d]!.placed.version.fields[MC.arrayField + "." + $0] == nil }
        }
        guard !docs.isEmpty else { return nil }
        let doc = rng.pick(docs)
        let entry = model.local[r][doc]!
        let id = rng.pick(MC.elementIds.filter { entry.placed.version.fields[MC.arrayField + "." + $0] == nil })
        let opening = "\"\(MC.arrayField)\": ["
        guard let bytes = replicas[r].bytes(entry.placed.path) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.components(separatedBy: opening).count == 2, let at = text.range(of: opening),
            let close = text[at.upperBound...].firstIndex(of: "]")
        else { return nil }
        let new = value()
        let element = "{\"id\": \"\(id)\", \"v\": \"\(new)\"}"
        let later = MC.elementIds.filter { $0 > id && entry.placed.version.fields[MC.arrayField + "." + $0] != nil }
        let edited: String
        if let next = later.first {
            // Before the next element, as the model and the engine both write one.
            let marker = "{\"id\": \"\(next)\""
            guard text.components(separatedBy: marker).count == 2, let before = text.range(of: marker) else {
                return nil
            }
            edited = String(text[..<before.lowerBound]) + element + ", " + String(text[before.lowerBound...])
        } else {
            let empty = text[at.upperBound..<close].allSatisfy(\.isWhitespace)
            edited = String(text[..<close]) + (empty ? "" : ", ") + element + String(text[close...])
        }
        let added = Array(edited.utf8)
        var fields = entry.placed.version.fields
        fields[MC.arrayField + "." + id] = new
        let t = nextSaveMs(r)
        write(r, entry.placed.path, added, style: .editorRename, mtime: t)
        model.save(r, doc: doc, path: entry.placed.path, fields: fields, mtime: t)
        noteSaved(r, doc, added)
        return "r\(r) add element \(id)=\(new) to i of doc\(doc) \(entry.placed.path)"
    }

    /// `bytes` without `item` (a member `"field": "value"` or an element of an array, found
    /// exactly once) and the comma that joined it to its neighbour.
    static func removingListed(_ bytes: [UInt8], _ item: String) -> [UInt8]? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.components(separatedBy: item).count == 2, let range = text.range(of: item) else { return nil }
        var start = range.lowerBound, end = range.upperBound
        // The comma before it, else the one after it (none: the only element).
        var before = start
        while before > text.startIndex, text[text.index(before: before)].isWhitespace {
            before = text.index(before: before)
        }
        if before > text.startIndex, text[text.index(before: before)] == "," {
            start = text.index(before: before)
        } else {
            var after = end
            while after < text.endIndex, text[after].isWhitespace { after = text.index(after: after) }
            if after < text.endIndex, text[after] == "," {
                end = text.index(after: after)
                // And the space after that comma, so "[x, y]" becomes "[y]".
                while end < text.endIndex, text[end] == " " { end = text.index(after: end) }
            } else if !(before > text.startIndex && text[text.index(before: before)] == "[") {
                return nil
            }
        }
        return Array((String(text[..<start]) + String(text[end...])).utf8)
    }

    /// One field of `doc`'s file on `r` set to a fresh value, worked out but not written:
    /// the field, its old and new values, the file's bytes after, the document's fields after.
    struct FieldEdit {
        var field: String
        var old: String
        var new: String
        var bytes: [UInt8]
        var fields: MC.Fields
    }

    func fieldEdit(_ r: Int, _ doc: Int) -> FieldEdit? {
        let entry = model.local[r][doc]!
        let field = rng.pick(MC.fieldNames.filter { entry.placed.version.fields[$0] != nil })
        let old = entry.placed.version.fields[field]!
        let new = value()
        guard let bytes = replicas[r].bytes(entry.placed.path), let edited = Self.replacing(bytes, old, new) else {
            return nil
        }
        var fields = entry.placed.version.fields
        fields[field] = new
        return FieldEdit(field: field, old: old, new: new, bytes: edited, fields: fields)
    }

    // MARK: Counters

    /// Adds 1–5 to the document's counter (`k`, declared with `merge.counters`).
    func count(_ r: Int) -> String? {
        let docs = validDocs(r).filter { model.local[r][$0]!.placed.version.fields[MC.counterField] != nil }
        guard !docs.isEmpty else { return nil }
        let doc = rng.pick(docs)
        let entry = model.local[r][doc]!
        guard let old = entry.placed.version.fields[MC.counterField].flatMap(Int.init),
            let bytes = replicas[r].bytes(entry.placed.path)
        else { return nil }
        let new = old + 1 + rng.int(5)
        let text = String(decoding: bytes, as: UTF8.self)
        let pattern = "\"\(MC.counterField)\"\\s*:\\s*-?[0-9]+"
        guard let range = text.range(of: pattern, options: .regularExpression) else { return nil }
        let counted = Array(text.replacingCharacters(in: range, with: "\"\(MC.counterField)\": \(new)").utf8)
        var fields = entry.placed.version.fields
        fields[MC.counterField] = String(new)
        let t = nextSaveMs(r)
        write(r, entry.placed.path, counted, style: rng.chance(0.5) ? .inPlace : .editorRename, mtime: t)
        model.save(r, doc: doc, path: entry.placed.path, fields: fields, mtime: t)
        noteSaved(r, doc, counted)
        return "r\(r) count doc\(doc) \(entry.placed.path) k=\(new) (was \(old))"
    }

    // MARK: Edits while a sync runs

    /// A file saved, renamed or deleted while `docsync sync` of the same replica runs (at a
    /// random moment within about how long a sync takes here: before its scan, between
    /// scan and stamp, during its pull or push, or just after it).
    /// SPEC: nothing the user saved is lost; the run behaves as if the edit came before
    /// it or after it, whichever it saw. The model tries both orders.
    func editDuringSync(_ r: Int) -> String? {
        guard !needsRecovery.contains(r) else { return nil }
        let docs = validDocs(r).filter { d in
            guard let b = model.base[r][d], let l = model.local[r][d], let rm = model.remote[d] else { return false }
            return b.path == l.placed.path && rm.path == b.path && !pendingCopies[r].contains(d)
                && pendingCopyOf[r][d] == nil && !regeneratedUnsynced[r].contains(d)
                && !recordedUnsynced[r].contains(d)
        }
        guard !docs.isEmpty else { return nil }
        let doc = rng.pick(docs)
        let entry = model.local[r][doc]!
        let path = entry.placed.path
        let kind = quietElsewhere(r, doc) ? rng.int(4) : 0
        let delay = rng.int(max(10, min(150, Int(syncMs * 1.5))))
        var what = ""
        var during: () -> Void = {}
        var change: (inout MC.Model) -> Void = { _ in }
        switch kind {
        case 0, 1:
            guard let e = fieldEdit(r, doc) else { return nil }
            let (field, old, new, edited, fields) = (e.field, e.old, e.new, e.bytes, e.fields)
            // Saved as editors that rename do: a save in place (truncate, then write) may be
            // read half-written by the run, which then reports the file invalid for that run
            // (SYNC.md), a third outcome the model does not hold.
            let style: WriteStyle = .editorRename
            var t: Int64 = 0
            during = {
                t = self.nextSaveMs(r)
                self.write(r, path, edited, style: style, mtime: t)
            }
            change = { m in m.save(r, doc: doc, path: path, fields: fields, mtime: t) }
            what = "editor-save doc\(doc) \(path) \(field)=\(new) (was \(old))"
        case 2:
            let to = renameTarget(doc)
            during = {
                let full = self.replicas[r].path(to)
                try? FileManager.default.createDirectory(
                    atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                precondition(rename(self.replicas[r].path(path), full) == 0)
            }
            change = { m in m.local[r][doc]?.placed.path = to }
            what = "mv \(path) \(to) (doc\(doc))"
        default:
            during = { self.replicas[r].remove(path) }
            change = { m in m.local[r][doc] = nil }
            what = "rm \(path) (doc\(doc))"
        }
        figures.editsDuringRuns += 1
        let result = launch([(r, ["sync"])], delayMs: delay, during: during)[0]
        let runEnd = nowMs()
        var before = model
        change(&before)
        let early = before.sync(r)
        var after = model
        let late = after.sync(r)
        change(&after)
        after.unseenEdits[r].insert(doc)
        let alternatives = [
            Alternative(label: "the edit first", model: before, syncs: [(r, result, early, false, [])]),
            Alternative(label: "the sync first", model: after, syncs: [(r, result, late, false, [])])
        ]
        let (chosen, matching) = choose(alternatives)
        if chosen == 0 {
            figures.editsSeenByTheRun += 1
        }
        // A save the run saw is dated by its mtime, but never before an id the run's clock
        // had already issued (SPEC rule 1: one clock per replica, its ids only grow): so
        // between the save and the run's end.
        if kind < 2, let saved = model.local[r][doc]?.placed.version, saved.author == r, let t = saved.mtimeMs {
            savedAhead[saved.id] = (t, runEnd + (model.skewMs[r] ?? 0))
        }
        return
            "r\(r) sync while \(what) after \(delay) ms → exit \(result.exit); model order \(alternatives[chosen].label) (\(matching) of 2 match)"
    }

    // MARK: Clocks

    /// Half the seeds (the fixed seeds of the plain and send-only classes among them) run
    /// one of r0–r2 on a machine whose clock is off, either way: half of them by 3 to 60
    /// seconds, so that its versions and the others' made seconds apart sort in either
    /// order (the model orders them by their dates, `ClockTimeline`), half by 15 minutes to
    /// a day; and half of those a second one too, off by another amount at least 5 seconds
    /// (15 minutes) from the first (drawn from a generator of their own, so the other
    /// seeds draw as before):
    /// every docsync process there runs under libfaketime, and every file saved there is
    /// dated by that clock. SPEC rule 1 then orders its versions: a clock ahead wins every
    /// collision with a save made elsewhere within its lead; a save on a clock behind, or
    /// of a version from a clock ahead, sorts right after the version it was edited from;
    /// what docsync makes sorts after every id the replica issued or saw. Two saves dated
    /// right after the same version would tie (the replica ids decide): the driver edits
    /// another document then (`saveWouldTie`).
    func chooseClockSkew() {
        var draw = MC.SplitMix(state: seed ^ 0xC10C_0FF5_E7ED_0042)
        guard (seed / 8 + seed / 2) % 2 == 0, Prerequisite.faketime.runsHere,
            ProcessInfo.processInfo.environment["DOCSYNC_MODEL_CLOCK_SKEW"] != "off"
        else { return }
        let seconds = draw.chance(0.5)
        func drawSkew() -> (ms: Int64, label: String) {
            if seconds {
                let ms = Int64(3_000 + draw.int(57_000))
                return (draw.chance(0.5) ? ms : -ms, "\(ms / 1000)s")
            }
            var minutes = 15 + draw.int(24 * 60 - 15)
            // Not near the hour before the run that first contact dates its older files by:
            // those and this clock's saves would then be ordered by seconds the model does not follow.
            if (45...75).contains(minutes) { minutes += 40 }
            let ms = Int64(minutes) * 60_000 + Int64(draw.int(60_000))
            return (draw.chance(0.5) ? ms : -ms, "\(minutes)min")
        }
        let r = draw.int(3)
        let first = drawSkew()
        var chosen = [(r, first)]
        // The second clock is drawn after the first, so a seed's first clock stays as it was.
        if draw.chance(0.5) {
            var second = drawSkew()
            // Apart by more than a run lasts, so that two runs at once on the two date what
            // they make apart.
            while abs(second.ms - first.ms) < (seconds ? 5_000 : 15 * 60_000) { second = drawSkew() }
            chosen.append(((r + 1 + draw.int(2)) % 3, second))
        }
        for (replica, skew) in chosen {
            model.skewMs[replica] = skew.ms
            CLI.setClockOffset(skew.ms, forFolder: replicas[replica].root)
        }
        figures.clockSkew = chosen.sorted { $0.0 < $1.0 }.map {
            "r\($0.0):\($0.1.ms > 0 ? "+" : "-")\($0.1.label)"
        }.joined(separator: ",")
    }

    /// Two machines save one document in the same millisecond: another replica edits one
    /// field, and `r` another, its file dated by that save's mtime to the millisecond. Both
    /// saves must survive, merged field by field, under two ids. Which of the two is
    /// "later" (SYNC.md: the ids' counter, then replica id) is left unobserved: not the same
    /// field, not a document under `lww`, no array element. Why: the counter depends on
    /// what the replica's clock had seen when it recorded the save (one that had already
    /// seen the other's id, or whose clock a killed run had moved past it, takes a counter
    /// from its past sequence and sorts after), which only the engine knows (drive seeds
    /// 32406, 32407, 32409; daemon seed 20261122).
    func sameMillisecondSave(_ r: Int) -> String? {
        guard model.skewMs.isEmpty, !needsRecovery.contains(r) else { return nil }
        func eligible(_ doc: Int) -> Bool {
            guard let mine = model.local[r][doc], mine.placed.path == model.base[r][doc]?.path else { return false }
            return !recordedUnsynced[r].contains(doc) && !regeneratedUnsynced[r].contains(doc)
                && !pendingCopies[r].contains(doc) && pendingCopyOf[r][doc] == nil
                && backdatedUnsynced[r]?.contains(doc) != true
        }
        let mineDocs = validDocs(r).filter(eligible).sorted()
        for other in (0..<3).filter({ $0 != r && !needsRecovery.contains($0) }) {
            for doc in mineDocs {
                guard let entry = model.local[other][doc], entry.invalidBytes == nil,
                    entry.placed.path == model.local[r][doc]?.placed.path, validDocs(other).contains(doc),
                    model.base[other][doc] == model.base[r][doc],
                    // Nothing else changed on either side: the two saves are all that collide.
                    entry.placed == model.base[other][doc], model.local[r][doc]?.placed == model.base[r][doc],
                    !(model.lwwNotes && MC.Model.lww(entry.placed.path)),
                    // Its save first: a field `r` will not touch (the last top field).
                    let field = MC.topFields.last(where: { entry.placed.version.fields[$0] != nil }),
                    let made = setField(other, doc, entry, field, value(), style: .inPlace, verb: "edit")
                else { continue }
                guard let theirs = model.local[other][doc]?.placed.version, let saved = theirs.mtimeMs,
                    let parent = model.tracked(r, doc), MC.Model.floored(after: parent.tick) < theirs.tick,
                    let mine = model.local[r][doc]
                else { return made }
                let changed = Set(
                    MC.fieldNames.filter { theirs.fields[$0] != model.base[other][doc]?.version.fields[$0] })
                let later = replicaIds[r] > replicaIds[other]
                let tick = theirs.tick + (later ? 1 : -1)
                guard
                    let field = MC.topFields.first(where: {
                        !changed.contains($0) && mine.placed.version.fields[$0] != nil
                    }),
                    let old = mine.placed.version.fields[field], !model.holdsTick(of: doc, tick),
                    let bytes = replicas[r].bytes(mine.placed.path)
                else { return made }
                let new = value()
                guard let edited = Self.replacing(bytes, old, new) else { return made }
                var fields = mine.placed.version.fields
                fields[field] = new
                write(r, mine.placed.path, edited, style: .inPlace, mtime: saved)
                model.save(r, doc: doc, path: mine.placed.path, fields: fields, mtime: saved, tick: tick)
                noteSaved(r, doc, edited)
                sameMillisecondTicks[doc] = (theirs.tick, tick)
                figures.sameMillisecondSaves += 1
                return made + "; "
                    + "r\(r) edit doc\(doc) \(mine.placed.path) \(field)=\(new) (was \(old)) in the millisecond of r\(other)'s save (\(later ? "later" : "earlier") by replica id)"
            }
        }
        return nil
    }

    /// A save whose mtime lies hours in the past (a file brought back with `cp -p`, a
    /// restore from a backup, a clock behind). SPEC rule 1: the physical part comes from
    /// the mtime and always sorts after the version it was edited from, so it sorts right
    /// after the base here: any version made since that base is later.
    func backdatedSave(_ r: Int) -> String? {
        // Not on a machine whose clock is off: its own dates are the hazard there.
        guard model.skewMs[r] == nil else { return nil }
        let docs = validDocs(r).filter { d in
            guard let b = model.base[r][d], model.local[r][d]!.placed.path == b.path else { return false }
            // Nor over a version a clock behind made: hours back may still be later than it.
            if (model.skewMs[b.version.author] ?? 0) < 0 { return false }
            return !recordedUnsynced[r].contains(d) && !regeneratedUnsynced[r].contains(d)
                && !pendingCopies[r].contains(d) && pendingCopyOf[r][d] == nil
                // Two backdated saves of one version would tie (then the replica ids decide),
                // also when the other one was synced already.
                && !backdatedUnsynced.contains { $0.key != r && $0.value.contains(d) }
                && !model.holdsTick(of: d, MC.Model.floored(after: b.version.tick))
        }
        guard !docs.isEmpty else { return nil }
        let doc = rng.pick(docs)
        let entry = model.local[r][doc]!
        guard let e = fieldEdit(r, doc) else { return nil }
        let (field, new, edited, fields) = (e.field, e.new, e.bytes, e.fields)
        let hours = 2 + rng.int(22)
        let mtime = nowMs() - Int64(hours) * 3_600_000 - Int64(rng.int(3_600_000))
        write(r, entry.placed.path, edited, style: rng.chance(0.5) ? .inPlace : .editorRename, mtime: mtime)
        let parent = model.base[r][doc]!.version
        model.save(
            r, doc: doc, path: entry.placed.path, fields: fields, mtime: mtime,
            tick: MC.Model.floored(after: parent.tick))
        if let saved = model.local[r][doc]?.placed.version, saved.id != parent.id {
            backdatedParent[saved.id] = parent.id
        }
        model.taint(doc, .clockHazard)
        noteSaved(r, doc, edited)
        backdatedUnsynced[r, default: []].insert(doc)
        figures.clockSaves += 1
        return "r\(r) save doc\(doc) \(entry.placed.path) \(field)=\(new) with its mtime \(hours) h in the past"
    }

    /// A save whose mtime lies in the future (a clock ahead, a file from such a machine),
    /// then a sync. SPEC rule 1: "never later than now": the version is dated when the sync
    /// records it, so it does not win every collision for the next day.
    func futureSave(_ r: Int) -> String? {
        guard !needsRecovery.contains(r), model.skewMs[r] == nil else { return nil }
        // Not a save dated by the version it was edited from (from a clock ahead): the
        // check below is of the save's own time.
        let docs = validDocs(r).filter { d in
            !recordedUnsynced[r].contains(d) && !regeneratedUnsynced[r].contains(d) && !model.saveIsFloored(r, d)
        }
        guard !docs.isEmpty else { return nil }
        let doc = rng.pick(docs)
        let entry = model.local[r][doc]!
        guard let e = fieldEdit(r, doc) else { return nil }
        let (field, new, edited, fields) = (e.field, e.new, e.bytes, e.fields)
        let hours = 1 + rng.int(24)
        let t = nextSaveMs(r)
        write(r, entry.placed.path, edited, style: .inPlace, mtime: t + Int64(hours) * 3_600_000)
        model.save(r, doc: doc, path: entry.placed.path, fields: fields, mtime: t)
        model.taint(doc, .clockHazard)
        noteSaved(r, doc, edited)
        figures.clockSaves += 1
        let result = docsync(r, ["sync"])
        if let saved = model.local[r][doc]?.placed.version, saved.author == r {
            savedAhead[saved.id] = (t, lastRunEndMs)
        }
        return applySync(
            r, result, recovering: false,
            prefix: "r\(r) save doc\(doc) \(entry.placed.path) \(field)=\(new) with its mtime \(hours) h ahead, sync")
    }

    // MARK: History

    /// `docsync restore DOC --at ID` of a version that once reached the remote: it must
    /// still be there (gc or not), and comes back as a new local change with that content.
    func restoreEarlier(_ r: Int) -> String? {
        // restore records the tree first; an invalid file there would make it exit 1.
        guard !needsRecovery.contains(r), !model.hasInvalid(r) else { return nil }
        let docs = validDocs(r).filter { d in
            // Not after a plain-git edit that kept a changesetId: that id then names two
            // contents, and `--at` rightly asks for a commit id.
            guard let b = model.base[r][d], let l = model.local[r][d], l.placed == b,
                let refId = refIds[d], !refId.isEmpty, !plainGitDocs.contains(d)
            else { return false }
            return !pendingCopies[r].contains(d) && pendingCopyOf[r][d] == nil && !recordedUnsynced[r].contains(d)
                && published[d].map { versions in
                    versions.values.contains { $0.fields != l.placed.version.fields && versionCs[$0.id] != nil }
                } ?? false
        }
        guard !docs.isEmpty else { return nil }
        let doc = rng.pick(docs)
        let entry = model.local[r][doc]!
        let earlier = published[doc]!.values.filter {
            $0.fields != entry.placed.version.fields && versionCs[$0.id] != nil
        }.sorted { $0.id < $1.id }
        let version = rng.pick(earlier)
        let cs = versionCs[version.id]!
        let result = docsync(r, ["restore", refIds[doc]!, "--at", cs])
        figures.restores += 1
        guard result.exit == 0 else {
            stepMismatches.append(
                Mismatch(
                    rules: [], changesDocuments: false,
                    text:
                        "r\(r): restore of doc\(doc)'s version \(version) (\(cs)), which reached the remote, exited \(result.exit): \(result.stderr.prefix(600))"
                ))
            return "r\(r) restore doc\(doc) --at \(cs) → exit \(result.exit)"
        }
        for d in Set(model.local[r].keys).union(model.base[r].keys)
        where model.local[r][d]?.placed != model.base[r][d] {
            recordedUnsynced[r].insert(d)
            model.recorded[r][d] = .some(model.local[r][d]?.placed)
        }
        model.save(r, doc: doc, path: entry.placed.path, fields: version.fields, mtime: nil, madeByDocsync: true)
        recordedUnsynced[r].insert(doc)
        // Journaled: a save of it now is edited from the restored version, and dated after
        // it (drive seed 32404: on a clock behind, a save right after a restore sorted after
        // the restore's id, not the base's).
        model.recorded[r][doc] = .some(model.local[r][doc]?.placed)
        // The restore wrote the file: the model's clock moves past it.
        clockMs = max(clockMs, lastRunEndMs)
        return "r\(r) restore doc\(doc) \(entry.placed.path) --at \(cs) (\(version)) → exit 0"
    }

    /// Every version on the model's remote after a step: what `restore --at` must find later.
    func notePublished() {
        for (doc, placed) in model.remote where placed.version.author != MC.Model.plainGit {
            published[doc, default: [:]][placed.version.id] = placed.version
        }
    }

    // MARK: Conflict copies byte for byte

    /// The bytes a user save wrote, by version, for the stored-copy check.
    func noteSaved(_ r: Int, _ doc: Int, _ bytes: [UInt8]) {
        guard let v = model.local[r][doc]?.placed.version, v.author == r else { return }
        savedBytes[v.id] = bytes
    }

    /// `bytes` without the `refId` and `changesetId` members (the ids a sync stamps in).
    static func withoutIds(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        let cut = idMember.stringByReplacingMatches(
            in: text, range: NSRange(text.startIndex..., in: text), withTemplate: "")
        return trailingComma.stringByReplacingMatches(
            in: cut, range: NSRange(cut.startIndex..., in: cut), withTemplate: "}")
    }

    private static let idMember = try! NSRegularExpression(pattern: #""(refId|changesetId)"\s*:\s*"[^"]*"\s*,?\s*"#)
    private static let trailingComma = try! NSRegularExpression(pattern: #",\s*\}"#)
}
