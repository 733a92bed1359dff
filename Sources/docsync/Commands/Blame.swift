import ArgumentParser
import DocSyncKit
import Foundation

extension DocSync {
    struct Blame: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "blame",
            abstract: "Show, for each field of a record, the version, replica and time that last set it.",
            discussion:
                "Reads every version of the record: the remote's history (commits on a git remote, the kept versions of a folder remote) and this replica's journal. A field is named by its JSON pointer and found by position: an array element that moved counts as set by the version that moved it. A field changed in the file and not yet recorded shows (not recorded). Changes nothing."
        )
        @OptionGroup var global: GlobalOptions

        @Argument(help: "The record: a path or refId.") var document: String
        @Argument(help: "Only this field (a JSON pointer such as /items/0) and what is inside it.") var pointer: String?

        func run() throws {
            try global.withWorkspace(readOnly: true) { workspace in
                let report = try workspace.history.blame(
                    document, pointer: pointer, relativeTo: global.workingDirectory)
                if let error = report.remoteError {
                    Output.warning("the remote's history was not read (\(error)); from this replica's journal only")
                }
                try global.printResult(command: "blame", BlameJSON(report)) { printFields(report, workspace) }
            }
        }

        private func printFields(_ report: BlameReport, _ workspace: Workspace) {
            // Names from the remote's own list of replicas (both kinds), else what this tree knows.
            var names = workspace.replicas.names()
            for known in (try? workspace.makeRemote().knownReplicas()) ?? []
            where !known.name.isEmpty && names[known.replicaId] == nil {
                names[known.replicaId] = known.name
            }
            let width = report.fields.map(\.pointer.count).max() ?? 0
            for field in report.fields {
                let who = names[field.replica] ?? field.replica
                StandardOutput.write(
                    "\(field.pointer.padding(width))  \(field.changesetId)  \(Output.time(field.time))  \(who)  \(field.value)\n"
                )
            }
        }
    }

    /// `blame --json`: times in RFC 3339, as everywhere in --json.
    struct BlameJSON: Encodable {
        struct Field: Encodable {
            var pointer, value, changesetId, replica, time: String
        }
        var path: String
        var refId: String
        var versions: Int
        var fields: [Field]
        var remoteError: String?

        init(_ report: BlameReport) {
            path = report.path
            refId = report.refId
            versions = report.versions
            remoteError = report.remoteError
            fields = report.fields.map {
                Field(
                    pointer: $0.pointer, value: $0.value, changesetId: $0.changesetId, replica: $0.replica,
                    time: Output.time($0.time))
            }
        }
    }
}
