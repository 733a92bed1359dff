import Foundation

extension GitRemote {
    /// The tree changes of one push and the lines of its commit message, built write by write.
    struct PushPlan {
        /// Removals go first: a document may take over a path another one leaves in the
        /// same push (deleted here, or moved away).
        var removals: [GitRepository.TreeChange] = []
        var changes: [GitRepository.TreeChange] = []
        /// One line per change, for the commit message's body.
        var lines: [String] = []
        /// How many changes of each kind (`create`, `delete`, …), for its title.
        var counts: [String: Int] = [:]

        /// The title's counts: `2 create, 1 delete`, kinds in name order.
        var summary: String {
            counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        }

        mutating func add(_ write: RemoteWrite, replica: String, time: Int64, url: String) throws {
            let tombstonePath = GitRemote.tombstoneFolder + DocumentPath.fileName(forRefId: write.refId) + ".json"
            let movedPath = GitRemote.movedFolder + DocumentPath.fileName(forRefId: write.refId) + ".json"
            if let previous = write.previous, previous.path != write.new?.path { removals.append((previous.path, nil)) }
            if let movedAt = write.movedAt, let new = write.new {
                let record = MovedRecord(refId: write.refId, path: new.path, movedAt: movedAt, replica: replica)
                let bytes = Array(try LineEncoding.json(record).utf8) + [10]
                changes.append((movedPath, { bytes }))
            } else if write.new == nil {
                removals.append((movedPath, nil))
            }
            if let new = write.new {
                guard DocumentPath.isSafe(new.path) else {
                    throw RemoteError.unsafe(url: url, reason: "path \(new.path)")
                }
                changes.append((new.path, { try write.content() ?? [] }))  // never nil: `new` is set
                removals.append((tombstonePath, nil))
                let kind = Self.kind(of: write, new: new)
                counts[kind, default: 0] += 1
                lines.append(
                    "\(kind) \(new.path)"
                        + (write.previous.map { $0.path != new.path ? " (from \($0.path))" : "" } ?? ""))
            } else {
                let tombstone = RemoteEntry.deletion(by: write, replica: replica, time: time)
                let bytes = Array(try tombstone.encodedLine().utf8) + [10]
                changes.append((tombstonePath, { bytes }))
                counts["delete", default: 0] += 1
                lines.append("delete \(write.previous?.path ?? write.refId)")
            }
        }

        mutating func add(_ shared: SharedConflict) throws {
            let paths = GitRemote.conflictPaths(shared.record)
            let meta = Array(try LineEncoding.json(shared.record).utf8) + [10]
            changes.append((paths.meta, { meta }))
            if let bytes = shared.bytes { changes.append((paths.bytes, { bytes })) }
            let what = shared.record.isOpen ? "conflict" : "resolve"
            counts[what, default: 0] += 1
            lines.append("\(what) \(shared.record.path) (\(shared.record.changesetId))")
        }

        /// What a write does to a document that stays: `create`, `update`, `rename` (same
        /// bytes elsewhere) or `move+update`.
        static func kind(of write: RemoteWrite, new: DocVersion) -> String {
            guard let previous = write.previous else { return "create" }
            guard previous.path != new.path else { return "update" }
            return previous.hash == new.hash ? "rename" : "move+update"
        }
    }
}
