import CLibGit2
import Foundation

/// Copies the objects one repository lacks from another that this process opens itself,
/// object store to object store: the push into a local-path remote (`GitLocalPush`) and
/// the fetch from one (`GitLocalFetch`) are the same copy in opposite directions.
///
/// Why not libgit2's transport: for a path it builds a pack in this process (a delta
/// search over every blob), then indexes it again, mapping the growing pack file after
/// every object. Here each missing object is read once and written once, no deltas.
///
/// Order, each step safe to die after: few objects go loose children first, many go as
/// one pack renamed into place whole, so a copy cut short never leaves a tree or commit
/// whose objects are missing (the next walk stops at what the target has).
enum GitObjectCopy {
    /// Copies every object reachable from `commit` in `source` that `target` lacks.
    /// Returns how many were copied.
    @discardableResult
    static func copyMissing(of commit: GitOID, from source: GitRepository, to target: GitRepository) throws -> Int {
        var targetOdb: OpaquePointer?
        try GitError.check(git_repository_odb(&targetOdb, target.pointer), "git_repository_odb")
        defer { git_odb_free(targetOdb) }
        let missing = try missingObjects(of: commit, in: source, odb: targetOdb!)
        guard !missing.isEmpty else { return 0 }
        var sourceOdb: OpaquePointer?
        try GitError.check(git_repository_odb(&sourceOdb, source.pointer), "git_repository_odb")
        defer { git_odb_free(sourceOdb) }
        if missing.count > GitPackWriter.looseLimit {
            try copyPacked(missing, from: sourceOdb!, to: target)
        } else {
            // Children before parents: see the type's comment.
            try copyLoose(missing.reversed(), from: sourceOdb!, to: targetOdb!)
        }
        return missing.count
    }

    /// The objects reachable from `commit` that the target lacks, every object before
    /// the objects it refers to (so reversed, children come first). A walk
    /// stops at every object the target has: a repository that has a tree or commit has
    /// everything it reaches (git's connectivity rule), so a small copy reads only the
    /// trees on its changed paths.
    static func missingObjects(of commit: GitOID, in source: GitRepository, odb target: OpaquePointer) throws
        -> [git_oid]
    {
        var missing: [git_oid] = []
        var seen = Set<GitPackWriter.ObjectKey>()
        func isNeeded(_ oid: git_oid) -> Bool {
            // Seen first: every commit's trees list their blobs again, and each store
            // lookup of a missing object is a system call (the loose file's path).
            guard seen.insert(GitPackWriter.ObjectKey(oid)).inserted else { return false }
            var copy = oid
            // Without a refresh: a miss would otherwise list the pack folder again, per
            // object. An object another process added meanwhile is at worst copied twice.
            return git_odb_exists_ext(target, &copy, UInt32(GIT_ODB_LOOKUP_NO_REFRESH.rawValue)) == 0
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
        try walk(trees) { next in try entries(ofTree: &next, in: source, missing: &missing, isNeeded: isNeeded) }
        return missing
    }

    /// A tree's subtrees, for the walk to visit; its blobs the target lacks go straight
    /// into `missing`.
    private static func entries(
        ofTree oid: inout git_oid, in source: GitRepository, missing: inout [git_oid],
        isNeeded: (git_oid) -> Bool
    ) throws -> [git_oid] {
        var tree: OpaquePointer?
        try GitError.check(git_tree_lookup(&tree, source.pointer, &oid), "git_tree_lookup")
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

    /// A few objects go loose, as git keeps fewer than `fetch.unpackLimit` and
    /// `receive.unpackLimit` (100) loose: a pack per small copy would pile up packs.
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

    /// Many objects go as one pack with its index (`GitPackWriter`), each object whole:
    /// no delta search, which was most of the transport's time.
    private static func copyPacked(_ objects: [git_oid], from sourceOdb: OpaquePointer, to target: GitRepository)
        throws
    {
        let gitDir = git_repository_path(target.pointer).map { String(cString: $0) } ?? target.path
        let packer = try GitPackWriter(repository: target.pointer, folder: gitDir)
        for var oid in objects {
            var object: OpaquePointer?
            try GitError.check(git_odb_read(&object, sourceOdb, &oid), "git_odb_read")
            defer { git_odb_object_free(object) }
            try packer.add(copyOf: object!)
        }
        try packer.write()
    }
}
