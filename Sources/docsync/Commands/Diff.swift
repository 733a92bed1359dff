import ArgumentParser
import DocSyncJSON
import DocSyncKit
import Foundation

extension DocSync {
    struct Diff: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "diff",
            abstract: "Show what changed in records, field by field (JSON pointers), not line by line.",
            discussion: """
                Without DOC: every record changed here since the last sync, against its last synced \
                version. --against remote compares with the remote's current version (and lists the \
                records the remote changed too); --against ID with one version of DOC (a \
                changesetId, a commit, or a prefix, as docsync log DOC shows). One line per change: \
                `~ /items/1/qty: 1 → 5`, `+ /tags/2: "c"`, `- /note: "x"`; arrays of records are \
                compared by identity (id, refId, uuid, key), other arrays by position after a \
                longest common subsequence. refId and changesetId are not shown. --files A B \
                compares two JSON files anywhere, and serves as git's external diff \
                (`git config diff.docsync.command "docsync diff --git"` plus `*.json diff=docsync` in \
                .gitattributes). Exit 0 whether or not there are changes.
                """
        )
        @OptionGroup var global: GlobalOptions

        @Option(
            name: .long, help: ArgumentHelp("base (default), remote, or a version of DOC.", valueName: "BASE|REMOTE|ID")
        )
        var against: String?

        @Flag(name: .long, help: "Compare the two files given as DOC (any JSON files).")
        var files = false

        @Flag(
            name: .long,
            help:
                "Be git's external diff: DOC is git's seven arguments (path old-file old-hex old-mode new-file new-hex new-mode)."
        )
        var git = false

        @Argument(help: "Records (paths or refIds); with --files two files; with --git git's arguments.")
        var documents: [String] = []

        func run() throws {
            Output.configure(global)
            let diffs: [DocumentDiff]
            if files || git {
                diffs = [try compareFiles()]
            } else {
                diffs = try global.withWorkspace(readOnly: true) { workspace in
                    try workspace.history.diff(
                        documents, relativeTo: global.workingDirectory, against: HistoryService.DiffTarget(against))
                }
            }
            try global.printResult(command: "diff", DiffJSON(documents: diffs)) { printText(diffs) }
        }

        private func printText(_ diffs: [DocumentDiff]) {
            for d in diffs {
                let header: String
                if files || git {
                    header = "\(d.against) → \(d.path)"
                } else {
                    let what =
                        d.against == "base"
                        ? "the last synced version" : d.against == "remote" ? "the remote" : "version"
                    header = "\(d.path) (against \(what)\(d.againstChangesetId.map { " \($0)" } ?? ""))"
                }
                StandardOutput.write(header + (d.note.map { ": \($0)" } ?? "") + "\n")
                for change in d.changes { StandardOutput.write("  \(change.line)\n") }
            }
        }

        private func compareFiles() throws -> DocumentDiff {
            let (name, oldFile, newFile): (String, String, String)
            if git {
                guard documents.count == 7 else {
                    throw ValidationError(
                        "--git takes git's seven arguments (path old-file old-hex old-mode new-file new-hex new-mode).")
                }
                (name, oldFile, newFile) = (documents[0], documents[1], documents[4])
            } else {
                guard documents.count == 2 else { throw ValidationError("--files takes two files.") }
                (name, oldFile, newFile) = (documents[1], documents[0], documents[1])
            }
            func load(_ file: String) throws -> JSONValue? {
                if file == "/dev/null" { return nil }
                let bytes: [UInt8]
                do {
                    bytes = try FileSystem.readFile(FileSystem.absolute(file, relativeTo: global.workingDirectory))
                } catch {
                    throw CommandFailure(message: "cannot read \(file): \(describe(error))", code: .failure)
                }
                do { return try JSONValueParser.parse(bytes) } catch {
                    throw CommandFailure(
                        message: "\(file):\(error.line):\(error.column): \(error.reason)", code: .failure)
                }
            }
            let (a, b) = (try load(oldFile), try load(newFile))
            // git's temporary files have no useful names: a/ and b/ as git shows them.
            var result = DocumentDiff(
                path: git ? "b/" + name : newFile, refId: nil, against: git ? "a/" + name : oldFile,
                againstChangesetId: nil, changes: [])
            switch (a, b) {
            case let (x?, y?): result.changes = JSONDiff.changes(from: x, to: y)
            case (nil, let y?):
                result.note = "new"
                result.changes = [
                    JSONDiff.Change(pointer: "", kind: .added, old: nil, new: JSONValueWriter.compactString(y))
                ]
            case (let x?, nil):
                result.note = "deleted"
                result.changes = [
                    JSONDiff.Change(pointer: "", kind: .removed, old: JSONValueWriter.compactString(x), new: nil)
                ]
            case (nil, nil): break
            }
            return result
        }
    }

    struct DiffJSON: Encodable {
        var documents: [DocumentDiff]
    }
}
