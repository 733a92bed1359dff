import ArgumentParser
import DocSyncKit
import Foundation

/// What the commands that talk to the remote take besides the global options.
protocol RemoteFlags: ParsableArguments {
    var dryRun: Bool { get }
    var force: Bool { get }
}

extension RemoteFlags {
    var options: SyncOptions { SyncOptions(dryRun: dryRun, force: force) }
}

/// Options of push and sync.
struct SyncFlags: RemoteFlags {
    @Flag(name: .long, help: "Show what would happen; change nothing, locally or on the remote.")
    var dryRun = false

    @Flag(name: .long, help: "Allow a push that deletes more than push.maxDeleteShare of the remote's documents.")
    var force = false
}

/// Options of pull: the same flags, with help that speaks of what a pull does.
struct PullFlags: RemoteFlags {
    @Flag(name: .long, help: "Show what would be pulled; change nothing, locally or on the remote.")
    var dryRun = false

    // Accepted so that scripts can give pull, push and sync the same flags.
    @Flag(
        name: .long,
        help:
            "No effect on pull: a pull deletes nothing on the remote, so the max-delete guard (push.maxDeleteShare) never stops it."
    )
    var force = false
}

/// The exit codes push, pull and sync add to 0, 1 and 2, for their --help.
let remoteExitStatusHelp = """
    Exits 3 when conflicts were recorded (the losing versions are kept; see `docsync conflicts`), \
    75 (try again later) when the remote is unreachable or busy or another run holds the tree; \
    local changes stay recorded and are sent next time.
    """

/// push, pull and sync: one command per direction, the same run.
protocol RemoteCommand: ParsableCommand {
    associatedtype Flags: RemoteFlags
    var global: GlobalOptions { get }
    var flags: Flags { get }
    static var direction: SyncService.Direction { get }
}

extension SyncService.Direction {
    /// What the direction's command is called, the verb of its summary line, and what its
    /// --help says before the exit codes the three share.
    fileprivate var command: (name: String, verb: String, abstract: String, discussion: String?) {
        switch self {
        case .push:
            return (
                "push", "Pushed", "Record local changes and send them to the remote.",
                "If the remote changed since the last sync, its changes are pulled and reconciled first: a push never overwrites a version it has not seen."
            )
        case .pull:
            return (
                "pull", "Pulled", "Record local changes and bring in the remote's changes.",
                "Local edits are journaled first, so a conflicting remote version never overwrites them: the losing version is kept under .docsync/conflicts/."
            )
        case .both:
            return ("sync", "Synced", "Pull, reconcile and push: what cron runs.", nil)
        }
    }
}

extension RemoteCommand {
    static var configuration: CommandConfiguration {
        let command = direction.command
        return CommandConfiguration(
            commandName: command.name, abstract: command.abstract,
            discussion: command.discussion.map { $0 + "\n\n" + remoteExitStatusHelp } ?? remoteExitStatusHelp)
    }

    func run() throws {
        try global.withWorkspace(readOnly: flags.dryRun, baseOnDemand: true) { workspace in
            let view = ProgressView(global: global)
            workspace.progress = view.handler
            let report: SyncReport
            do {
                report = try workspace.sync.run(Self.direction, options: flags.options)
                view.clear()
            } catch {
                view.clear()
                throw error
            }
            // The remote's replica names only when a line names another replica.
            let names = workspace.replicas.names(fromRemote: report.conflicts.contains { $0.recordedBy != nil })
            try SyncPrinter(global: global, streamed: view.streamed, replicaNames: names)
                .finish(report, verb: Self.direction.command.verb, command: Self._commandName)
        }
    }
}

extension DocSync {
    struct Push: RemoteCommand {
        static let direction = SyncService.Direction.push
        @OptionGroup var global: GlobalOptions
        @OptionGroup var flags: SyncFlags
    }

    struct Pull: RemoteCommand {
        static let direction = SyncService.Direction.pull
        @OptionGroup var global: GlobalOptions
        @OptionGroup var flags: PullFlags
    }

    struct SyncCommand: RemoteCommand {
        static let direction = SyncService.Direction.both
        @OptionGroup var global: GlobalOptions
        @OptionGroup var flags: SyncFlags
    }

    struct Restore: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "restore",
            abstract: "Bring back earlier versions of documents as new local changes.",
            discussion:
                "The version is found by changesetId (or, on a git remote, commit id), or a prefix of either, in this replica's journal or the remote's history (see `docsync log DOC`); a prefix that matches several versions is refused and the candidates listed. Without --at, a document in the tree gets its last synced version back (undoing local edits), a deleted one its last live version. --deleted brings back every document deleted here that the remote still has: what a push refused by push.maxDeleteShare would have deleted. Whatever is on disk is recorded first, so nothing is lost; each restored version gets a new changesetId (printed) and is pushed by the next push or sync."
        )
        @OptionGroup var global: GlobalOptions

        @Option(
            help: ArgumentHelp(
                "The version: a changesetId, a commit id, or a prefix (one document only; a prefix matching several versions is refused).",
                valueName: "ID"))
        var at: String?

        @Flag(
            name: .long,
            help:
                "Also restore every document deleted here whose deletion is not on the remote yet (what a push would delete)."
        )
        var deleted = false

        @Flag(name: .long, help: "Show what would be restored; change nothing.")
        var dryRun = false

        @Argument(help: "The documents: paths or refIds (deleted ones too).")
        var documents: [String] = []

        func validate() throws {
            if documents.isEmpty && !deleted { throw ValidationError("Give a document to restore, or --deleted.") }
            if at != nil && (documents.count != 1 || deleted) {
                throw ValidationError("--at names a version of one document: give exactly one.")
            }
        }

        func run() throws {
            try global.withChange(dryRun: dryRun, verb: "Restored", command: "restore") { workspace in
                try workspace.history.restore(
                    documents, relativeTo: global.workingDirectory, at: at, deleted: deleted, dryRun: dryRun)
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rm",
            abstract: "Delete documents and record the deletions.",
            discussion:
                "The deletions travel as tombstones on the next push. Deleting a file with plain rm is recorded the same way on the next run."
        )
        @OptionGroup var global: GlobalOptions

        @Flag(name: .long, help: "Show what would be deleted; delete nothing.")
        var dryRun = false

        @Argument(help: "Documents to delete.")
        var paths: [String]

        func run() throws {
            try global.withChange(dryRun: dryRun, verb: "Removed", command: "rm") { workspace in
                try workspace.editing.remove(paths: paths, relativeTo: global.workingDirectory, dryRun: dryRun)
            }
        }
    }
}

extension GlobalOptions {
    /// A command that changes documents and reports like a sync (restore, rm, resolve):
    /// `change` runs on the workspace (read-only for a dry run); its report is printed and
    /// gives the exit code.
    func withChange(
        dryRun: Bool, verb: String, command: String, _ change: (Workspace) throws -> SyncReport
    ) throws {
        try withWorkspace(readOnly: dryRun) { workspace in
            try SyncPrinter(global: self).finish(try change(workspace), verb: verb, command: command)
        }
    }
}

/// Prints a SyncReport and turns it into the exit code.
struct SyncPrinter {
    var global: GlobalOptions
    /// Lines a ProgressView already printed as they happened.
    var streamed: Set<String> = []
    /// Names for the replicas lines mention, by id (see ReplicaLabel).
    var replicaNames: [String: String] = [:]

    /// `pull    create  a.json  (from b.json)`.
    static func changeLine(verb: String, _ c: ChangeSummary, tag: String = "") -> String {
        "\(tag)\(verb.padding(6))  \(c.kind.rawValue.padding(6))  \(c.path)"
            + (c.fromPath.map { "  (from \($0))" } ?? "")
    }

    func finish(_ report: SyncReport, verb: String, command: String, extraLine: String? = nil) throws {
        try finish(report, verb: verb, command: command, extraLine: extraLine, extra: NoFields())
    }

    /// `extra`: fields the command adds to the report's `--json` object.
    func finish<Extra: Encodable>(
        _ report: SyncReport, verb: String, command: String, extraLine: String? = nil, extra: Extra
    ) throws {
        for problem in report.problems { Output.problem(problem.message) }
        for unknown in report.unknown ?? [] { Output.problem(unknown.message) }
        for warning in report.warnings { Output.warning(warning) }
        try global.printResult(command: command, WithFields(base: SyncReportJSON(report: report), extra: extra)) {
            printText(report, verb: verb, command: command, extraLine: extraLine)
        }
        if !report.conflicts.isEmpty && global.quiet {
            // Even a quiet cron run says this, so the mail shows it.
            Output.writeStderr("docsync: \(report.conflicts.count) conflict(s) recorded; see `docsync status`\n")
        }
        if let refused = report.refusedPush {
            throw CommandFailure(
                message:
                    "this push would delete \(refused.count) of the remote's \(refused.total) documents (more than \(Int(refused.maxDeleteShare * 100))%, push.maxDeleteShare); nothing was sent. "
                    + "Check the tree; `\(refused.restoreCommand)` brings them back, `docsync \(command) --force` deletes them",
                code: .failure, errorCode: "too-many-deletes")
        }
        if let unreachable = report.remoteUnreachable {
            // Main keeps the reason for `status`; under --quiet it prints nothing.
            throw CommandFailure(message: unreachable, code: ExitStatus.tempFail)
        }
        if !report.problems.isEmpty {
            // Problems that are not about one file (a refused write) count one each.
            let n = report.invalidFiles.count + report.problems.filter { $0.invalidFile == nil }.count
            // None of them a file here that is not valid (a remote document too large to
            // read, a refused write): not called invalid documents.
            throw CommandFailure(
                message: report.invalidFiles.isEmpty
                    ? "\(n) file\(n == 1 ? "" : "s") could not be synced (said above); everything else was processed"
                    : n == 1
                        ? "1 file is not a valid document and was left untouched; everything else was processed"
                        : "\(n) files are not valid documents and were left untouched; everything else was processed",
                code: .failure)
        }
        if let unknown = report.unknown, !unknown.isEmpty {
            throw CommandFailure(
                message: "\(unknown.count) tracked document\(unknown.count == 1 ? "" : "s") could not be looked at "
                    + "and \(unknown.count == 1 ? "was" : "were") kept, not deleted (see above); everything else was processed",
                code: .failure)
        }
        if !report.conflicts.isEmpty && !report.dryRun { throw ExitStatus.conflicts }
    }

    /// The report as text: one line per change, conflict, note, then the summary.
    private func printText(_ report: SyncReport, verb: String, command: String, extraLine: String?) {
        let tag = report.dryRun ? "would " : ""
        for c in report.recorded {
            Output.detail(
                "\(tag)record  \(c.kind.rawValue.padding(6))  \(c.path)"
                    + (c.fromPath.map { "  (from \($0))" } ?? ""))
        }
        for c in report.pulled where !streamed.contains(ProgressView.key("pull", c)) {
            Output.line(Self.changeLine(verb: "pull", c, tag: tag))
        }
        for c in report.pushed where !streamed.contains(ProgressView.key("push", c)) {
            Output.line(Self.changeLine(verb: "push", c, tag: tag))
        }
        for c in report.reverted ?? [] { Output.line(Self.changeLine(verb: "revert", c, tag: tag)) }
        for c in report.overridden ?? [] { Output.line(Self.changeLine(verb: "override", c, tag: tag)) }
        for c in report.conflicts { Output.line(conflictLine(c, tag: tag, dryRun: report.dryRun)) }
        for r in report.restored ?? [] {
            Output.line(
                "\(tag)restore \(r.path): version \(r.version) (from the \(r.source == "remote" ? "remote" : "journal"))"
                    + (r.changesetId.map { ", now \($0)" } ?? ""))
        }
        for path in report.leftSelection ?? [] {
            Output.line("\(tag)leave   \(path)  (outside the selection; kept on the remote)")
        }
        for n in report.notices { Output.line("note            \(n)") }
        for w in report.waiting {
            Output.line("waiting         \(w) (merged with the file once it is valid again)")
        }
        var parts = [
            "\(report.recorded.count) recorded", "\(report.pulled.count) pulled", "\(report.pushed.count) pushed"
        ]
        if !report.conflicts.isEmpty {
            parts.append("\(report.conflicts.count) conflict\(report.conflicts.count == 1 ? "" : "s")")
        }
        let skipped = max(report.invalidFiles.count, report.problems.count - report.invalidFiles.count)
        if !report.problems.isEmpty { parts.append("\(skipped) file\(skipped == 1 ? "" : "s") skipped") }
        if let reverted = report.reverted { parts.append("\(reverted.count) reverted") }
        if let overridden = report.overridden { parts.append("\(overridden.count) overridden") }
        if let pending = report.pendingSummary { parts.append(pending) }
        if let held = report.notAppliedSummary { parts.append(held) }
        if let refused = report.refusedPush { Self.printRefused(refused, command: command) }
        if report.remoteUnreachable != nil {
            Output.line(
                "Remote unreachable: \(report.recorded.count) change(s) recorded, \(report.pendingAfter) document(s) pending; "
                    + (report.syncMode == .receiveOnly
                        ? "they stay here (receive-only)" : "they will be sent on the next run"))
        } else {
            Output.line(
                (report.dryRun ? "Dry run: " : "") + "\(verb): " + parts.joined(separator: ", ")
                    + (extraLine.map { " " + $0 } ?? ""))
        }
    }

    /// One conflict of the report: kept and stored, or, heard from the replica that
    /// recorded it, which version of this replica's lost.
    private func conflictLine(_ c: ConflictSummary, tag: String, dryRun: Bool) -> String {
        let fields = c.fields.map { $0.isEmpty ? "" : " (fields \($0.joined(separator: ", ")))" } ?? ""
        if let by = c.recordedBy {
            let what = c.stored.isDeletion ? "your deletion" : "your version \(c.storedChangesetId)"
            return
                "conflict        \(c.path)\(fields): \(what) lost to \(c.keptChangesetId) at replica \(ReplicaLabel.text(by, names: replicaNames)) (kept in \(c.file ?? "the conflict store"))"
        }
        return
            "\(tag)conflict  \(dryRun ? "" : "      ")\(c.path)\(fields): kept \(c.kept.rawValue) \(c.keptChangesetId), \(c.stored.rawValue) version \(c.storedChangesetId) stored"
            + (c.file.map { " in \($0)" } ?? "")
    }

    /// A push the delete guard refused: what it would have deleted, and the two ways on.
    private static func printRefused(_ refused: RefusedPush, command: String) {
        Output.line(
            "refused push: it would delete \(refused.count) of the remote's \(refused.total) documents (push.maxDeleteShare \(refused.maxDeleteShare)); nothing was sent:"
        )
        for d in refused.deletions.prefix(20) { Output.line("  would delete  \(d.path)") }
        if refused.deletions.count > 20 { Output.line("  … and \(refused.deletions.count - 20) more") }
        Output.line("To bring them all back:  \(refused.restoreCommand)")
        Output.line("To delete them after all: docsync \(command) --force")
    }

}

extension String {
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}

/// No fields to add.
struct NoFields: Encodable {
    func encode(to encoder: Encoder) throws {}
}

extension SyncReport {
    /// How a summary line counts the documents whose changes are still here: pending, or
    /// on a receive-only replica, not sent (they never go).
    var pendingSummary: String? {
        guard pendingAfter > 0 else { return nil }
        return syncMode == .receiveOnly
            ? "\(pendingAfter) not sent (receive-only)" : "\(pendingAfter) pending"
    }

    /// On a send-only replica, how many remote changes wait unapplied.
    var notAppliedSummary: String? {
        guard let held = notApplied, !held.isEmpty else { return nil }
        return "\(held.count) not applied (send-only)"
    }
}
