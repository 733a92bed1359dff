extension RemoteChanges {
    /// The changes with every path and id that could escape the tree (or the conflict
    /// store) left out, each said in `warnings`. The engine's one check of what arrives
    /// from any remote, whatever the remote kind already checked: a remote is somebody
    /// else's folder or repository, and a refId or path from it names files here.
    func checked(url: String) -> RemoteChanges {
        var result = self
        result.entries = entries.filter { entry in
            if !RefID.isAcceptable(entry.refId) {
                result.warnings.append("\(url): refused document \(entry.refId.debugDescription): not an acceptable refId; not pulled")
                return false
            }
            if !entry.deleted, let problem = entry.path.map(DocumentPath.problem) ?? "no path" {
                result.warnings.append("\(url): refused path '\(DocumentPath.printable(entry.path ?? ""))' of document \(entry.refId.debugDescription): \(problem); not pulled")
                return false
            }
            return true
        }
        result.conflicts = conflicts.filter { shared in
            let record = shared.record
            let problem: String? = !RefID.isAcceptable(record.refId) || !RefID.isAcceptable(record.changesetId) ? "not acceptable ids"
                : record.replica.map { ReplicaID.isValid($0) ? nil : "not a replica id" } ?? nil
            guard let problem else { return true }
            result.warnings.append("\(url): refused a conflict record of \(record.refId.debugDescription): \(problem)")
            return false
        }
        return result
    }
}
