import ArgumentParser
import DocSyncKit
import Foundation

extension DocSync {
    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "edit",
            abstract: "Edit a record in $VISUAL or $EDITOR, validated before it replaces the file.",
            discussion: """
                The editor ($VISUAL, else $EDITOR, else vi) opens a temporary copy under .docsync/tmp/. \
                When it exits, the text must be valid JSON with a top-level object that satisfies the \
                record's JSON Schema, if it has one (see docsync check), and "refId" and \
                "changesetId" must be as they were. A valid edit replaces the record atomically and is \
                recorded like any edit (a new changesetId, sent by the next push or sync); an unchanged \
                one changes nothing. On a terminal a refused edit shows line:col: reason and asks whether \
                to edit it again; otherwise docsync exits 1, leaves the record as it was and keeps the \
                refused text in .docsync/rejected/. The tree is not locked while the editor is open. \
                A copy left by an edit that was killed is moved to .docsync/rejected/ by the next edit.
                """
        )
        @OptionGroup var global: GlobalOptions

        @Argument(help: "The record: a path or refId.")
        var document: String

        /// What `edit` read before the editor opens: the tree is not locked while it is open.
        struct Session {
            var path, refId: String
            var original: [UInt8]
            /// `.docsync/tmp`, where the copy the editor opens is written.
            var tmpFolder: String
            var schemas: RecordSchemas
        }

        func run() throws {
            // Read without the tree lock: an editor may stay open for hours, and cron
            // runs must go on meanwhile. The write below checks nothing changed since.
            let session = try global.withWorkspace(readOnly: true, open)
            try FileSystem.createDirectories(session.tmpFolder)
            let name = ((session.path as NSString).lastPathComponent as NSString).deletingPathExtension
            let temp = session.tmpFolder + "/\(name).\(getpid()).json"
            try FileSystem.writeAtomically(temp, session.original, mode: 0o600)
            defer { try? FileSystem.removeFile(temp) }
            let interactive = isatty(STDIN_FILENO) != 0 && isatty(STDERR_FILENO) != 0

            while true {
                try Self.runEditor(on: temp)
                let edited = try FileSystem.readFile(temp)
                guard
                    let problem = EditingService.checkEdit(original: session.original, edited: edited)
                        ?? EditingService.checkSchema(edited, path: session.path, schemas: session.schemas)
                else {
                    return try apply(edited, session)
                }
                Output.problem("\(session.path):\(problem.description)")
                if interactive && Self.asksToEditAgain(session.path) { continue }
                try reject(edited, session, problem: problem.description)
            }
        }

        /// Finds the record and keeps what earlier killed edits left behind.
        private func open(_ reader: Workspace) throws -> Session {
            let (path, refId, original) = try reader.editing.editableDocument(
                document, relativeTo: global.workingDirectory)
            let tmpFolder = reader.layout.metadata + "/tmp"
            for (leftover, kept) in Self.keepLeftoverCopies(in: tmpFolder, workspace: reader) {
                Output.warning("an earlier edit (\(leftover)) did not finish; its text is kept in \(kept)")
            }
            return Session(
                path: path, refId: refId, original: original, tmpFolder: tmpFolder,
                schemas: RecordSchemas(root: reader.layout.root, config: reader.config))
        }

        /// A valid edit replaces the record (under the tree lock, now).
        private func apply(_ edited: [UInt8], _ session: Session) throws {
            let report = try global.withWorkspace(readOnly: false) { workspace in
                try workspace.editing.applyEdit(
                    path: session.path, refId: session.refId, original: session.original, edited: edited)
            }
            try global.printResult(command: "edit", report) {
                if report.outcome == "unchanged" {
                    Output.line("No changes: \(session.path) left as it was")
                } else {
                    Output.line(
                        "edited  \(session.path)  (\(report.changesetId ?? "?")); the next push or sync sends it")
                }
            }
        }

        /// A refused edit leaves the record as it was; its text is kept in `.docsync/rejected/`.
        private func reject(_ edited: [UInt8], _ session: Session, problem: String) throws -> Never {
            let kept = try global.withWorkspace(readOnly: true) { workspace in
                let kept = try workspace.editing.keepRejected(edited, for: session.path)
                let report = EditReport(
                    path: session.path, refId: session.refId, changesetId: nil, outcome: "rejected",
                    rejectedCopy: kept, problem: problem)
                try global.printResult(command: "edit", report) {}
                return kept
            }
            throw CommandFailure(
                message: "\(session.path) was left as it was; the refused text is kept in \(kept)", code: .failure)
        }

        /// On a terminal, a refused edit asks whether to open the editor again.
        private static func asksToEditAgain(_ path: String) -> Bool {
            // Only "e" or "k" answers: a stray key must not throw the edit away. End of input keeps.
            while true {
                Output.writeStderr("What now? (e)dit again, (k)eep \(path) as it was: ")
                guard let line = readLine() else { return false }
                let answer = line.trimmingCharacters(in: .whitespaces).lowercased()
                if answer.hasPrefix("e") { return true }
                if answer.hasPrefix("k") { return false }
                Output.writeStderr("Please answer e (edit again) or k (keep it as it was).\n")
            }
        }

        /// Copies left in `.docsync/tmp/` by an `edit` that was killed (its process is gone) may
        /// hold text the user saved in the editor: they move to `.docsync/rejected/`, never
        /// deleted. A copy whose process still runs is another `edit` at work and stays.
        static func keepLeftoverCopies(in folder: String, workspace: Workspace) -> [(String, String)] {
            guard let names = try? FileSystem.listDirectory(folder) else { return [] }
            var kept: [(String, String)] = []
            for name in names.sorted() where name.hasSuffix(".json") {
                let parts = name.split(separator: ".")
                guard parts.count >= 3, let pid = pid_t(parts[parts.count - 2]) else { continue }
                if kill(pid, 0) == 0 || errno == EPERM { continue }
                let file = folder + "/" + name
                guard let bytes = try? FileSystem.readFile(file),
                    let target = try? workspace.editing.keepRejected(
                        bytes, for: parts.dropLast(2).joined(separator: ".") + ".json")
                else { continue }
                try? FileSystem.removeFile(file)
                kept.append((name, target))
            }
            return kept
        }

        /// Runs the user's editor on `file` through the shell, so `EDITOR="code --wait"` works.
        static func runEditor(on file: String) throws {
            let env = ProcessInfo.processInfo.environment
            let editor = [env["VISUAL"], env["EDITOR"]].compactMap { $0 }.first { !$0.isEmpty } ?? "vi"
            switch ForegroundCommand.run(editor + " \"$1\"", arguments: [file]) {
            case .exited(0):
                return
            case .notStarted(let code):
                throw CommandFailure(
                    message: "could not start the editor '\(editor)': \(String(cString: strerror(code)))",
                    code: .failure)
            case .exited(let status):
                throw CommandFailure(
                    message: "the editor '\(editor)' failed (status \(status)); the record was left as it was",
                    code: .failure)
            case .signalled(let signalNumber):
                throw CommandFailure(
                    message:
                        "the editor '\(editor)' was killed by signal \(signalNumber); the record was left as it was",
                    code: .failure)
            }
        }
    }

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new",
            abstract: "Create a record with fresh ids: an empty object, or a copy of a template.",
            discussion:
                "PATH must be inside the tree, end in .json and not exist yet. The new record gets a new refId and changesetId (a template's own ids are replaced) and is recorded as a new document, sent by the next push or sync."
        )
        @OptionGroup var global: GlobalOptions

        @Option(
            name: .long,
            help: ArgumentHelp("A JSON file whose content the record starts from.", valueName: "TEMPLATE")
        )
        var from: String?

        @Argument(help: "Where to create the record, e.g. contacts/ada.json.")
        var path: String

        func run() throws {
            try global.withWorkspace(readOnly: false) { workspace in
                let report = try workspace.editing.createDocument(
                    at: path, relativeTo: global.workingDirectory, template: from)
                try global.printResult(command: "new", report) {
                    Output.line("created  \(report.path)  (refId \(report.refId)); the next push or sync sends it")
                }
            }
        }
    }
}
