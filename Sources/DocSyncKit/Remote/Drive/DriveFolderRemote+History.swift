import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A document's versions on the tip's chain, and `verify`.
extension DriveFolderRemote {
    // MARK: History

    /// The tip's chain, newest first, with whole commits.
    func chain(files: DriveCommitFiles, format: Format) throws -> [DriveCommit] {
        let scan = try scan(from: nil, format: format, files: files)
        var out: [DriveCommit] = []
        var id = scan.tip?.commit
        while let current = id, let commit = files.commit(current) {
            out.append(commit)
            id = commit.header.parent
        }
        return out
    }

    public func history(of refId: String, path: String?) throws -> [RemoteVersionInfo] {
        let format = try format()
        let files = DriveCommitFiles(layout: layout)
        var versions: [RemoteVersionInfo] = []
        var seen = Set<String>()
        for commit in try chain(files: files, format: format) {
            for e in commit.entries.reversed()
            where e.refId == refId && seen.insert(e.changesetId + (e.deleted ? "-" : "")).inserted {
                versions.append(
                    RemoteVersionInfo(
                        id: commit.id, changesetId: e.changesetId, time: e.time, author: e.replica,
                        path: e.path, hash: e.hash, deleted: e.deleted))
            }
        }
        return versions
    }

    public func content(of version: RemoteVersionInfo, refId: String) throws -> [UInt8] {
        try FolderRemoteFiles.content(of: version, refId: refId, objects: objects, url: displayURL, ceiling: ceiling)
    }

    // MARK: Verify

    /// Checks what the remote's state needs: every commit on the tip's chain readable and
    /// every current version in objects/ with its hash. The readable view may lag on a
    /// drive (a copy not arrived yet, a push that died after its commit): not a problem.
    public func verify() -> [String] {
        // Any symlink under the root, read or not (the perimeter: see RemotePerimeter).
        var problems = layout.files.strangeEntries()
        do {
            let format = try format()
            let files = DriveCommitFiles(layout: layout)
            let scan = try scan(from: nil, format: format, files: files)
            guard let tip = scan.tip else { return problems }
            guard let state = DriveHistory.state(at: tip.commit, in: files) else {
                return problems + ["remote: a commit on the chain to \(tip.commit) cannot be read"]
            }
            var paths: [String: String] = [:]
            for e in state where e.isDocument && !e.deleted {
                if let problem = DirectoryRemote.problem(of: e) { problems.append("remote: \(problem)") }
                if let path = e.path {
                    if let other = paths[path] {
                        problems.append("remote: \(path) is claimed by both \(other) and \(e.refId)")
                    }
                    paths[path] = e.refId
                }
                do { _ = try read(e.entry) } catch { problems.append("remote: " + error.localizedDescription) }
            }
        } catch {
            problems.append(error.localizedDescription)
        }
        return problems
    }
}
