extension RemoteChanges {
    /// The changes with every path and id that could escape the tree (or the conflict
    /// store) left out, each said in `warnings`. The engine's one check of what arrives
    /// from any remote, whatever the remote kind already checked: a remote is somebody
    /// else's folder or repository, and a refId or path from it names files here.
    func checked(url: String) -> RemoteChanges {
        var result = self
        func problem(_ entry: RemoteEntry) -> String? {
            if !RefID.isAcceptable(entry.refId) {
                return "\(url): refused document \(entry.refId.debugDescription): not an acceptable refId; not pulled"
            }
            if !entry.deleted, let problem = entry.path.map(DocumentPath.problem) ?? "no path" {
                return
                    "\(url): refused path '\(DocumentPath.printable(entry.path ?? ""))' of document \(entry.refId.debugDescription): \(problem); not pulled"
            }
            return nil
        }
        // Copied only when something is refused: a clone's entries are the largest thing
        // a pull holds, and a filtered copy doubled them for nothing.
        if entries.contains(where: { problem($0) != nil }) {
            result.entries = entries.filter { entry in
                guard let problem = problem(entry) else { return true }
                result.warnings.append(problem)
                return false
            }
        }
        result.conflicts = conflicts.filter { shared in
            let record = shared.record
            let problem: String? =
                !RefID.isAcceptable(record.refId) || !RefID.isAcceptable(record.changesetId)
                ? "not acceptable ids"
                : record.replica.map { ReplicaID.isValid($0) ? nil : "not a replica id" } ?? nil
            guard let problem else { return true }
            result.warnings.append("\(url): refused a conflict record of \(record.refId.debugDescription): \(problem)")
            return false
        }
        return result
    }
}
