import ArgumentParser
import DocSyncKit

extension DocSync {
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show pending, unrecorded and conflicting changes, and the last sync.",
            discussion:
                "Changes nothing you sync; like git status, it may save what it read into .docsync/index (the stat cache), so the next run need not read those files again. Files that are not valid documents are listed with path:line:col and the reason, or path: /json/pointer: reason for a record that fails its JSON Schema (exit 1). \"Pending\" actions are recorded but not yet on the remote; \"unrecorded\" changes are on disk and will be recorded by the next push, pull or sync. A change says why where it is not obvious: a rename where the document was, a delete + create of one file that its refId was removed or changed, a deletion that it goes to the remote as a tombstone. Deletions that lost to an edit are listed with the command that deletes the document after all. Each list stops after 50 lines with how many more there are; --all lists everything."
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
            try global.withWorkspace(readOnly: true) { workspace in
                let status = try workspace.sync.status()
                for problem in status.problems { Output.problem(problem.message) }
                for warning in status.warnings { Output.warning(warning) }
                // status works offline: the remote's replica records only when a line names another replica.
                let names = workspace.replicas.names(fromRemote: status.conflicts.contains { $0.deleted == true })
                if global.json {
                    try Output.json(StatusJSON(status: status, replicaName: names[status.replicaId]), command: "status")
                    if !status.problems.isEmpty { throw ExitCode.failure }
                    return
                }
                Output.line(
                    "Tree:      \(status.root) (replica \(names[status.replicaId] ?? status.replicaId), id \(status.replicaId))"
                )
                Output.line("Remote:    \(status.remote ?? "none (set one with `docsync config remote.url PATH`)")")
                Output.line("Last sync: \(Output.time(status.lastSync))")
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
                    "Pending (recorded, not yet on the remote)", ChangeNotes.lines(for: status.pending, recorded: true))
                section("Unrecorded changes on disk", ChangeNotes.lines(for: status.unrecorded, recorded: false))
                let (deletionsLost, collisions) = (
                    status.conflicts.filter { $0.deleted == true }, status.conflicts.filter { $0.deleted != true }
                )
                func name(_ id: String?) -> String {
                    id.map { ReplicaLabel.text($0, names: names) } ?? "another replica"
                }
                section(
                    "Conflicts, open",
                    collisions.map { record in
                        let fields =
                            record.fields.map { $0.isEmpty ? "" : " (fields: \($0.joined(separator: ", ")))" } ?? ""
                        let sentence = workspace.conflicts.pointOfView(of: record).sentence(record) {
                            $0 == status.replicaId ? "this replica" : names[$0] ?? $0
                        }
                        return "\(record.path)  \(sentence)\(fields)"
                    },
                    hint:
                        "the losing versions are kept in .docsync/conflicts/; `docsync conflicts` lists them, `docsync resolve DOC` settles one"
                )
                section(
                    "Deletions that lost to an edit (the edit was kept)",
                    deletionsLost.map { record in
                        let deletedHere = workspace.conflicts.sideHere(of: record) == .local
                        let who = deletedHere ? "deleted here" : "deleted by \(name(record.lostBy ?? record.replica))"
                        return
                            "\(record.path)  \(who), edited \(deletedHere ? "elsewhere" : "here"): kept version \(record.winner); "
                            + "`docsync resolve \(record.path) --take \(workspace.conflicts.sideHere(of: record).rawValue)` deletes it after all"
                    },
                    hint: "the deleted version is kept in .docsync/conflicts/")
                section(
                    "Waiting for a file to be valid again", status.waiting,
                    hint:
                        "a remote version arrived while the file was not valid (JSON, or its schema); it is merged with your fix on the next sync"
                )
                if status.pending.isEmpty && status.unrecorded.isEmpty && status.conflicts.isEmpty
                    && status.problems.isEmpty && status.waiting.isEmpty
                {
                    Output.line("Nothing to sync.")
                }
                if !status.problems.isEmpty {
                    let n = max(status.invalidFiles.count, 1)
                    throw CommandFailure(
                        message: n == 1 ? "1 file is not a valid document" : "\(n) files are not valid documents",
                        code: .failure)
                }
            }
        }

        private func section(_ title: String, _ lines: [String], hint: String? = nil) {
            guard !lines.isEmpty else { return }
            Output.line("\n\(title): \(lines.count)")
            let shown = all ? lines.count : min(lines.count, Self.shownPerList)
            for line in lines.prefix(shown) { Output.line("  " + line) }
            if shown < lines.count { Output.line("  … and \(lines.count - shown) more (docsync status --all)") }
            if let hint { Output.line("  (\(hint))") }
        }
    }

    struct Log: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the action journal, or one document's history.",
            discussion:
                "Without DOC: every journal entry, one line each, oldest first; local actions are marked pending until they reach the remote, a pulled deletion says deleted. With DOC (a path or refId): this replica's journal entries for it and the versions the remote kept (commits on a git remote), each with its changesetId, time and author; `docsync restore DOC --at ID` brings one back. On a terminal the output is paged with $DOCSYNC_PAGER, else $PAGER, else less -FRX (empty or cat: no pager), like git."
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
                    let names = workspace.replicas.names()
                    var history = try workspace.history.document(document, relativeTo: global.workingDirectory)
                    let journalHadEntries = !history.local.isEmpty
                    history.local = window(history.local) { $0.entry.time }
                    // Newest first: the window's last N are the first N.
                    history.remote = window(history.remote.reversed()) { $0.time }.reversed()
                    if global.json {
                        try Output.json(HistoryJSON(history: history, replicaNames: names), command: "log")
                        return
                    }
                    let pager = noPager ? nil : Pager.start()
                    defer { pager?.finish() }
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
                    return
                }
                var entries = try workspace.history.log()
                if pending { entries = entries.filter(\.pending) }
                entries = window(entries) { $0.entry.time }
                // The remote's replica records only when an entry names another replica.
                // The remote's records name other replicas: needed for held versions, and for
                // cursor lines of a drive-layout remote (which name the replica of the push).
                let names = workspace.replicas.names(
                    fromRemote: entries.contains { item in
                        if item.entry.kind == .held { return true }
                        if case .cursor(let cursor) = item.entry.event { return RemoteCursorText.namesReplicas(cursor) }
                        return false
                    })
                if global.json {
                    try Output.json(
                        ["entries": entries.map { LogEntryJSON(item: $0, replicaNames: names) }], command: "log")
                    return
                }
                let pager = noPager ? nil : Pager.start()
                defer { pager?.finish() }
                for item in entries { Output.line(LogLine.text(item, names: names)) }
            }
        }
    }

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the tree, the journal, the sync state and the remote.",
            discussion: "Prints every problem found and exits 1 if there is any; changes nothing."
        )
        @OptionGroup var global: GlobalOptions

        @Flag(name: .long, help: "Do not check the remote.")
        var localOnly = false

        func run() throws {
            try global.withWorkspace(readOnly: true) { workspace in
                let problems = workspace.checks.verify(includeRemote: !localOnly)
                if global.json {
                    try Output.json(
                        VerifyJSON(ok: problems.isEmpty, remoteChecked: !localOnly, problems: problems),
                        command: "verify")
                } else {
                    for p in problems { Output.problem(p) }
                    if problems.isEmpty {
                        Output.line("OK: tree, journal, state" + (localOnly ? "" : " and remote") + " verified")
                    }
                }
                if !problems.isEmpty {
                    throw CommandFailure(message: "\(problems.count) problem(s) found", code: .failure)
                }
            }
        }
    }

    struct ConfigCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "config",
            abstract: "Read or set a setting: docsync config KEY [VALUE].",
            discussion: "Keys:\n"
                + Config.keys.map { "  \($0.name)  \($0.help)" + ($0.defaultValue.map { " (default \($0))" } ?? "") }
                .joined(separator: "\n")
        )
        @OptionGroup var global: GlobalOptions

        @Flag(name: .shortAndLong, help: "List every key with its value.")
        var list = false

        @Flag(name: .long, help: "Remove KEY's value (back to its default).")
        var unset = false

        @Flag(
            name: .long,
            help: "With remote.url: make a new remote there if there is none (else that is refused, as a likely typo).")
        var create = false

        @Flag(
            name: .customLong("reset-base"),
            help:
                "With a remote key: allow a different remote than the one this tree synced with, starting from an empty base (the next sync merges both sides and deletes nothing)."
        )
        var resetBase = false

        @Argument(help: "The setting, e.g. remote.url.")
        var key: String?

        @Argument(help: "The new value.")
        var value: String?

        func validate() throws {
            if !list && key == nil { throw ValidationError("Give a KEY, or --list.") }
            if unset && value != nil { throw ValidationError("--unset takes a KEY only.") }
            if (create || resetBase) && !["remote.url", "remote.kind", "remote.branch"].contains(key ?? "") {
                throw ValidationError("--create and --reset-base go with remote.url, remote.kind or remote.branch.")
            }
        }

        func run() throws {
            Output.configure(global)
            let writes = value != nil || unset
            try global.withWorkspace(readOnly: !writes) { workspace in
                if list {
                    let fixed = Config.keys.filter { !$0.name.contains("<") }.compactMap { k in
                        workspace.config[k.name].map { (k.name, $0) }
                    }
                    let patterned = workspace.config.values.filter {
                        Config.key(named: $0.key)?.name.contains("<") == true
                    }
                    .sorted { $0.key < $1.key }
                    let rows = fixed + patterned.map { ($0.key, $0.value) }
                    if global.json {
                        try Output.json(["values": Dictionary(uniqueKeysWithValues: rows)], command: "config")
                        return
                    }
                    for (k, v) in rows { print("\(k)=\(v)") }
                    return
                }
                guard let key else { return }
                guard Config.key(named: key) != nil else {
                    throw CommandFailure(
                        message: "unknown config key '\(key)'; see `docsync config --help`", code: .failure,
                        errorCode: "unknown-key")
                }
                if writes {
                    let remoteChanged = try workspace.settings.set(
                        key, unset ? nil : value, relativeTo: global.workingDirectory, create: create,
                        resetBase: resetBase)
                    if global.json {
                        try Output.json(
                            ConfigJSON(
                                key: key, value: workspace.config[key],
                                defaultValue: Config.key(named: key)?.defaultValue,
                                remoteChanged: remoteChanged), command: "config")
                    } else if remoteChanged {
                        Output.line(
                            "The remote changed: the next sync merges this tree with it (nothing is deleted on either side)."
                        )
                    }
                    return
                }
                let current = workspace.config[key]
                if global.json {
                    try Output.json(
                        ConfigJSON(key: key, value: current, defaultValue: Config.key(named: key)?.defaultValue),
                        command: "config")
                } else if let current {
                    print(current)
                }
                // Like `git config KEY`: exit 1 when the key has no value.
                if current == nil { throw ExitCode(1) }
            }
        }
    }

    /// `docsync config KEY --json`: the value set in this tree (null: none), the default.
    struct ConfigJSON: Encodable {
        var key: String
        var value: String?
        var defaultValue: String?
        var remoteChanged: Bool? = nil

        private enum Key: String, CodingKey { case key, value, defaultValue = "default", remoteChanged }
        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(key, forKey: .key)
            try container.encode(value, forKey: .value)
            try container.encode(defaultValue, forKey: .defaultValue)
            try container.encodeIfPresent(remoteChanged, forKey: .remoteChanged)
        }
    }

    struct VerifyJSON: Encodable {
        var ok: Bool
        var remoteChecked: Bool
        var problems: [String]
    }
}
