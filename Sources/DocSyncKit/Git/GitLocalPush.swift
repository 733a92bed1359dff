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
        let target = repository.pointer
        var sourceOdb: OpaquePointer?
        var targetOdb: OpaquePointer?
        try GitError.check(git_repository_odb(&sourceOdb, source.pointer), "git_repository_odb")
        defer { git_odb_free(sourceOdb) }
        try GitError.check(git_repository_odb(&targetOdb, target), "git_repository_odb")
        defer { git_odb_free(targetOdb) }

        let missing = try missingObjects(of: commit, in: source, odb: targetOdb!)
        if missing.count > GitPackWriter.looseLimit {
            try writePack(missing, from: source, into: git_repository_path(target).map { String(cString: $0) } ?? path)
        } else {
            // Children before parents: a push cut short (a full disk) must never leave a
            // tree or commit whose objects are missing, since the next walk stops there.
            try copyLoose(missing.reversed(), from: sourceOdb!, to: targetOdb!)
        }
        try CrashPoint.hit("git.before-ref-update")
        try moveBranch(of: target, branch: branch, to: commit, expected: expected)
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

    /// The objects reachable from `commit` that the target lacks, every object before
    /// the objects it refers to (so reversed, children come first). A walk
    /// stops at every object the target has: a repository that has a tree or commit has
    /// everything it reaches (git's connectivity rule), so a small push reads only the
    /// trees on its changed paths.
    static func missingObjects(of commit: GitOID, in source: GitRepository, odb target: OpaquePointer) throws
        -> [git_oid]
    {
        var missing: [git_oid] = []
        var seen = Set<String>()
        func isNeeded(_ oid: git_oid) -> Bool {
            var copy = oid
            return git_odb_exists(target, &copy) == 0 && seen.insert(copy.hex).inserted
        }
        // Depth first from `start`: each object the target lacks, then what it refers to.
        func walk(_ start: [git_oid], referredTo: (inout git_oid) throws -> [git_oid]) throws {
            var pending = start
            while var next = pending.popLast() {
                guard isNeeded(next) else { continue }
                missing.append(next)
                pending += try referredTo(&next)
            }
        }
        var trees: [git_oid] = []
        try walk([try git_oid(hex: commit)]) { next in
            var object: OpaquePointer?
            try GitError.check(git_commit_lookup(&object, source.pointer, &next), "git_commit_lookup")
            defer { git_commit_free(object) }
            trees.append(git_commit_tree_id(object)!.pointee)
            return (0..<git_commit_parentcount(object)).map { git_commit_parent_id(object, $0)!.pointee }
        }
        try walk(trees) { next in
            var tree: OpaquePointer?
            try GitError.check(git_tree_lookup(&tree, source.pointer, &next), "git_tree_lookup")
            defer { git_tree_free(tree) }
            var subtrees: [git_oid] = []
            for i in 0..<git_tree_entrycount(tree) {
                guard let entry = git_tree_entry_byindex(tree, i) else { continue }
                let oid = git_tree_entry_id(entry)!.pointee
                switch git_tree_entry_type(entry) {
                case GIT_OBJECT_TREE: subtrees.append(oid)
                case GIT_OBJECT_BLOB: if isNeeded(oid) { missing.append(oid) }
                default: break  // a submodule's commit lives in another repository
                }
            }
            return subtrees
        }
        return missing
    }

    /// A few objects go loose, as git's receive-pack keeps fewer than
    /// `receive.unpackLimit` (100): a pack per small push would pile up packs.
    private static func copyLoose(
        _ objects: ReversedCollection<[git_oid]>, from source: OpaquePointer, to target: OpaquePointer
    ) throws {
        for var oid in objects {
            var object: OpaquePointer?
            try GitError.check(git_odb_read(&object, source, &oid), "git_odb_read")
            defer { git_odb_object_free(object) }
            var written = git_oid()
            try GitError.check(
                git_odb_write(
                    &written, target, git_odb_object_data(object), git_odb_object_size(object),
                    git_odb_object_type(object)), "git_odb_write")
        }
    }

    /// Many objects go as one pack with its index, written by libgit2's indexer into the
    /// target's `objects/pack` (a temporary name, then renamed into place).
    private static func writePack(_ objects: [git_oid], from source: GitRepository, into gitDir: String) throws {
        var builder: OpaquePointer?
        try GitError.check(git_packbuilder_new(&builder, source.pointer), "git_packbuilder_new")
        defer { git_packbuilder_free(builder) }
        git_packbuilder_set_threads(builder, 0)
        for var oid in objects {
            try GitError.check(git_packbuilder_insert(builder, &oid, nil), "git_packbuilder_insert")
        }
        let folder = (gitDir.hasSuffix("/") ? gitDir : gitDir + "/") + "objects/pack"
        try GitError.check(git_packbuilder_write(builder, folder, 0, nil, nil), "git_packbuilder_write")
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
