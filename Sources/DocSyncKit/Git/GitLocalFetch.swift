import CLibGit2
import Foundation

/// A fetch from a repository this process opens itself (a path or `file://` URL, the
/// same rule as `GitLocalPush`): the branch is read from the remote's references and
/// the objects the cache lacks are copied from its object store (`GitObjectCopy`).
///
/// Why not libgit2's local transport: it packs every object in this process with a
/// delta search, then indexes that pack again; a clone of 100,000 documents spent most
/// of its time there. The result for the engine is the same: the same tracking
/// reference, the same objects reachable from it.
///
/// Safe against a concurrent push: the branch is read once, and only the objects that
/// commit reaches are copied (objects never change; a newer tip waits for the next
/// fetch). Safe against a concurrent `git gc`: an object that moved from a loose file
/// into a pack is found there (libgit2 looks again on a miss).
enum GitLocalFetch {
    /// The repository at a local `path`, or nil when there is none this process can
    /// open: the transport then fetches (and reports the problem as it always did).
    static func open(_ path: String) -> GitRepository? {
        try? GitRepository.openExisting(at: path)
    }

    /// Fetches `branch` of `remote` into `refs/remotes/origin/<branch>` of `cache`, as
    /// `GitTransport.fetch` does. Returns the names of the remote's branches (to explain
    /// a wrong branch).
    static func fetch(into cache: GitRepository, from remote: GitRepository, branch: String) throws -> [String] {
        let tracking = "refs/remotes/origin/\(branch)"
        // Read once: everything below copies what this commit needs, whatever moves meanwhile.
        let tip = try remote.referenceTarget("refs/heads/\(branch)")
        let names = try branchNames(of: remote)
        guard let tip else {
            // A branch deleted on the remote would leave a stale tracking ref behind.
            cache.deleteReference(tracking)
            return names
        }
        try GitObjectCopy.copyMissing(of: tip, from: remote, to: cache)
        try CrashPoint.hit("git.fetch-before-tracking-ref")
        // Only once every object is here: the tracking ref never names a commit the
        // cache cannot read.
        try cache.setReference(tracking, to: tip, message: "docsync fetch")
        return names
    }

    /// The remote's branches (`refs/heads/` left off). The corresponding libgit2
    /// function is `git_reference_iterator_glob_new`.
    static func branchNames(of remote: GitRepository) throws -> [String] {
        var iterator: OpaquePointer?
        try GitError.check(
            git_reference_iterator_glob_new(&iterator, remote.pointer, "refs/heads/*"),
            "git_reference_iterator_glob_new")
        defer { git_reference_iterator_free(iterator) }
        var names: [String] = []
        var name: UnsafePointer<CChar>?
        while true {
            let result = git_reference_next_name(&name, iterator)
            if result == GIT_ITEROVER.rawValue { break }
            try GitError.check(result, "git_reference_next_name")
            if let name { names.append(String(String(cString: name).dropFirst("refs/heads/".count))) }
        }
        return names
    }
}
