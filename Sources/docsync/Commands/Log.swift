import ArgumentParser
import DocSyncKit

extension DocSync {
    struct Log: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "log",
            abstract: "Show the action journal, or one document's history.",
            discussion: """
                Without DOC: every journal entry, one line each, oldest first; local actions are marked \
                pending until they reach the remote, a pulled deletion says deleted. With DOC (a path or \
                refId): this replica's journal entries for it and the versions the remote kept (commits on a \
                git remote), each with its changesetId, time and author; `docsync restore DOC --at ID` \
                brings one back. On a terminal the output is paged with $DOCSYNC_PAGER, else $PAGER, else \
                less -FRX (empty or cat: no pager), like git.
                """
        )
        @OptionGroup var global: GlobalOptions

        @Flag(name: .long, help: "Show only local actions still pending.")
        var pending = false

        @Option(
            name: [.customShort("n"), .customLong("max-count")],
            help: ArgumentHelp("Show only the N most recent entries (and remote versions).", valueName: "N"))
        var maxCount: Int?

        @Option(
            help: ArgumentHelp(
                "Show only entries from this time on: an RFC 3339 date (2026-11-23, midnight UTC) or date-time (2026-11-23T20:44:33Z).",
                valueName: "DATE"))
        var since: RFC3339Date?

        @Flag(
            name: .customLong("no-pager"),
            help:
                "Do not page the output (it is paged with $DOCSYNC_PAGER, $PAGER or less -FRX only when stdout is a terminal)."
        )
        var noPager = false

        @Argument(help: "A document (path or refId) whose history to show.")
        var document: String?

        func validate() throws {
            if let maxCount, maxCount < 0 { throw ValidationError("-n/--max-count must be 0 or more.") }
        }

        /// The entries to show: from `since` on, the last `maxCount`.
        private func window<T>(_ items: [T], time: (T) -> Int64) -> [T] {
            var kept = since.map { since in items.filter { time($0) >= since.millis } } ?? items
            if let maxCount { kept = Array(kept.suffix(maxCount)) }
            return kept
        }

        func run() throws {
            try global.withWorkspace(readOnly: true) { workspace in
                if let document {
                    try showHistory(of: document, in: workspace)
                } else {
                    try showJournal(of: workspace)
                }
            }
        }

        /// The text goes through the pager unless --no-pager (it starts only on a terminal).
        private func paged(_ body: () -> Void) {
            let pager = noPager ? nil : Pager.start()
            defer { pager?.finish() }
            body()
        }

        /// `docsync log`: every journal entry, one line each.
        private func showJournal(of workspace: Workspace) throws {
            var entries = try workspace.history.log()
            if pending { entries = entries.filter(\.pending) }
            entries = window(entries) { $0.entry.time }
            // The remote's records name other replicas: needed for held versions, and for
            // cursor lines of a drive-layout remote (which name the replica of the push).
            let names = workspace.replicas.names(
                fromRemote: entries.contains { item in
                    if item.entry.kind == .held { return true }
                    if case .cursor(let cursor) = item.entry.event { return RemoteCursorText.namesReplicas(cursor) }
                    return false
                })
            try global.printResult(
                command: "log", ["entries": entries.map { LogEntryJSON(item: $0, replicaNames: names) }]
            ) {
                paged { for item in entries { Output.line(LogLine.text(item, names: names)) } }
            }
        }

        /// `docsync log DOC`: the remote's versions of one document, then this replica's
        /// journal entries for it.
        private func showHistory(of document: String, in workspace: Workspace) throws {
            let names = workspace.replicas.names()
            var history = try workspace.history.document(document, relativeTo: global.workingDirectory)
            let journalHadEntries = !history.local.isEmpty
            history.local = window(history.local) { $0.entry.time }
            // Newest first: the window's last N are the first N.
            history.remote = window(history.remote.reversed()) { $0.time }.reversed()
            try global.printResult(command: "log", HistoryJSON(history: history, replicaNames: names)) {
                paged { printHistory(history, journalHadEntries: journalHadEntries, names: names) }
            }
        }

        private func printHistory(_ history: DocumentHistory, journalHadEntries: Bool, names: [String: String]) {
            Output.line("Document \(history.refId)" + (history.path.map { " (\($0))" } ?? ""))
            // A section with nothing to show (after -n or --since) has no heading.
            if !history.remote.isEmpty || history.remoteError != nil {
                Output.line("\nRemote versions, newest first:")
                if let error = history.remoteError { Output.line("  (unavailable: \(error))") }
                for v in history.remote {
                    let id = v.id.count == 40 ? String(v.id.prefix(12)) : v.id
                    Output.line(
                        "  \(id.padding(13)) \(Output.time(v.time))  \(v.deleted ? "deleted".padding(30) : v.changesetId.padding(30))  \(names[v.author] ?? v.author)  \(v.path ?? "")"
                    )
                }
            }
            if !history.local.isEmpty {
                Output.line("\nThis replica's journal:")
                for item in history.local { Output.line("  " + LogLine.text(item, names: names)) }
            } else if !journalHadEntries {
                Output.line(
                    "\nThis replica's journal: no entries for it (docsync gc compacted them once they reached the remote)"
                )
            }
        }
    }
}
