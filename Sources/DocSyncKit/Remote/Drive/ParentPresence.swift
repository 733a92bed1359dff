/// Whether the versions a commit's entries name as their parents are here: a commit
/// naming one that has not arrived is "not here yet", like one whose objects have not.
/// Read before it arrives, a merge across it is measured from a base older than the real
/// one (the versions the commits imply stand in for the missing link), so a field only
/// one side changed looks changed on both, and a value can be lost.
///
/// Looked up cheaply first: the versions of the commits this run read, and the versions
/// the tree holds (`held`; the usual parent is the version the pusher had synced, which
/// the reader has too). Then the commits of the version's maker (it pushed the version
/// first), newest first; only then every commit file (a version an upgrade's root commit
/// restated), which happens only while something has not arrived. Those older commits
/// are read here, not into the scan's `DriveCommitFiles`: there, a commit read is one
/// whose completeness is checked, down its whole history.
final class ParentPresence {
    private let layout: DriveLayout
    private let held: ((_ refId: String, _ changesetId: String) -> Bool)?
    /// Per version (refId, NUL, changesetId), the commits read that hold it.
    private var holders: [String: [String]] = [:]
    private var indexed = Set<String>()
    /// Per maker, the commit files not read yet, newest last (popped first).
    private var unread: [String: [String]] = [:]
    private var searchedAll = false

    init(read: some Sequence<DriveCommit>, layout: DriveLayout, held: ((String, String) -> Bool)?) {
        self.layout = layout
        self.held = held
        for commit in read { index(commit) }
    }

    /// The versions a commit names as parents that are not here. A version counts as
    /// here when the tree holds it or a commit holding it `counts` (has itself fully
    /// arrived): a parent held only by a commit still waiting for its objects is not here
    /// either, and read at once the merge would be measured from an older base.
    func missing(in commit: DriveCommit, counts: (_ commitId: String) -> Bool) -> Int {
        var count = 0
        for entry in commit.entries where entry.isDocument {
            for parent in entry.parents ?? [] where !isHere(entry.refId, parent, counts: counts) { count += 1 }
        }
        return count
    }

    func isHere(_ refId: String, _ changesetId: String, counts: (_ commitId: String) -> Bool) -> Bool {
        if held?(refId, changesetId) == true { return true }
        let key = refId + "\u{0}" + changesetId
        // A copy: `counts` may check other versions, and read more commits, meanwhile.
        if (holders[key] ?? []).contains(where: counts) { return true }
        if let maker = ChangesetID(changesetId)?.replica, DriveLayout.isPlainName(maker) {
            if unread[maker] == nil { unread[maker] = commitFiles(of: maker) }
            while let path = unread[maker]?.popLast() {
                guard let commit = load(path), index(commit) else { continue }
                if holders[key]?.contains(commit.id) == true, counts(commit.id) { return true }
            }
        }
        if !searchedAll {
            searchedAll = true
            let replicas = ((try? layout.files.listDirectory(layout.replicas)) ?? []).filter(DriveLayout.isPlainName)
            for replica in replicas.sorted() {
                for path in unread[replica] ?? commitFiles(of: replica) {
                    if let commit = load(path) { index(commit) }
                }
                unread[replica] = []
            }
            return (holders[key] ?? []).contains(where: counts)
        }
        return false
    }

    /// Notes the versions a commit holds; false when it was noted before.
    @discardableResult
    private func index(_ commit: DriveCommit) -> Bool {
        guard indexed.insert(commit.id).inserted else { return false }
        for entry in commit.entries where entry.isDocument && !entry.deleted {
            holders[entry.refId + "\u{0}" + entry.changesetId, default: []].append(commit.id)
        }
        return true
    }

    private func load(_ path: String) -> DriveCommit? {
        (try? layout.files.readFile(path)).flatMap(DriveCommit.decode)
    }

    /// A replica's commit files (and services' copies of them), oldest first.
    private func commitFiles(of replica: String) -> [String] {
        let folder = layout.commits(replica)
        return ((try? layout.files.listDirectory(folder)) ?? []).compactMap { name in
            DriveLayout.commitName(name).map { ($0.seq, $0.canonical ? 0 : 1, folder + "/" + name) }
        }.sorted { ($0.0, $0.1, $0.2) < ($1.0, $1.1, $1.2) }.map(\.2)
    }
}
