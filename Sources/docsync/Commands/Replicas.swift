import ArgumentParser
import DocSyncKit
import Foundation

extension DocSync {
    struct Replicas: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "replicas",
            abstract: "List the replicas the remote knows; forget one that is gone.",
            discussion:
                "A folder remote knows every replica that synced with it; a git remote knows the replicas whose commits are in the branch's history (one that only pulls is not listed). A replica that has not seen a deletion holds back its tombstone from `docsync gc`; `docsync replicas forget NAME` retires a machine that will not sync again, so gc stops waiting for it.",
            subcommands: [List.self, Forget.self],
            defaultSubcommand: List.self
        )

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "list",
                abstract: "List every replica known to the remote (the default).",
                discussion:
                    "One line per replica: its name (* marks this one), id, when it last synced, the docsync version it ran, how many tombstones it holds back from gc, and what it last saw (its cursor on a folder remote, its last commit on a git remote). On a folder remote \"last synced\" is refreshed at least hourly while a replica syncs; on a git remote it is the time of the replica's last commit."
            )
            @OptionGroup var global: GlobalOptions

            func run() throws {
                try global.withWorkspace(readOnly: true) { workspace in
                    let report = try workspace.replicas.list()
                    try global.printResult(command: "replicas", ReplicasJSON(report)) { ReplicasTable.print(report) }
                }
            }
        }

        struct Forget: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "forget",
                abstract: "Retire a replica that will not sync again, so gc stops waiting for it.",
                discussion:
                    "NAME is a replica's name or id (see `docsync replicas`). On a folder remote its record is removed under the remote lock; on a git remote an empty commit with a `Retired-Replica: ID` trailer is pushed. If that replica syncs again it is simply known again (and catches up like any replica whose tombstones were purged). Refuses this tree's own replica unless --force. Exits 1 if no known replica has that name."
            )
            @OptionGroup var global: GlobalOptions

            @Flag(
                name: .long,
                help: "Forget this tree's own replica too (it is known again at its next sync).")
            var force = false

            @Flag(name: .long, help: "Say which replica would be forgotten; change nothing.")
            var dryRun = false

            @Argument(help: "The replica: its name or id.")
            var name: String

            func run() throws {
                try global.withWorkspace(readOnly: dryRun) { workspace in
                    let gone = try workspace.replicas.forget(name, force: force, dryRun: dryRun)
                    let forgotten = ReplicasJSON.Replica(
                        gone, holdsBack: nil, isSelf: gone.replicaId == workspace.config.replicaId)
                    try global.printResult(
                        command: "replicas forget", ForgetJSON(forgotten: forgotten, dryRun: dryRun)
                    ) {
                        Output.line(
                            "\(dryRun ? "would forget" : "forgot") replica \(gone.name) (\(gone.replicaId)); gc no longer waits for it"
                        )
                    }
                }
            }
        }
    }
}

/// The human-readable list: a header and one aligned line per replica.
enum ReplicasTable {
    static func print(_ report: ReplicasReport) {
        guard !report.replicas.isEmpty else {
            Output.line("No replica is known to \(report.remote) yet.")
            return
        }
        var rows = [["NAME", "ID", "LAST SYNC", "VERSION", "HOLDS BACK", "SEEN"]]
        for entry in report.replicas {
            let r = entry.replica
            rows.append([
                r.name + (entry.isSelf ? " *" : ""), r.replicaId, Output.time(r.lastSync),
                r.version ?? "unknown",
                entry.holdsBack == 0
                    ? "-" : "\(entry.holdsBack) tombstone\(entry.holdsBack == 1 ? "" : "s")", r.seen ?? "-"
            ])
        }
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let cells = row.enumerated().map { i, cell in
                i == row.count - 1 ? cell : cell.padding(toLength: widths[i], withPad: " ", startingAt: 0)
            }
            Output.line(cells.joined(separator: "  "))
        }
        let holding = report.replicas.filter { $0.holdsBack > 0 }.count
        Output.line(
            "\(report.replicas.count) replica\(report.replicas.count == 1 ? "" : "s") known to \(report.remote) (* this one)"
                + (holding == 0
                    ? ""
                    : "; \(holding) hold\(holding == 1 ? "s" : "") back tombstone purge (`docsync replicas forget NAME` retires a machine that is gone)")
        )
    }
}

/// `docsync replicas --json` (schemaVersion 1).
struct ReplicasJSON: Encodable {
    struct Replica: Encodable {
        var id, name: String
        /// lastSync: RFC 3339, UTC; null if unknown.
        var lastSync, seen, version: String?
        /// Tombstones gc keeps because this replica has not seen them (null in `forget`).
        var holdsBackTombstones: Int?
        var holdsBackPurge: Bool?
        var isSelf: Bool

        init(_ r: KnownReplica, holdsBack: Int?, isSelf: Bool) {
            id = r.replicaId
            name = r.name
            lastSync = r.lastSync.map { Output.time($0) }
            seen = r.seen
            version = r.version
            holdsBackTombstones = holdsBack
            holdsBackPurge = holdsBack.map { $0 > 0 }
            self.isSelf = isSelf
        }

        enum CodingKeys: String, CodingKey {
            case id, name, lastSync, seen, version, holdsBackTombstones, holdsBackPurge
            case isSelf = "self"
        }
    }

    var schemaVersion = 1
    var remote: String
    var replicas: [Replica]

    init(_ report: ReplicasReport) {
        remote = report.remote
        replicas = report.replicas.map {
            Replica($0.replica, holdsBack: $0.holdsBack, isSelf: $0.isSelf)
        }
    }
}

/// `docsync replicas forget --json` (schemaVersion 1).
struct ForgetJSON: Encodable {
    var schemaVersion = 1
    var forgotten: ReplicasJSON.Replica
    var dryRun: Bool
}
