import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The commit files of a drive-layout remote, read on demand and kept for the run: whole
/// commits for what a pull applies, headers alone (the first line) for walks through
/// older history.
final class DriveCommitFiles: DriveCommitSource {
    let layout: DriveLayout
    private(set) var commits: [String: DriveCommit] = [:]
    private var headers: [String: DriveCommit.Header] = [:]
    /// Files a sync service made beside a commit file (`3 (conflicted copy).json`, …), by
    /// replica: read when a commit is not in its canonical file.
    private var copies: [String: [String]] = [:]

    init(layout: DriveLayout) { self.layout = layout }

    /// Reads and keeps the commit in `path`; nil while the file is incomplete.
    func load(_ path: String) -> DriveCommit? {
        guard let bytes = try? layout.files.readFile(path), let commit = DriveCommit.decode(bytes) else { return nil }
        commits[commit.id] = commit
        return commit
    }

    func noteCopy(_ name: String, of replica: String) { copies[replica, default: []].append(name) }

    func header(_ id: String) -> DriveCommit.Header? {
        if let commit = commits[id] { return commit.header }
        if let header = headers[id] { return header }
        guard let (replica, seq) = DriveCommit.parts(of: id), DriveLayout.isPlainName(replica) else { return nil }
        if let prefix = layout.files.readPrefix(layout.commitFile(replica, seq: seq)),
            let header = DriveCommit.decodeHeader(prefix[...]), header.commit == id
        {
            headers[id] = header
            return header
        }
        return commit(id)?.header
    }

    func commit(_ id: String) -> DriveCommit? {
        if let commit = commits[id] { return commit }
        guard let (replica, seq) = DriveCommit.parts(of: id), DriveLayout.isPlainName(replica) else { return nil }
        if let commit = load(layout.commitFile(replica, seq: seq)), commit.id == id { return commit }
        let names =
            copies[replica]
            ?? ((try? layout.files.listDirectory(layout.commits(replica))) ?? []).filter {
                DriveLayout.commitName($0).map { !$0.canonical && $0.seq == seq } ?? false
            }
        for name in names where DriveLayout.commitName(name)?.seq == seq {
            if let commit = load(layout.commits(replica) + "/" + name), commit.id == id { return commit }
        }
        return nil
    }

}
