import ArgumentParser
import DocSyncKit

extension DocSync {
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Check records against the rules a sync holds them to, without syncing.",
            discussion: """
                Each record must be valid JSON, a JSON object with a string refId (if it has one), \
                and satisfy its JSON Schema: the file its own "$schema" member names (relative to \
                the record), else the last schema.<glob> key of the tree's config that matches its \
                path, or every record's with --schema. Prints every problem, as path:line:col: \
                reason for invalid JSON and path: /json/pointer: reason for a schema error, and \
                exits 1 if there is any. Without PATH it checks every *.json file of the tree \
                (honouring .docsyncignore). Each PATH is checked by the rules of the tree it is in, \
                wherever check runs, and a folder holding docsync trees checks their records by \
                theirs. Writes nothing and takes no lock, so it runs beside a \
                sync, in a git pre-commit hook or a CI step, inside a docsync tree or not. See \
                docs/SCHEMA.md for the supported keywords.
                """
        )
        @OptionGroup var global: GlobalOptions

        @Option(
            name: .long,
            help: ArgumentHelp(
                "Check every record against this schema file, whatever names another.", valueName: "FILE"))
        var schema: String?

        @Argument(
            help: ArgumentHelp(
                "Records or folders to check (default: the whole tree, or the current folder outside one).",
                valueName: "PATH"))
        var paths: [String] = []

        func run() throws {
            Output.configure(global)
            let report: RecordCheck.Report
            do {
                report = try RecordCheck.run(
                    RecordCheck.Request(directory: global.workingDirectory, paths: paths, schema: schema))
            } catch let failure as RecordCheck.Failure {
                throw CommandFailure(message: failure.message, code: .failure)
            }
            try global.printResult(command: "check", report) {
                for problem in report.problems { Output.problem(problem.description) }
                for note in report.notes { Output.warning(note) }
                let schemas =
                    report.withSchema == report.checked ? "all with a schema" : "\(report.withSchema) with a schema"
                let summary =
                    "checked \(report.checked) record\(report.checked == 1 ? "" : "s") (\(schemas)): "
                    + (report.invalid == 0 ? "all valid" : "\(report.invalid) invalid")
                if report.invalid == 0 { Output.line(summary) }
                if report.checked == 0 && report.problems.isEmpty { Output.warning("no records found") }
            }
            if report.invalid > 0 {
                throw CommandFailure(
                    message: "\(report.invalid) record\(report.invalid == 1 ? " is" : "s are") not valid",
                    code: .failure)
            }
        }
    }
}
