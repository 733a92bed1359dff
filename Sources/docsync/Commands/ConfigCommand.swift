import ArgumentParser
import DocSyncKit

extension DocSync {
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
            let writes = value != nil || unset
            try global.withWorkspace(readOnly: !writes) { workspace in
                if list { return try printList(workspace.config) }
                guard let key else { return }
                guard Config.key(named: key) != nil else {
                    throw CommandFailure(
                        message: "unknown config key '\(key)'; see `docsync config --help`", code: .failure,
                        errorCode: "unknown-key")
                }
                if writes {
                    try set(key, in: workspace)
                } else {
                    try printValue(of: key, in: workspace.config)
                }
            }
        }

        /// `--list`: the fixed keys in their order, then the patterned ones (schema.<glob>) by name.
        private func printList(_ config: Config) throws {
            let fixed = Config.keys.filter { !$0.name.contains("<") }.compactMap { k in
                config[k.name].map { (k.name, $0) }
            }
            let patterned = config.values.filter { Config.key(named: $0.key)?.name.contains("<") == true }
                .sorted { $0.key < $1.key }
            let rows = fixed + patterned.map { ($0.key, $0.value) }
            try global.printResult(command: "config", ["values": Dictionary(uniqueKeysWithValues: rows)]) {
                for (k, v) in rows { print("\(k)=\(v)") }
            }
        }

        /// `KEY VALUE` or `--unset KEY`.
        private func set(_ key: String, in workspace: Workspace) throws {
            let remoteChanged = try workspace.settings.set(
                key, unset ? nil : value, relativeTo: global.workingDirectory, create: create, resetBase: resetBase)
            let result = ConfigJSON(
                key: key, value: workspace.config[key], defaultValue: Config.key(named: key)?.defaultValue,
                remoteChanged: remoteChanged)
            try global.printResult(command: "config", result) {
                guard remoteChanged else { return }
                Output.line(
                    "The remote changed: the next sync merges this tree with it (nothing is deleted on either side).")
            }
        }

        /// `KEY`: its value; like `git config KEY`, exit 1 when it has none.
        private func printValue(of key: String, in config: Config) throws {
            let current = config[key]
            try global.printResult(
                command: "config",
                ConfigJSON(key: key, value: current, defaultValue: Config.key(named: key)?.defaultValue)
            ) {
                if let current { print(current) }
            }
            if current == nil { throw ExitCode(1) }
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
            try container.encode(fields: [.key: key, .value: value, .defaultValue: defaultValue])
            try container.encodeIfPresent(remoteChanged, forKey: .remoteChanged)
        }
    }
}
