import ArgumentParser
import DocSyncKit

extension DocSync {
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "Show pending, unrecorded and conflicting changes, and the last sync.",
            discussion:
                "Changes nothing you sync; like git status, it may save what it read into .docsync/index (the stat cache), so the next run need not read those files again. Files that are not valid documents are listed with path:line:col and the reason, or path: /json/pointer: reason for a record that fails its JSON Schema (exit 1). Tracked documents the scan could not look at (a folder it cannot open, a symlink, which is never followed, a folder that became another tree, a path ignored after it was synced) are listed as not looked at, with the reason: they stay tracked and are never deleted (exit 1). \"Pending\" actions are recorded but not yet on the remote (on a receive-only replica, sync.mode, they are listed as not sent: they never go); on a send-only replica the remote's changes are listed as not applied, with the documents whose local changes wait for `docsync override`; \"unrecorded\" changes are on disk and will be recorded by the next push, pull or sync. A change says why where it is not obvious: a rename where the document was, a delete + create of one file that its refId was changed (a file whose refId was removed is a new version of its document), a deletion that it goes to the remote as a tombstone. Deletions that lost to an edit are listed with the command that deletes the document after all. Each list stops after 50 lines with how many more there are; --all lists everything."
        )
        @OptionGroup var global: GlobalOptions

        @Flag(
            name: .long,
            help:
                "List every change and conflict (without it, each list stops after \(Status.shownPerList) with how many more there are; --json lists every one)."
        )
        var all = false

        /// How many lines of each list are shown without --all: 5,000 unrecorded changes
        /// should not push the rest of the status off the screen.
        static let shownPerList = 50

        func run() throws {
            try global.withWorkspace(readOnly: true, baseOnDemand: true) { workspace in
                let status = try workspace.sync.status()
                // As text the problems are a section of the report (on stdout): printed on
                // stderr too, each one showed twice on a terminal. With --json they are in
                // the object, and stderr names them for whoever reads it.
                if global.json { for problem in status.problems { Output.problem(problem.message) } }
                for warning in status.warnings { Output.warning(warning) }
                // status works offline: the remote's replica records only when a line names another
                // replica (every conflict line does: it said ids where `conflicts` said names).
                let names = workspace.replicas.names(fromRemote: !status.conflicts.isEmpty)
                try global.printResult(
                    command: "status", StatusJSON(status: status, replicaName: names[status.replicaId])
                ) {
                    StatusText(status: status, workspace: workspace, names: names, all: all).print()
                }
                let unknown = status.unknown ?? []
                guard !status.problems.isEmpty || !unknown.isEmpty else { return }
                // The JSON object lists them; only the text ends with the count.
                if global.json { throw ExitCode.failure }
                if status.problems.isEmpty {
                    throw CommandFailure(
                        message:
                            "\(unknown.count) tracked document\(unknown.count == 1 ? "" : "s") could not be looked at",
                        code: .failure)
                }
                let n = max(status.invalidFiles.count, 1)
                throw CommandFailure(
                    message: n == 1 ? "1 file is not a valid document" : "\(n) files are not valid documents",
                    code: .failure)
            }
        }
    }
}

/// `docsync status` as text: the tree, its remote and last sync, then one section per
/// list that is not empty.
struct StatusText {
    var status: StatusReport
    var workspace: Workspace
    /// Replica names by id.
    var names: [String: String]
    /// --all: every line of each list.
    var all: Bool

    func print() {
        Output.line(
            "Tree:      \(status.root) (replica \(names[status.replicaId] ?? status.replicaId), id \(status.replicaId))"
        )
        Output.line("Remote:    \(status.remote ?? "none (set one with `docsync config remote.url PATH`)")")
        Output.line("Last sync: \(Output.time(status.lastSync))")
        let receiveOnly = status.syncMode == .receiveOnly
        if receiveOnly {
            Output.line("Mode:      receive-only (sync.mode): the remote's changes are applied, this tree's never sent")
        } else if status.syncMode == .sendOnly {
            Output.line("Mode:      send-only (sync.mode): this tree's changes are sent, the remote's never applied")
        }
        if let selection = status.selection {
            Output.line(
                "Sparse:    keeps only "
                    + (selection.isEmpty ? "nothing (an empty selection)" : selection.joined(separator: " "))
                    + " (docsync sparse)")
        }
        if let attempt = status.lastAttempt {
            Output.line(
                "Last sync attempt \(Output.time(attempt.time)) (\(attempt.command)): gave up for now: \(attempt.reason)"
            )
        }
        section(
            "Not valid documents, left untouched and not synced", status.problems.map(\.message),
            hint:
                "fix each file; it syncs again once it is a valid JSON object that satisfies its schema, if it has one"
        )
        section(
            "Not looked at (kept tracked, not deleted)",
            (status.unknown ?? []).map { "\($0.path): \($0.reason)\($0.waitingNote)" },
            hint:
                "make the folder readable, replace the symlink by the folder, or remove the .docsyncignore rule; `docsync rm PATH` deletes a document for good"
        )
        section(
            receiveOnly ? "Local changes not sent (receive-only)" : "Pending (recorded, not yet on the remote)",
            ChangeNotes.lines(for: status.pending, recorded: true))
        section("Unrecorded changes on disk", ChangeNotes.lines(for: status.unrecorded, recorded: false))
        section(
            "Remote changes not applied (send-only)", notAppliedLines,
            hint:
                "a local change to one of these waits too; `docsync override PATH` sends it over the remote's version, `docsync config sync.mode both` merges them on the next sync"
        )
        section(
            "Outside the selection, not synced", status.outsideSelection,
            hint:
                "files of no document this replica keeps; `docsync sparse add PATH` keeps that part here (they are then recorded and sent), or move them inside the selection"
        )
        printConflicts()
        section(
            "Waiting for a file to be valid again", status.waiting,
            hint:
                "a remote version arrived while the file was not valid (JSON, or its schema); it is merged with your fix on the next sync"
        )
        if status.pending.isEmpty && status.unrecorded.isEmpty && status.conflicts.isEmpty
            && status.problems.isEmpty && status.waiting.isEmpty && status.notApplied.isEmpty
            && (status.unknown ?? []).isEmpty
        {
            Output.line("Nothing to sync.")
        }
    }

    /// Each held remote change, and whether a local change of the document waits with it.
    private var notAppliedLines: [String] {
        let waitingHere = Set(status.pending.map(\.refId))
        return status.notApplied.map { change in
            let what =
                change.fromPath.map { "\(change.kind.rawValue.padding(7)) \(change.path) (from \($0))" }
                ?? "\(change.kind.rawValue.padding(7)) \(change.path)"
            return what + (waitingHere.contains(change.refId) ? "  (local changes wait: changed on both sides)" : "")
        }
    }

    /// Open collisions, then deletions that lost to an edit (each with the command that
    /// deletes the document after all).
    private func printConflicts() {
        section(
            "Conflicts, open", status.conflicts.filter { !$0.isDeletion }.map(collisionLine),
            hint:
                "the losing versions are kept in .docsync/conflicts/; `docsync conflicts` lists them, `docsync resolve DOC` settles one"
        )
        section(
            "Deletions that lost to an edit (the edit was kept)",
            status.conflicts.filter(\.isDeletion).map(lostDeletionLine),
            hint: "the deleted version is kept in .docsync/conflicts/")
    }

    private func collisionLine(_ record: ConflictStore.Record) -> String {
        let fields = record.fields.map { $0.isEmpty ? "" : " (fields: \($0.joined(separator: ", ")))" } ?? ""
        let sentence = workspace.conflicts.pointOfView(of: record).sentence(record) {
            $0 == status.replicaId ? "this replica" : names[$0] ?? $0
        }
        return "\(record.path)  \(sentence)\(fields)"
    }

    private func lostDeletionLine(_ record: ConflictStore.Record) -> String {
        let side = workspace.conflicts.sideHere(of: record)
        let deletedBy =
            (record.lostBy ?? record.replica).map { ReplicaLabel.text($0, names: names) } ?? "another replica"
        let who = side == .local ? "deleted here" : "deleted by \(deletedBy)"
        return
            "\(record.path)  \(who), edited \(side == .local ? "elsewhere" : "here"): kept version \(record.winner); "
            + "`docsync resolve \(record.path) --take \(side.rawValue)` deletes it after all"
    }

    private func section(_ title: String, _ lines: [String], hint: String? = nil) {
        guard !lines.isEmpty else { return }
        Output.line("\n\(title): \(lines.count)")
        let shown = all ? lines.count : min(lines.count, DocSync.Status.shownPerList)
        for line in lines.prefix(shown) { Output.line("  " + line) }
        if shown < lines.count { Output.line("  … and \(lines.count - shown) more (docsync status --all)") }
        if let hint { Output.line("  (\(hint))") }
    }
}
