import DocSyncJSON
import Foundation

/// `docsync verify`: the tree, the journal, the state and the remote checked.
public struct VerifyService: WorkspaceService {
    public let workspace: Workspace

    public init(workspace: Workspace) { self.workspace = workspace }

    // MARK: verify

    /// Checks the tree, the journal, the state and the remote. Returns every problem
    /// found (empty: all good).
    public func verify(includeRemote: Bool = true) -> [String] {
        var problems: [String] = []
        var scratch = SyncReport()
        if let local = try? recordLocalChanges(write: false, report: &scratch) {
            problems += local.problems.map { "tree: \($0)" }
            _ = local
        }
        do {
            let entries = try Journal(path: layout.journal).read(from: 0, repair: false)
            var last = 0
            for e in entries {
                if e.seq <= last { problems.append("journal: entry \(e.seq) is out of order (after \(last))") }
                last = e.seq
            }
        } catch {
            problems.append("journal: \(error.localizedDescription)")
        }
        for version in state.base.values.sorted(by: { $0.path < $1.path }) where (try? objects.get(version.hash)) == nil
        {
            problems.append(
                "state: base version of \(version.path) (\(version.changesetId)) is missing from .docsync/objects")
        }
        for action in state.pending {
            if let v = action.resultingVersion, !objects.contains(v.hash) {
                problems.append(
                    "journal: pending \(action.kind.rawValue) of \(v.path) refers to missing object \(v.hash)")
            }
        }
        var paths: [String: String] = [:]
        for v in state.tracked.values {
            if let other = paths[v.path] {
                problems.append("state: \(v.path) is claimed by both \(other) and \(v.refId)")
            }
            paths[v.path] = v.refId
        }
        if includeRemote, config["remote.url"] != nil, let remote = try? makeRemote() {
            problems += remote.verify()
        }
        return problems
    }
}
