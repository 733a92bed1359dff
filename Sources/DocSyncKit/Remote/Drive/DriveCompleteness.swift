import Foundation

/// Whether each commit read in one scan can be used yet: its objects are here, every
/// parent version it names is held by a commit that counts, and its chain reaches a
/// commit read before (or the layout's base). Answers are kept for the scan.
final class DriveCompleteness {
    private let files: DriveCommitFiles
    private let objects: ObjectStore
    private let layout: DriveLayout
    private let held: ((String, String) -> Bool)?
    private let base: String?
    private let cursorTip: String?
    /// The highest commit number of each replica read before this scan.
    private let known: [String: Int]
    private var completeness: [String: Bool] = [:]
    private(set) var missingObjects: [String: Int] = [:]
    private(set) var missingParents: [String: Int] = [:]
    private var presence: ParentPresence?

    init(
        files: DriveCommitFiles, objects: ObjectStore, layout: DriveLayout, held: ((String, String) -> Bool)?,
        base: String?, cursor: DriveCursor?
    ) {
        self.files = files
        self.objects = objects
        self.layout = layout
        self.held = held
        self.base = base
        self.cursorTip = cursor?.tip
        self.known = cursor?.seen ?? [:]
    }

    /// Whether a commit was judged and found not complete (yet).
    func isKnownIncomplete(_ id: String) -> Bool { completeness[id] == false }

    func isComplete(_ id: String) -> Bool {
        if let known = completeness[id] { return known }
        guard let commit = files.commits[id] else { return false }
        completeness[id] = false  // a cycle (a crafted file) is never complete
        let ok = hasEverything(commit) && reachesKnownHistory(commit)
        completeness[id] = ok
        return ok
    }

    /// Its objects, and the commits holding the parent versions it names.
    private func hasEverything(_ commit: DriveCommit) -> Bool {
        let missing = commit.neededObjects.filter { !objects.contains($0) }.count
        if missing > 0 { missingObjects[commit.id] = missing }
        guard missing == 0 else { return false }
        guard commit.entries.contains(where: { !($0.parents ?? []).isEmpty }) else { return true }
        let checker = presence ?? ParentPresence(read: files.commits.values, layout: layout, held: held)
        presence = checker
        let absent = checker.missing(in: commit, counts: counts)
        if absent > 0 { missingParents[commit.id] = absent }
        return absent == 0
    }

    /// Its parent is complete, or was read before; a root only if it is the base.
    private func reachesKnownHistory(_ commit: DriveCommit) -> Bool {
        guard let parent = commit.header.parent else { return base == nil || commit.id == base }
        if files.commits[parent] != nil { return isComplete(parent) }
        guard let parts = DriveCommit.parts(of: parent) else { return false }
        return parts.seq <= known[parts.replica] ?? 0 || parent == cursorTip
    }

    /// Whether a commit holding a parent version counts: read before, or read now
    /// and complete itself.
    func counts(_ id: String) -> Bool {
        if id == base || id == cursorTip { return true }
        if let parts = DriveCommit.parts(of: id), parts.seq <= known[parts.replica] ?? 0 { return true }
        return files.commits[id] != nil && isComplete(id)
    }

    /// A root that is not the base: an upgrade that died before its commit point.
    func isDeadRoot(_ id: String) -> Bool {
        guard let header = files.commits[id]?.header else { return false }
        return header.parent == nil && base != nil && id != base
    }
}
