import DocSyncJSON
import Foundation

/// One document's semantic diff (`docsync diff`).
public struct DocumentDiff: Codable, Sendable {
    public var path: String
    /// nil for a file not yet recorded.
    public var refId: String?
    /// What the file was compared with: `base` (the last synced version), `remote`, or a changesetId.
    public var against: String
    /// The changesetId of the version compared with, when there is one.
    public var againstChangesetId: String?
    public var changes: [JSONDiff.Change]
    /// Why there is no field-level diff: `new`, `deleted`, or a side is not a valid document.
    public var note: String?

    public init(
        path: String, refId: String?, against: String, againstChangesetId: String?, changes: [JSONDiff.Change],
        note: String? = nil
    ) {
        (self.path, self.refId, self.against) = (path, refId, against)
        (self.againstChangesetId, self.changes, self.note) = (againstChangesetId, changes, note)
    }
}

extension HistoryService {
    /// What to compare with.
    public enum DiffTarget: Sendable, Equatable {
        case base, remote
        case changeset(String)

        public init(_ text: String?) {
            switch text?.lowercased() {
            case nil, "base": self = .base
            case "remote": self = .remote
            default: self = .changeset(text!)
            }
        }
    }

    /// The semantic diff of `docs` (paths or refIds; none: every document changed here
    /// since the last sync, and with `.remote` every one the remote changed too) against
    /// `target`. Reads the tree, the object store and, for `.remote` and changesets, the
    /// remote; changes nothing.
    public func diff(_ docs: [String], relativeTo cwd: String, against target: DiffTarget) throws -> [DocumentDiff] {
        var remoteChanged: [String: RemoteEntry] = [:]
        // One remote for the listing and the reads: a git remote reads from what it fetched.
        var remote: Remote?
        if case .remote = target {
            remote = try makeRemote()
            for entry in try remote!.changes(since: state.cursor).entries { remoteChanged[entry.refId] = entry }
        }
        let wanted = try wantedDocuments(docs, relativeTo: cwd, remoteChanged: remoteChanged)
        if case .changeset = target, docs.isEmpty {
            throw Workspace.Failure.gaveUp(
                "a changesetId names one document's version: give the document (docsync diff DOC --against ID)")
        }

        var out: [DocumentDiff] = []
        let io = SafeTreeIO(root: layout.root)
        for (refId, path) in wanted.sorted(by: { $0.path < $1.path }) {
            let current = try io.readIfPresent(path)
            var old: [UInt8]?
            var against = "base", oldId: String?
            switch target {
            case .base:
                if let refId, let base = state.baseVersions[refId] {
                    old = try objects.get(base.hash)
                    oldId = base.changesetId
                }
            case .remote:
                against = "remote"
                if let refId, let entry = remoteChanged[refId] {
                    if !entry.deleted, let remote { old = try remote.read(entry) }
                    oldId = entry.changesetId
                } else if let refId, let base = state.baseVersions[refId] {
                    old = try objects.get(base.hash)
                    oldId = base.changesetId
                }
            case .changeset(let id):
                guard let refId else {
                    throw Workspace.Failure.gaveUp("\(path) has no versions yet (it is not recorded)")
                }
                let found = try version(of: refId, named: path, path: path, at: id, exists: current != nil)
                old = found.bytes
                oldId = found.changesetId
                against = found.changesetId
            }
            let result = DocumentDiff(
                path: path, refId: refId, against: against, againstChangesetId: oldId, changes: [])
            if let compared = Self.compared(old, current, into: result) { out.append(compared) }
        }
        return out
    }

    /// The documents a diff covers, by refId (nil: not recorded yet) and path: those named,
    /// or every one changed here since the last sync and every one the remote changed.
    private func wantedDocuments(_ docs: [String], relativeTo cwd: String, remoteChanged: [String: RemoteEntry])
        throws -> [(refId: String?, path: String)]
    {
        var wanted: [(refId: String?, path: String)] = []
        // Once: each is made from the pending actions, and asked for every document.
        let tracked = state.trackedVersions, base = state.baseVersions
        if docs.isEmpty {
            let status = try workspace.sync.status()
            var seen = Set<String>()
            for change in status.pending + status.unrecorded {
                let known = tracked[change.refId] != nil || base[change.refId] != nil
                let key = known ? change.refId : "path:" + change.path
                if seen.insert(key).inserted { wanted.append((known ? change.refId : nil, change.path)) }
            }
            for (refId, entry) in remoteChanged.sorted(by: { $0.key < $1.key }) where seen.insert(refId).inserted {
                wanted.append((refId, tracked[refId]?.path ?? entry.path ?? refId))
            }
        } else {
            for doc in docs {
                let (refId, path) = try resolveDocument(doc, relativeTo: cwd)
                wanted.append((tracked[refId] != nil || base[refId] != nil ? refId : nil, path ?? doc))
            }
        }
        return wanted
    }

    /// `result` with the changes from `old` to `current` (nil: none, or neither exists).
    /// refId and changesetId are docsync's, not the user's edits: not shown.
    static func compared(_ old: [UInt8]?, _ current: [UInt8]?, into result: DocumentDiff) -> DocumentDiff? {
        var result = result
        // refId and changesetId are docsync's, not the user's edits: not shown.
        switch (old, current) {
        case (nil, nil): return nil
        case (nil, let now?):
            result.note = "new"
            do {
                let value = try JSONValueParser.parseDocument(now)
                result.changes = [
                    JSONDiff.Change(
                        pointer: "", kind: .added, old: nil,
                        new: JSONValueWriter.compactString(value.removing(.both)))
                ]
            } catch {
                result.note = "new, not a valid document: \(error.line):\(error.column): \(error.reason)"
            }
        case (let was?, nil):
            result.note = "deleted"
            result.changes =
                (try? JSONValueParser.parse(was)).map {
                    [
                        JSONDiff.Change(
                            pointer: "", kind: .removed, old: JSONValueWriter.compactString($0.removing(.both)),
                            new: nil)
                    ]
                } ?? []
        case (let was?, let now?):
            guard let a = try? JSONValueParser.parse(was) else {
                result.note = "the version compared with is not valid JSON"
                break
            }
            do {
                let b = try JSONValueParser.parseDocument(now)
                result.changes = JSONDiff.changes(from: a.removing(.both), to: b.removing(.both))
            } catch {
                result.note = "not a valid document: \(error.line):\(error.column): \(error.reason)"
            }
        }
        return result.changes.isEmpty && result.note == nil ? nil : result
    }
}
