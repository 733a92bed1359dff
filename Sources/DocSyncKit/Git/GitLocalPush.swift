import CLibGit2
import Foundation

/// A push to a repository this process opens itself: a path or `file://` URL, on a local
/// disk or an NFS or SMB mount.
///
/// Why not libgit2's local transport: it reads the branch when it connects and later
/// writes it unconditionally (`git_reference_create` with force), so of two replicas
/// pushing at the same moment the later one erased the other's commit, and both reported
/// success. Here the branch moves by compare-and-swap against the commit the push was
/// built on, under the same `refs/heads/<branch>.lock` that git's receive-pack takes, so
/// it is safe against other docsync runs and against plain `git push` alike. A branch
/// that moved is refused (`nonFastForward`), as a server refuses it, and the caller
/// fetches and retries.
///
/// Order, each step safe to die after: the objects the repository lacks are written
/// first (unreferenced objects are harmless; `git gc` prunes them), then the branch moves.
enum GitLocalPush {
    /// Pushes `commit` (in `source`) to `branch` of the repository at `path`, if the
    /// branch is still at `expected` (nil: the branch must not exist yet).
    static func push(
        from source: GitRepository, commit: GitOID, toRepositoryAt path: String, branch: String,
        expected: GitOID?
    ) throws {
        let repository = try open(path)
        defer { withExtendedLifetime(repository) {} }
        // The objects first (see `GitObjectCopy` for their order), then the branch.
        try GitObjectCopy.copyMissing(of: commit, from: source, to: repository)
        try CrashPoint.hit("git.before-ref-update")
        try moveBranch(of: repository.pointer, branch: branch, to: commit, expected: expected)
    }

    private static func open(_ path: String) throws -> GitRepository {
        let repo = try GitRepository.openExisting(at: path)
        guard repo.isBare else {
            // Pushing into a checked-out branch would leave its working tree stale; git
            // refuses it too (receive.denyCurrentBranch).
            throw GitError(
                code: GIT_EBAREREPO.rawValue, function: "git_repository_is_bare",
                message: "\(path) has a working tree; a remote must be a bare repository (`git init --bare`)")
        }
        return repo
    }

    /// The compare-and-swap. The corresponding libgit2 functions are
    /// `git_reference_create_matching` (the branch must still be at `expected`) and
    /// `git_reference_create` without force (the branch must not exist yet).
    private static func moveBranch(of repo: OpaquePointer, branch: String, to commit: GitOID, expected: GitOID?) throws
    {
        let name = "refs/heads/" + branch
        var new = try git_oid(hex: commit)
        var reference: OpaquePointer?
        let result: Int32
        if let expected {
            var old = try git_oid(hex: expected)
            result = git_reference_create_matching(&reference, repo, name, &new, 1, &old, "docsync push")
        } else {
            result = git_reference_create(&reference, repo, name, &new, 0, "docsync push")
        }
        git_reference_free(reference)
        guard result < 0 else { return }
        let failure = GitError.last(result, "git_reference_create_matching")
        switch result {
        case GIT_EMODIFIED.rawValue, GIT_EEXISTS.rawValue, GIT_ENOTFOUND.rawValue:
            throw GitError(
                code: GitError.nonFastForward, function: failure.function,
                message: "rejected: \(name) moved since this push was built (non-fast-forward)")
        case GIT_ELOCKED.rawValue:
            // Another writer holds the branch's lock file right now: `handleLockedRef`
            // waits for it, or removes it once it is stale.
            throw GitError(
                code: GitError.nonFastForward, function: failure.function, message: "rejected: \(failure.message)")
        default:
            throw failure
        }
    }
}
