#if canImport(Glibc)
    import Glibc
#endif

/// Lock files (`*.lock`) that libgit2 left in the cache repository in `.docsync/git`.
///
/// libgit2 updates a ref, `packed-refs`, `HEAD` or `config` by writing `<name>.lock` and
/// renaming it over the file. A run killed between the two leaves the lock behind, and
/// every later fetch or push then fails with "failed to lock file … for writing". Why
/// this matters: that error reads as a network failure (exit 75), so cron stayed silent
/// while the tree never synced again (found by the random-kill tests, long mode).
///
/// Also the partial pack files (`objects/pack/pack_git2_*`) libgit2 writes a fetched or
/// pushed pack into before it indexes and renames it: a run killed meanwhile leaves one
/// behind, as large as the pack was when it died, that nothing ever removed.
///
/// Only a run holding the tree lock may call this: the cache repository is written by
/// such runs only, so no lock found then belongs to a write under way.
enum GitCacheLocks {
    /// Deletes the leftover lock files and partial packs, and returns their paths relative
    /// to `repository`.
    @discardableResult
    static func removeLeftovers(in repository: String) -> [String] {
        var removed: [String] = []
        for name in ["HEAD.lock", "config.lock", "packed-refs.lock", "FETCH_HEAD.lock", "index.lock", "shallow.lock"]
        where unlink(repository + "/" + name) == 0 {
            removed.append(name)
        }
        removeLockFiles(under: "refs", in: repository, into: &removed)
        for name in (try? FileSystem.listDirectory(repository + "/objects/pack")) ?? []
        where name.hasPrefix("pack_git2_") {
            if unlink(repository + "/objects/pack/" + name) == 0 { removed.append("objects/pack/" + name) }
        }
        return removed
    }

    /// Walks `relative` (a folder of refs) for `*.lock` files. Symlinks are not followed.
    private static func removeLockFiles(under relative: String, in repository: String, into removed: inout [String]) {
        guard let names = try? FileSystem.listDirectory(repository + "/" + relative) else { return }
        for name in names where name != "." && name != ".." {
            let path = relative + "/" + name
            guard let status = try? FileSystem.linkStatus(repository + "/" + path) else { continue }
            if status.isDirectory {
                removeLockFiles(under: path, in: repository, into: &removed)
            } else if name.hasSuffix(".lock"), unlink(repository + "/" + path) == 0 {
                removed.append(path)
            }
        }
    }
}
