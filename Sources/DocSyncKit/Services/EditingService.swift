import DocSyncJSON
import Foundation

/// Why an edited record was refused, with where in the edited text (1-based).
public struct EditProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public var reason: String

    public var description: String { "\(line):\(column): \(reason)" }
}

/// What `docsync edit` or `docsync new` did.
public struct EditReport: Codable, Sendable {
    public var schemaVersion = 1
    public var path: String
    public var refId: String
    /// The record's changesetId afterwards (nil when nothing changed).
    public var changesetId: String?
    /// `updated`, `unchanged`, `created`, or `rejected`.
    public var outcome: String
    /// Where the refused text was kept (`rejected` only).
    public var rejectedCopy: String? = nil
    public var problem: String? = nil

    public init(
        path: String, refId: String, changesetId: String?, outcome: String, rejectedCopy: String? = nil,
        problem: String? = nil
    ) {
        (self.path, self.refId, self.changesetId, self.outcome) = (path, refId, changesetId, outcome)
        (self.rejectedCopy, self.problem) = (rejectedCopy, problem)
    }
}

/// `docsync edit`, `new` and `rm`: changes made through docsync rather than an editor.
public struct EditingService: WorkspaceService {
    public let workspace: Workspace

    public init(workspace: Workspace) { self.workspace = workspace }
    // MARK: edit

    /// The record `doc` names (a path relative to `cwd`, or a refId): its path in the
    /// tree, refId and bytes as they are on disk now.
    public func editableDocument(_ doc: String, relativeTo cwd: String) throws -> (
        path: String, refId: String, bytes: [UInt8]
    ) {
        let (refId, path) = try resolveDocument(doc, relativeTo: cwd)
        guard let path, let bytes = try SafeTreeIO(root: layout.root).readIfPresent(path) else {
            throw Workspace.Failure.notTracked(doc)
        }
        return (path, refId, bytes)
    }

    /// Checks an edited record against the version it was edited from: valid JSON, an
    /// object, and the reserved fields as they were (the refId is the record's identity,
    /// the changesetId is docsync's to set).
    public static func checkEdit(original: [UInt8], edited: [UInt8]) -> EditProblem? {
        let scanned: ScannedDocument
        do { scanned = try JSONScanner.scanDocument(edited) } catch {
            return EditProblem(line: error.line, column: error.column, reason: error.reason)
        }
        let before = try? JSONScanner.scanDocument(original)
        for key in ["refId", "changesetId"] {
            let was = before?.member(named: key)
            let now = scanned.member(named: key)
            guard was?.stringValue != now?.stringValue || was?.kind != now?.kind else { continue }
            let at = JSONScanner.location(of: now?.valueRange.lowerBound ?? scanned.openBrace, in: edited)
            let reason =
                key == "refId"
                ? "\"refId\" is the record's identity and cannot change (it was \(was?.stringValue.map { "\"\($0)\"" } ?? "absent"))"
                : "\"changesetId\" is set by docsync; leave it as it was (\(was?.stringValue.map { "\"\($0)\"" } ?? "absent"))"
            return EditProblem(line: at.line, column: at.column, reason: reason)
        }
        return nil
    }

    /// Checks an edited record against its JSON Schema (see RecordSchemas): the edit is
    /// refused like invalid JSON, at the first failing member, with every error.
    public static func checkSchema(_ edited: [UInt8], path: String, schemas: RecordSchemas) -> EditProblem? {
        guard schemas.mightApply(to: edited), let scanned = try? JSONScanner.scanDocument(edited) else { return nil }
        let problems = schemas.verdict(path: path, bytes: edited).problems
        guard let first = problems.first else { return nil }
        // The editor is sent to the top-level member the first error is in.
        // (The first non-empty token, as before: a member named "" is skipped.)
        let key = first.pointer.flatMap { JSONPointer.tokens($0)?.first(where: { !$0.isEmpty }) }
        let offset = key.flatMap { scanned.member(named: $0)?.valueRange.lowerBound } ?? scanned.openBrace
        let at = JSONScanner.location(of: offset, in: edited)
        let reasons = problems.map { p in p.pointer.map { ($0.isEmpty ? "(root)" : $0) + ": " + p.reason } ?? p.reason }
        return EditProblem(
            line: at.line, column: at.column, reason: "fails its schema: " + reasons.joined(separator: "; "))
    }

    /// Keeps refused text under `.docsync/rejected/<name>.<time>.json` (`<time>-2`, `-3`…
    /// when that name is taken: never over another refused text); returns that path.
    public func keepRejected(_ bytes: [UInt8], for path: String) throws -> String {
        let folder = layout.metadata + "/rejected"
        try FileSystem.createDirectories(folder)
        let name = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        let stamp = Timestamp.rfc3339(FileSystem.currentTimeNanos / 1_000_000).replacingOccurrences(
            of: ":", with: "")
        var attempt = 1
        while true {
            let target = folder + "/\(name).\(stamp)\(attempt == 1 ? "" : "-\(attempt)").json"
            if try FileSystem.createNew(target, bytes) { return target }
            attempt += 1
        }
    }

    /// Replaces the record at `path` with `edited` (already checked) atomically and
    /// records the change like any edit. Refused if the file changed on disk since
    /// `original` was read (nothing is written over an edit made meanwhile).
    public func applyEdit(path: String, refId: String, original: [UInt8], edited: [UInt8]) throws
        -> EditReport
    {
        var report = SyncReport()
        _ = try recordLocalChanges(write: true, report: &report)
        let io = SafeTreeIO(root: layout.root)
        let current = try io.readIfPresent(path)
        if edited == original {
            return EditReport(path: path, refId: refId, changesetId: nil, outcome: "unchanged")
        }
        // The recorder may have stamped a changesetId into an unrecorded edit: compare
        // without it, and keep the new id if that is all that changed.
        guard let current, Self.sameExceptChangeset(current, original) else {
            throw Workspace.Failure.gaveUp(
                "\(path) changed on disk while it was being edited; nothing was written. Run `docsync edit` again"
            )
        }
        var bytes = edited
        if current != original, let scanned = try? JSONScanner.scanDocument(edited),
            let id = (try? JSONScanner.scanDocument(current))?.member(named: "changesetId")?.stringValue
        {
            bytes = IdentityStamper.stamp(edited, scanned: scanned, refId: nil, changesetId: id)
        }
        let mode =
            (try? FileSystem.linkStatus(layout.absolute(path))).map { mode_t($0.mode & 0o7777) } ?? 0o644
        try FileSystem.writeAtomically(layout.absolute(path), bytes, mode: mode)
        var recorded = SyncReport()
        _ = try recordLocalChanges(write: true, report: &recorded)
        return EditReport(
            path: path, refId: refId, changesetId: state.trackedVersions[refId]?.changesetId, outcome: "updated")
    }

    static func sameExceptChangeset(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        if a == b { return true }
        guard let sa = try? JSONScanner.scanDocument(a), let sb = try? JSONScanner.scanDocument(b)
        else { return false }
        return IdentityStamper.stamp(a, scanned: sa, refId: nil, changesetId: "x")
            == IdentityStamper.stamp(b, scanned: sb, refId: nil, changesetId: "x")
    }

    // MARK: new

    public enum NewRecordError: Error, LocalizedError {
        case exists(String)
        case outside(String)
        case notJSONName(String)
        case badTemplate(String, String)

        public var errorDescription: String? {
            switch self {
            case .exists(let path):
                return
                    "\(path) already exists; docsync new never overwrites a file (edit it with `docsync edit \(path)`)"
            case .outside(let path):
                return "\(path) is outside the working tree (or inside .docsync/); give a path in the tree"
            case .notJSONName(let path): return "\(path): a record's name must end in .json"
            case .badTemplate(let path, let reason): return "template \(path): \(reason)"
            }
        }
    }

    /// Creates a record at `path` (relative to `cwd`): `{}`, or a copy of `template`,
    /// with a fresh refId and changesetId, and records it as a new document.
    public func createDocument(at path: String, relativeTo cwd: String, template: String?) throws
        -> EditReport
    {
        let absolute = TreeLayout.userPath(path, from: cwd)
        guard let relative = layout.relative(absolute) else { throw NewRecordError.outside(path) }
        guard relative.hasSuffix(".json"), relative.count > 5 else {
            throw NewRecordError.notJSONName(path)
        }
        guard relative != ".docsync", !relative.hasPrefix(".docsync/"), DocumentPath.isSafe(relative)
        else { throw NewRecordError.outside(path) }
        if FileSystem.exists(absolute) || (try? FileSystem.linkStatus(absolute)) != nil {
            throw NewRecordError.exists(path)
        }
        var content = Array("{}\n".utf8)
        if let template {
            let templatePath = FileSystem.absolute(
                template.hasPrefix("/") ? template : FileSystem.join(cwd, template))
            do { content = try FileSystem.readFile(templatePath) } catch {
                throw NewRecordError.badTemplate(template, "cannot read it (\(error.localizedDescription))")
            }
        }
        let scanned: ScannedDocument
        do { scanned = try JSONScanner.scanDocument(content) } catch {
            throw NewRecordError.badTemplate(
                template ?? "{}", "\(error.line):\(error.column): \(error.reason)")
        }
        var report = SyncReport()
        _ = try recordLocalChanges(write: true, report: &report)
        let refId = RefID.generate()
        let stamped = IdentityStamper.stamp(
            content, scanned: scanned, refId: refId, changesetId: clock.next().description)
        // Stored first: the recorder keeps an id only where it knows the id names this content.
        try objects.put(stamped)
        try objects.flush()
        try clock.persist()
        do { try SafeTreeIO(root: layout.root).write(relative, stamped) } catch let refused
            as SafeTreeIO.Refused
        {
            throw Workspace.Failure.gaveUp("refused to write \(refused.description)")
        }
        var recorded = SyncReport()
        _ = try recordLocalChanges(write: true, report: &recorded)
        return EditReport(
            path: relative, refId: refId, changesetId: state.trackedVersions[refId]?.changesetId,
            outcome: "created")
    }
}

extension EditingService {
    // MARK: rm

    /// Deletes tracked documents (paths relative to `cwd`) and records the deletions.
    public func remove(paths: [String], relativeTo cwd: String, dryRun: Bool) throws -> SyncReport {
        let byPath = Dictionary(state.tracked.values.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
        var targets: [String] = []
        for path in paths {
            guard let relative = layout.relative(TreeLayout.userPath(path, from: cwd)) else {
                throw Workspace.Failure.notTracked(path)
            }
            guard byPath[relative] != nil else { throw Workspace.Failure.notTracked(path) }
            targets.append(relative)
        }
        var report = SyncReport()
        report.dryRun = dryRun
        if dryRun {
            report.recorded = targets.map {
                ChangeSummary(kind: .delete, path: $0, refId: byPath[$0]!.refId, changesetId: byPath[$0]!.changesetId)
            }
            return report
        }
        // Record first, so any unrecorded edit to these files is journaled (and its
        // content kept) before the file goes.
        _ = try recordLocalChanges(write: true, report: &report)
        for path in targets { try FileSystem.removeFile(layout.absolute(path)) }
        var second = SyncReport()
        _ = try recordLocalChanges(write: true, report: &second)
        report.recorded += second.recorded
        report.pendingAfter = Set(state.pending.compactMap(\.refId)).count
        return report
    }
}
