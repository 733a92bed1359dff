import ArgumentParser
import DocSyncKit
import Foundation

extension DocSync {
    struct MergeDriverCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "merge-driver",
            abstract: "Merge JSON records for git: a merge driver (see docsync git-setup).",
            discussion: """
                git runs it as `docsync merge-driver %O %A %B %P` for files marked `merge=docsync` \
                in .gitattributes. It merges OURS and THEIRS against BASE with the rules of a sync \
                (field by field, arrays by identity, as sets or as sequences, counters; the \
                settings of the docsync tree it runs in, if any) and writes the result to OURS. \
                Exit 0: merged. Exit 1: fields collided: OURS holds a valid JSON document (the \
                later save's values, by changesetId, else ours) and each colliding field is \
                printed as a JSON pointer with both values, so git marks the file unmerged; also \
                when a side is not valid JSON (OURS is then left as it was) or the path's merge \
                policy is not merge. Works in any git repository; jj can use it as a merge tool.
                """
        )
        @OptionGroup var global: GlobalOptions

        @Argument(help: "The common ancestor's version (%O; empty when there is none).") var base: String
        @Argument(help: "Our version (%A): the merge result is written here.") var ours: String
        @Argument(help: "Their version (%B).") var theirs: String
        @Argument(help: "The file's path in the repository (%P), for path settings and messages.") var path: String?

        func run() throws {
            Output.configure(global)
            let directory = global.workingDirectory
            let layout = TreeLayout.find(from: directory)
            let config = try layout.map { try Config.load(from: $0.config) } ?? Config()
            let read = { (file: String) throws -> [UInt8] in
                do { return try FileSystem.readFile(FileSystem.absolute(file, relativeTo: directory)) } catch {
                    throw CommandFailure(message: "cannot read \(file): \(describe(error))", code: .failure)
                }
            }
            let outcome: MergeDriver.Outcome
            do {
                outcome = try MergeDriver.merge(
                    base: try read(base), ours: try read(ours), theirs: try read(theirs), path: path, config: config,
                    replica: layout == nil ? nil : config.replicaId,
                    nowMillis: UInt64(FileSystem.currentTimeNanos / 1_000_000))
            } catch let failure as MergeDriver.Failure {
                throw CommandFailure(message: failure.message, code: .failure)
            }
            try FileSystem.writeAtomically(FileSystem.absolute(ours, relativeTo: directory), outcome.result)
            let name = path ?? ours
            // The collisions go to stderr either way, for git to show.
            try global.printResult(command: "merge-driver", DriverJSON(outcome, path: name)) {}
            for c in outcome.collisions {
                Output.writeStderr(
                    "\(name): \(c.pointer.isEmpty ? "(root)" : c.pointer): ours \(c.ours ?? "(removed)"), theirs \(c.theirs ?? "(removed)"); kept \(c.kept)\n"
                )
            }
            if outcome.unmerged {
                let what =
                    outcome.collisions.isEmpty
                    ? "not merged (\(outcome.why)); kept \(outcome.winner)"
                    : "\(outcome.collisions.count) field(s) collided; kept \(outcome.winner)'s values (\(outcome.why))"
                throw CommandFailure(message: "\(name): \(what)", code: .failure)
            }
        }
    }

    struct DriverJSON: Encodable {
        struct Collision: Encodable {
            var pointer: String
            var ours, theirs: String?
            var kept: String
        }
        var path: String
        var merged: Bool
        var winner, why: String
        var collisions: [Collision]

        init(_ outcome: MergeDriver.Outcome, path: String) {
            self.path = path
            merged = !outcome.unmerged
            winner = outcome.winner
            why = outcome.why
            collisions = outcome.collisions.map {
                Collision(pointer: $0.pointer, ours: $0.ours, theirs: $0.theirs, kept: $0.kept)
            }
        }
    }

    struct GitSetupCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "git-setup",
            abstract: "Make plain git merge JSON records with docsync merge-driver in this repository.",
            discussion:
                "Sets merge.docsync.driver in the repository's .git/config (\"\(GitSetup.driver)\") and adds `*.json merge=docsync` to its .gitattributes (commit that file so clones get it; each clone runs git-setup once for the config). Needs docsync on PATH when git merges."
        )
        @OptionGroup var global: GlobalOptions

        func run() throws {
            Output.configure(global)
            let report: GitSetup.Report
            do { report = try GitSetup.run(in: global.workingDirectory) } catch let failure as GitSetup.Failure {
                throw CommandFailure(message: failure.message, code: .failure)
            }
            try global.printResult(command: "git-setup", report) {
                Output.line(
                    "git config merge.docsync.driver \"\(report.driver)\" (in \(report.repository)/.git/config)")
                Output.line(
                    report.attributesAdded
                        ? "added `*.json merge=docsync` to \(report.attributesFile); commit it"
                        : "\(report.attributesFile) already has `*.json merge=docsync`")
            }
        }
    }
}
