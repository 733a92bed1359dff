import ArgumentParser
import DocSyncKit

extension DocSync {
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show pending, unrecorded and conflicting changes, and the last sync.",
            discussion: "Changes nothing. \"Pending\" actions are recorded but not yet on the remote; \"unrecorded\" changes are on disk and will be recorded by the next push, pull or sync."
        )
        @OptionGroup var global: GlobalOptions

        func run() throws {
            Output.configure(global)
            let workspace = try Workspace.open(at: global.workingDirectory, readOnly: true)
            defer { workspace.close() }
            let status = try workspace.status()
            for problem in status.problems { Output.problem(problem) }
            for warning in status.warnings { Output.warning(warning) }
            if global.json { try Output.json(status); return }
            Output.line("Tree:      \(status.root) (replica \(status.replicaId))")
            Output.line("Remote:    \(status.remote ?? "none (set one with `docsync config remote.url PATH`)")")
            Output.line("Last sync: \(Output.time(status.lastSync))")
            if let attempt = status.lastAttempt {
                Output.line("Last sync attempt \(Output.time(attempt.time)) (\(attempt.command)): gave up for now: \(attempt.reason)")
            }
            section("Pending (recorded, not yet on the remote)", status.pending.map { "\($0.kind.rawValue.padding(6))  \($0.path)" })
            section("Unrecorded changes on disk", status.unrecorded.map { "\($0.kind.rawValue.padding(6))  \($0.path)" })
            section("Conflicts, open",
                    status.conflicts.map { record in
                        let side = workspace.sideHere(of: record).rawValue
                        let what = record.deleted == true ? "\(side) deletion lost to \(record.winner)" : "\(side) version \(record.changesetId) lost to \(record.winner)"
                        return "\(record.path)  \(what)" + (record.fields.map { $0.isEmpty ? "" : " (fields: \($0.joined(separator: ", ")))" } ?? "")
                    },
                    hint: "the losing versions are kept in .docsync/conflicts/; `docsync conflicts` lists them, `docsync resolve DOC` settles one")
            section("Waiting for a file to be valid again", status.waiting,
                    hint: "a remote version arrived while the file was not valid JSON; it is merged with your fix on the next sync")
            if status.pending.isEmpty && status.unrecorded.isEmpty && status.conflicts.isEmpty && status.problems.isEmpty && status.waiting.isEmpty {
                Output.line("Nothing to sync.")
            }
            if !status.problems.isEmpty {
                throw CommandFailure(message: "\(status.problems.count) file(s) are not valid documents", code: .failure)
            }
        }

        private func section(_ title: String, _ lines: [String], hint: String? = nil) {
            guard !lines.isEmpty else { return }
            Output.line("\n\(title): \(lines.count)")
            for line in lines { Output.line("  " + line) }
            if let hint { Output.line("  (\(hint))") }
        }
    }

    struct Log: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the action journal, or one document's history.",
            discussion: "Without DOC: every journal entry; local actions are marked pending until they reach the remote. With DOC (a path or refId): this replica's journal entries for it and the versions the remote kept (commits on a git remote), each with its changesetId, time and author; `docsync restore DOC --at ID` brings one back."
        )
        @OptionGroup var global: GlobalOptions

        @Flag(name: .long, help: "Show only local actions still pending.")
        var pending = false

        @Argument(help: "A document (path or refId) whose history to show.")
        var document: String?

        func run() throws {
            Output.configure(global)
            let workspace = try Workspace.open(at: global.workingDirectory, readOnly: true)
            defer { workspace.close() }
            if let document {
                let history = try workspace.history(of: document, relativeTo: global.workingDirectory)
                if global.json { try Output.json(history); return }
                Output.line("Document \(history.refId)" + (history.path.map { " (\($0))" } ?? ""))
                Output.line("\nRemote versions, newest first:")
                if let error = history.remoteError { Output.line("  (unavailable: \(error))") }
                for v in history.remote {
                    let id = v.id.count == 40 ? String(v.id.prefix(12)) : v.id
                    Output.line("  \(id.padding(13)) \(Output.time(v.time))  \(v.deleted ? "deleted".padding(30) : v.changesetId.padding(30))  \(v.author)  \(v.path ?? "")")
                }
                Output.line("\nThis replica's journal:")
                for item in history.local {
                    let e = item.entry
                    Output.line("  #\(e.seq) \(Output.time(e.time))  \(e.kind.rawValue.padding(8)) \(e.changesetId ?? "")  \(e.path ?? "")" + (e.isLocalAction ? (item.pending ? "  [pending]" : "  [done]") : ""))
                }
                return
            }
            var entries = try workspace.log()
            if pending { entries = entries.filter(\.pending) }
            if global.json { try Output.json(entries); return }
            for item in entries {
                let e = item.entry
                var text = "\(String(e.seq).padding(5)) \(Output.time(e.time))  \(e.kind.rawValue.padding(8))"
                if let path = e.path { text += " \(path)" }
                if let from = e.fromPath, from != e.path { text += " (from \(from))" }
                if let cs = e.changesetId, e.kind != .cursor { text += "  \(cs)" }
                switch e.event {
                case let .done(_, seqs, reason): text += " \(reason.rawValue) #" + seqs.map(String.init).joined(separator: ",#")
                case let .cursor(cursor): text += " remote at \(cursor)"
                default: break
                }
                if e.isLocalAction { text += item.pending ? "  [pending]" : "  [done]" }
                Output.line(text)
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
            Output.configure(global)
            let workspace = try Workspace.open(at: global.workingDirectory, readOnly: true)
            defer { workspace.close() }
            let problems = workspace.verify(includeRemote: !localOnly)
            if global.json { try Output.json(["problems": problems]) } else {
                for p in problems { Output.problem(p) }
                if problems.isEmpty { Output.line("OK: tree, journal, state" + (localOnly ? "" : " and remote") + " verified") }
            }
            if !problems.isEmpty { throw CommandFailure(message: "\(problems.count) problem(s) found", code: .failure) }
        }
    }

    struct ConfigCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "config",
            abstract: "Read or set a setting: docsync config KEY [VALUE].",
            discussion: "Keys:\n" + Config.keys.map { "  \($0.name)  \($0.help)" + ($0.defaultValue.map { " (default \($0))" } ?? "") }.joined(separator: "\n")
        )
        @OptionGroup var global: GlobalOptions

        @Flag(name: .shortAndLong, help: "List every key with its value.")
        var list = false

        @Flag(name: .long, help: "Remove KEY's value (back to its default).")
        var unset = false

        @Argument(help: "The setting, e.g. remote.url.")
        var key: String?

        @Argument(help: "The new value.")
        var value: String?

        func validate() throws {
            if !list && key == nil { throw ValidationError("Give a KEY, or --list.") }
            if unset && value != nil { throw ValidationError("--unset takes a KEY only.") }
        }

        func run() throws {
            Output.configure(global)
            let writes = value != nil || unset
            let workspace = try Workspace.open(at: global.workingDirectory, readOnly: !writes)
            defer { workspace.close() }
            if list {
                let fixed = Config.keys.filter { !$0.name.contains("<") }.compactMap { k in workspace.config[k.name].map { (k.name, $0) } }
                let patterned = workspace.config.values.filter { Config.key(named: $0.key)?.name.contains("<") == true }.sorted { $0.key < $1.key }
                let rows = fixed + patterned.map { ($0.key, $0.value) }
                if global.json { try Output.json(Dictionary(uniqueKeysWithValues: rows)); return }
                for (k, v) in rows { print("\(k)=\(v)") }
                return
            }
            guard let key else { return }
            if unset {
                if try workspace.setConfig(key, nil, relativeTo: global.workingDirectory) {
                    Output.line("The remote changed: the next sync merges this tree with it (nothing is deleted on either side).")
                }
            } else if let value {
                if try workspace.setConfig(key, value, relativeTo: global.workingDirectory) {
                    Output.line("The remote changed: the next sync merges this tree with it (nothing is deleted on either side).")
                }
            } else {
                guard Config.key(named: key) != nil else {
                    throw CommandFailure(message: "unknown config key '\(key)'; see `docsync config --help`", code: .failure)
                }
                guard let current = workspace.config[key] else { throw ExitCode(1) }
                print(current)
            }
        }
    }
}
