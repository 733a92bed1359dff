import CLibGit2

#if canImport(Glibc)
    import Glibc
#endif

/// What `docsync gc` did to a git remote's cache repository (`.docsync/git`).
public struct GitCacheRepack: Codable, Sendable, Equatable {
    /// Pack files and loose objects before (what a dry run would repack).
    public var packsBefore = 0
    public var looseObjectsBefore = 0
    /// Objects in the one pack written (0: nothing repacked).
    public var objectsPacked = 0

    /// Whether there was anything to put into one pack: more than one pack, or any loose
    /// object (a small fetch from a local path stays loose, even with no pack at all).
    public var hadWork: Bool { packsBefore > 1 || looseObjectsBefore > 0 }
}

extension GitRepository {
    /// Packs every object reachable from the repository's references (and from `commits`)
    /// into one pack, then removes the other packs and every loose object.
    ///
    /// Why: every fetch over a network writes a pack into the cache (from a local path,
    /// one of more than 100 objects does), and a large push another; a tree synced from
    /// cron gathered one per sync, and libgit2 searches each pack's index on
    /// every lookup (git itself repacks past 50). Nothing else is kept: the cache only
    /// serves the branch's history, which the references reach.
    ///
    /// Order, for a crash at any point: the new pack is written and indexed, the
    /// filesystem flushed, and only then is anything removed; a crash before the removal
    /// leaves objects twice, never none. The corresponding libgit2 functions are
    /// `git_revwalk_push_glob`, `git_packbuilder_insert_walk` and `git_packbuilder_write`.
    /// - Parameter dryRun: only count what there is.
    func repackReachable(keeping commits: [GitOID], dryRun: Bool) throws -> GitCacheRepack {
        let packFolder = path + "/objects/pack"
        let packs = ((try? FileSystem.listDirectory(packFolder)) ?? []).filter {
            $0.hasPrefix("pack-") && $0.hasSuffix(".pack")
        }
        let looseFolders = ((try? FileSystem.listDirectory(path + "/objects")) ?? []).filter { Self.isLooseFolder($0) }
        var loose: [String] = []
        for folder in looseFolders {
            for name in (try? FileSystem.listDirectory(path + "/objects/" + folder)) ?? [] where name.count == 38 {
                loose.append("objects/" + folder + "/" + name)
            }
        }
        var result = GitCacheRepack(packsBefore: packs.count, looseObjectsBefore: loose.count)
        guard !dryRun, result.hadWork else { return result }

        var walk: OpaquePointer?
        try GitError.check(git_revwalk_new(&walk, pointer), "git_revwalk_new")
        defer { git_revwalk_free(walk) }
        let pushed = git_revwalk_push_glob(walk, "refs/*")
        if pushed == GIT_ENOTFOUND.rawValue { return result }
        try GitError.check(pushed, "git_revwalk_push_glob")
        for commit in commits {
            var oid = try git_oid(hex: commit)
            // A commit the references no longer reach (the remote's history was rewritten)
            // is kept while this tree's state still names it.
            if git_revwalk_push(walk, &oid) < 0 { continue }
        }
        var builder: OpaquePointer?
        try GitError.check(git_packbuilder_new(&builder, pointer), "git_packbuilder_new")
        defer { git_packbuilder_free(builder) }
        try GitError.check(git_packbuilder_insert_walk(builder, walk), "git_packbuilder_insert_walk")
        let count = Int(git_packbuilder_object_count(builder))
        guard count > 0 else { return result }
        try GitError.check(git_packbuilder_write(builder, nil, 0, nil, nil), "git_packbuilder_write")
        guard let written = git_packbuilder_name(builder).map({ "pack-" + String(cString: $0) }) else { return result }
        FileSystem.syncFilesystem(containing: path)
        removeRepacked(packs: packs, keeping: written + ".pack", loose: loose, looseFolders: looseFolders)
        result.objectsPacked = count
        return result
    }

    /// Removes the packs (but `kept`) and the loose objects the new pack holds, and tells
    /// libgit2 to read the object folder again.
    private func removeRepacked(packs: [String], keeping kept: String, loose: [String], looseFolders: [String]) {
        let packFolder = path + "/objects/pack"
        for pack in packs where pack != kept {
            let stem = String(pack.dropLast(".pack".count))
            // The index first: a pack without one is not read, one without its pack is an error.
            for suffix in [".idx", ".rev", ".keep", ".pack"] {
                _ = try? FileSystem.removeFile(packFolder + "/" + stem + suffix)
            }
        }
        for object in loose { _ = try? FileSystem.removeFile(path + "/" + object) }
        for folder in looseFolders { _ = rmdir(path + "/objects/" + folder) }
        var odb: OpaquePointer?
        if git_repository_odb(&odb, pointer) == 0 {
            _ = git_odb_refresh(odb)
            git_odb_free(odb)
        }
    }

    /// `objects/xx`: two lowercase hex digits.
    private static func isLooseFolder(_ name: String) -> Bool {
        name.utf8.count == 2 && name.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }
}
