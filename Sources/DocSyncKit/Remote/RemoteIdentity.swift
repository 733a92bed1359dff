import CLibGit2
import Foundation

/// Which remote a URL names, beside the one a tree last synced with (the remote its
/// cursor belongs to). A folder remote has an id, written once when it is created
/// (`.docsync/format`), and a folder cursor carries it. A git remote is the same remote
/// when its branch still holds the commit the tree synced with (a mirror or a new URL of
/// the same repository is the same remote; an unrelated repository is not).
///
/// Why: otherwise a mistyped `config remote.url` becomes a new, empty remote that every
/// sync fills, and correcting it resets the base, so documents deleted meanwhile come
/// back on every replica.
enum RemoteIdentity {
    enum Verdict: Equatable {
        /// The remote the tree synced with, or one it never synced with at all.
        case same
        /// Another remote: `reason` says how docsync knows.
        case different(String)
        /// Cannot be told without the network (a git URL that is not a local path); the
        /// next sync compares the histories and loses nothing either way.
        case unknown
    }

    /// A local git repository's path, or nil for a URL over the network.
    static func localGitPath(_ url: String) -> String? {
        guard let parsed = GitURL(url), parsed.scheme == .file else { return nil }
        return FileSystem.absolute(parsed.path)
    }

    /// Whether there is a remote at `url`: nil when that cannot be told without the network.
    static func exists(kind: RemoteKind, url: String) -> Bool? {
        switch kind {
        case .dir: return DirectoryRemote.isRemote(url)
        case .git:
            guard let path = localGitPath(url) else { return nil }
            return withRepository(at: path) { _ in true } ?? false
        }
    }

    /// Whether `url` is a local git repository without any branch yet: a new remote, which
    /// the first push starts. Nil when that cannot be told without the network.
    static func isEmptyGitRepository(_ url: String) -> Bool? {
        guard let path = localGitPath(url) else { return nil }
        guard let repo = try? GitRepository.openExisting(at: path),
            let branches = try? GitLocalFetch.branchNames(of: repo)
        else { return false }
        return branches.isEmpty
    }

    /// Makes a new, empty remote at `url` (a folder remote, or a bare git repository).
    static func create(kind: RemoteKind, url: String) throws {
        switch kind {
        case .dir: try FolderRemoteFormat.create(at: url, format: FolderRemoteFormat.forNewRemotes)
        case .git:
            guard let path = localGitPath(url) else { return }
            _ = try GitRepository.openOrCreateBare(at: path)
        }
    }

    /// Compares `url` with the remote that wrote `cursor` (the tree's last synced position).
    static func compare(cursor: String, kind: RemoteKind, url: String, branch: String) -> Verdict {
        let isGitCursor = cursor.hasPrefix(GitRemote.cursorPrefix)
        switch kind {
        case .dir:
            guard !isGitCursor, let syncedId = DirectoryRemote.Cursor(cursor)?.remoteId ?? DriveCursor(cursor)?.remoteId
            else {
                return .different("this tree last synced with a git repository, and \(url) is a folder remote")
            }
            let id =
                FolderRemoteFormat.of(url) == .drive
                ? (try? DriveFolderRemote(url: url).format())?.remoteId : try? DirectoryRemote(url: url).identity()
            guard let id else { return .different("\(url) is not a docsync remote") }
            return id == syncedId
                ? .same : .different("its remote id is \(id), and this tree last synced with remote \(syncedId)")
        case .git:
            guard isGitCursor else {
                return .different("this tree last synced with a folder remote, and \(url) is a git repository")
            }
            let commit = String(cursor.dropFirst(GitRemote.cursorPrefix.count))
            guard !commit.isEmpty else { return .same }
            guard let path = localGitPath(url) else { return .unknown }
            let holds = withRepository(at: path) { repo -> Bool in
                var head = git_oid()
                guard git_reference_name_to_id(&head, repo, "refs/heads/" + branch) == 0,
                    var synced = try? git_oid(hex: commit)
                else { return false }
                return git_oid_equal(&head, &synced) == 1 || git_graph_descendant_of(repo, &head, &synced) == 1
            }
            return holds == true
                ? .same
                : .different(
                    "its branch '\(branch)' does not hold commit \(commit.prefix(12)), the last one this tree synced with"
                )
        }
    }

    /// Runs `body` on the repository at `path`, if there is one (bare or not).
    private static func withRepository<T>(at path: String, _ body: (OpaquePointer) -> T) -> T? {
        guard let repo = try? GitRepository.openExisting(at: path) else { return nil }
        return body(repo.pointer)
    }
}
