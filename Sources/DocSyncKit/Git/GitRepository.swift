import CLibGit2
import Foundation

/// A git object id as 40 hex digits.
public typealias GitOID = String

extension git_oid {
    var hex: GitOID {
        var copy = self
        return String(cString: git_oid_tostr_s(&copy))
    }

    init(hex: GitOID) throws {
        self.init()
        try GitError.check(git_oid_fromstr(&self, hex), "git_oid_fromstr")
    }
}

/// A repository opened through libgit2, owning its pointer. Not thread-safe: docsync
/// uses each repository from one thread.
final class GitRepository {
    let pointer: OpaquePointer
    let path: String

    private init(pointer: OpaquePointer, path: String) {
        self.pointer = pointer
        self.path = path
    }

    deinit { git_repository_free(pointer) }

    /// Opens the bare repository at `path`, creating it if missing.
    /// The corresponding libgit2 functions are `git_repository_open_bare` and `git_repository_init`.
    static func openOrCreateBare(at path: String) throws -> GitRepository {
        _ = GitLibrary.initialised
        var repo: OpaquePointer?
        if git_repository_open_bare(&repo, path) == 0, let repo { return GitRepository(pointer: repo, path: path) }
        try GitError.check(git_repository_init(&repo, path, 1), "git_repository_init")
        return GitRepository(pointer: repo!, path: path)
    }

    // MARK: References

    /// The repository at `path` exactly (no search upwards), bare or not; nothing is
    /// created. The corresponding libgit2 function is `git_repository_open_ext`.
    static func openExisting(at path: String) throws -> GitRepository {
        _ = GitLibrary.initialised
        var repo: OpaquePointer?
        try GitError.check(
            git_repository_open_ext(&repo, path, GIT_REPOSITORY_OPEN_NO_SEARCH.rawValue, nil), "git_repository_open_ext"
        )
        return GitRepository(pointer: repo!, path: path)
    }

    var isBare: Bool { git_repository_is_bare(pointer) == 1 }

    func referenceTarget(_ name: String) throws -> GitOID? {
        var oid = git_oid()
        let result = git_reference_name_to_id(&oid, pointer, name)
        if result == GIT_ENOTFOUND.rawValue { return nil }
        try GitError.check(result, "git_reference_name_to_id")
        return oid.hex
    }

    func setReference(_ name: String, to target: GitOID, message: String) throws {
        var oid = try git_oid(hex: target)
        var ref: OpaquePointer?
        try GitError.check(git_reference_create(&ref, pointer, name, &oid, 1, message), "git_reference_create")
        git_reference_free(ref)
    }

    func deleteReference(_ name: String) {
        var ref: OpaquePointer?
        if git_reference_lookup(&ref, pointer, name) == 0 {
            git_reference_delete(ref)
            git_reference_free(ref)
        }
    }

    // MARK: Commits

    struct CommitInfo {
        var id: GitOID
        var tree: GitOID
        var parents: [GitOID]
        var time: Int64
        var author: String
        var message: String
    }

    /// Whether `ancestor` is `descendant` or in its history. The corresponding libgit2
    /// function is `git_graph_descendant_of`.
    func isAncestor(_ ancestor: GitOID, of descendant: GitOID) throws -> Bool {
        if ancestor == descendant { return true }
        var a = try git_oid(hex: ancestor)
        var d = try git_oid(hex: descendant)
        return try GitError.check(git_graph_descendant_of(pointer, &d, &a), "git_graph_descendant_of") == 1
    }

    /// The best common ancestor of two commits, nil when their histories share none.
    /// The corresponding libgit2 function is `git_merge_base`.
    func mergeBase(_ one: GitOID, _ other: GitOID) throws -> GitOID? {
        var a = try git_oid(hex: one)
        var b = try git_oid(hex: other)
        var base = git_oid()
        let result = git_merge_base(&base, pointer, &a, &b)
        if result == GIT_ENOTFOUND.rawValue { return nil }
        try GitError.check(result, "git_merge_base")
        return base.hex
    }

    func commit(_ id: GitOID) throws -> CommitInfo {
        var oid = try git_oid(hex: id)
        var commit: OpaquePointer?
        try GitError.check(git_commit_lookup(&commit, pointer, &oid), "git_commit_lookup")
        defer { git_commit_free(commit) }
        let tree = git_commit_tree_id(commit)!.pointee.hex
        var parents: [GitOID] = []
        for i in 0..<git_commit_parentcount(commit) { parents.append(git_commit_parent_id(commit, i)!.pointee.hex) }
        let author = git_commit_author(commit)!.pointee
        let name = String(cString: author.name)
        let message = String(cString: git_commit_message(commit))
        return CommitInfo(
            id: id, tree: tree, parents: parents, time: Int64(git_commit_time(commit)), author: name, message: message)
    }

    // MARK: Trees and blobs

    struct TreeFile {
        var path: String
        var blob: GitOID
        var mode: UInt32
    }

    /// Every file in a tree, recursively, with its full path.
    /// The corresponding libgit2 function is `git_tree_walk`.
    func files(inTree treeId: GitOID) throws -> [TreeFile] {
        var oid = try git_oid(hex: treeId)
        var tree: OpaquePointer?
        try GitError.check(git_tree_lookup(&tree, pointer, &oid), "git_tree_lookup")
        defer { git_tree_free(tree) }
        final class Collector { var files: [TreeFile] = [] }
        let collector = Collector()
        let payload = Unmanaged.passUnretained(collector).toOpaque()
        try GitError.check(
            git_tree_walk(
                tree, GIT_TREEWALK_PRE,
                { root, entry, payload in
                    guard let entry, let root, let payload else { return 0 }
                    if git_tree_entry_type(entry) == GIT_OBJECT_BLOB {
                        let collector = Unmanaged<Collector>.fromOpaque(payload).takeUnretainedValue()
                        // A name that is not UTF-8 cannot be a document path: left out, as in `diff`.
                        guard let folder = String(validatingCString: root),
                            let name = String(validatingCString: git_tree_entry_name(entry))
                        else { return 0 }
                        let path = folder + name
                        collector.files.append(
                            TreeFile(
                                path: path, blob: git_tree_entry_id(entry)!.pointee.hex,
                                mode: UInt32(git_tree_entry_filemode(entry).rawValue)))
                    }
                    return 0
                }, payload), "git_tree_walk")
        return collector.files
    }

    /// The blob at `path` in a tree (nil: nothing there).
    /// The corresponding libgit2 function is `git_tree_entry_bypath`.
    func blobId(atPath path: String, inTree treeId: GitOID) throws -> GitOID? {
        var oid = try git_oid(hex: treeId)
        var tree: OpaquePointer?
        try GitError.check(git_tree_lookup(&tree, pointer, &oid), "git_tree_lookup")
        defer { git_tree_free(tree) }
        var entry: OpaquePointer?
        let found = git_tree_entry_bypath(&entry, tree, path)
        if found == GIT_ENOTFOUND.rawValue { return nil }
        try GitError.check(found, "git_tree_entry_bypath")
        defer { git_tree_entry_free(entry) }
        guard git_tree_entry_type(entry) == GIT_OBJECT_BLOB else { return nil }
        return git_tree_entry_id(entry)!.pointee.hex
    }

    /// An object's size from its header, without reading the object (a blob's bytes are
    /// never loaded for it). The corresponding libgit2 function is `git_odb_read_header`.
    func objectSize(_ id: GitOID) throws -> Int64 {
        var oid = try git_oid(hex: id)
        var odb: OpaquePointer?
        try GitError.check(git_repository_odb(&odb, pointer), "git_repository_odb")
        defer { git_odb_free(odb) }
        var size = 0
        var type = GIT_OBJECT_ANY
        try GitError.check(git_odb_read_header(&size, &type, odb, &oid), "git_odb_read_header")
        return Int64(size)
    }

    func blob(_ id: GitOID) throws -> [UInt8] {
        var oid = try git_oid(hex: id)
        var blob: OpaquePointer?
        try GitError.check(git_blob_lookup(&blob, pointer, &oid), "git_blob_lookup")
        defer { git_blob_free(blob) }
        let size = Int(git_blob_rawsize(blob))
        guard size > 0, let raw = git_blob_rawcontent(blob) else { return [] }
        return Array(UnsafeRawBufferPointer(start: raw, count: size))
    }

    struct FileChange {
        var oldPath: String?
        var newPath: String?
        var oldBlob: GitOID?
        var newBlob: GitOID?
        /// The new side's name, spelled with U+FFFD, when its bytes are not UTF-8; that
        /// side is then left out (`newPath` nil), like an old side with such a name.
        var undecodableName: String? = nil
    }

    /// What changed between two trees (nil: the empty tree), file by file.
    /// The corresponding libgit2 function is `git_diff_tree_to_tree`.
    func diff(from oldTreeId: GitOID?, to newTreeId: GitOID) throws -> [FileChange] {
        func lookup(_ id: GitOID?) throws -> OpaquePointer? {
            guard let id else { return nil }
            var oid = try git_oid(hex: id)
            var tree: OpaquePointer?
            try GitError.check(git_tree_lookup(&tree, pointer, &oid), "git_tree_lookup")
            return tree
        }
        let oldTree = try lookup(oldTreeId)
        let newTree = try lookup(newTreeId)
        defer {
            git_tree_free(oldTree)
            git_tree_free(newTree)
        }
        var options = git_diff_options()
        git_diff_options_init(&options, UInt32(GIT_DIFF_OPTIONS_VERSION))
        var diff: OpaquePointer?
        try GitError.check(git_diff_tree_to_tree(&diff, pointer, oldTree, newTree, &options), "git_diff_tree_to_tree")
        defer { git_diff_free(diff) }
        var changes: [FileChange] = []
        for i in 0..<git_diff_num_deltas(diff) {
            guard let delta = git_diff_get_delta(diff, i)?.pointee else { continue }
            // Why strict: a name that is not UTF-8 was pulled under its U+FFFD spelling,
            // so the file here had another name than the one on the remote, and an edit
            // of it was pushed as a second file next to the original.
            let old = (delta.status == GIT_DELTA_ADDED ? nil : delta.old_file).flatMap { file in
                String(validatingCString: file.path).map { ($0, file.id.hex) }
            }
            let newFile = delta.status == GIT_DELTA_DELETED ? nil : delta.new_file
            let new = newFile.flatMap { file in String(validatingCString: file.path).map { ($0, file.id.hex) } }
            let undecodable = newFile != nil && new == nil ? newFile.map { String(cString: $0.path) } : nil
            guard old != nil || new != nil || undecodable != nil else { continue }
            changes.append(
                FileChange(
                    oldPath: old?.0, newPath: new?.0, oldBlob: old?.1, newBlob: new?.1, undecodableName: undecodable))
        }
        return changes
    }

    /// `treeId` rebuilt without the entries a tree builder refuses (`..`, `.git`, names
    /// with a slash), in every subtree. The corresponding libgit2 functions are
    /// `git_treebuilder_insert` and `git_treebuilder_write`.
    func treeWithoutInvalidEntries(_ treeId: GitOID) throws -> GitOID {
        var oid = try git_oid(hex: treeId)
        var tree: OpaquePointer?
        try GitError.check(git_tree_lookup(&tree, pointer, &oid), "git_tree_lookup")
        defer { git_tree_free(tree) }
        var builder: OpaquePointer?
        try GitError.check(git_treebuilder_new(&builder, pointer, nil), "git_treebuilder_new")
        defer { git_treebuilder_free(builder) }
        for i in 0..<git_tree_entrycount(tree) {
            guard let entry = git_tree_entry_byindex(tree, i) else { continue }
            var id = git_tree_entry_id(entry)!.pointee
            if git_tree_entry_type(entry) == GIT_OBJECT_TREE {
                id = try git_oid(hex: try treeWithoutInvalidEntries(id.hex))
            }
            // A refused name is left out; every other entry is kept as it is.
            _ = git_treebuilder_insert(nil, builder, git_tree_entry_name(entry), &id, git_tree_entry_filemode(entry))
        }
        var written = git_oid()
        try GitError.check(git_treebuilder_write(&written, builder), "git_treebuilder_write")
        return written.hex
    }

    /// One path of a new commit: a loader of its bytes, or nil to remove the path. Why a
    /// loader: a large push then holds one document's bytes at a time, not all of them.
    typealias TreeChange = (path: String, content: (() throws -> [UInt8])?)

    /// A new commit: `base` tree with `changes` applied (content nil: remove the path).
    /// Does not move any reference. The corresponding libgit2 functions are
    /// `git_blob_create_from_buffer` (or a pack through `git_odb_write_pack`), `git_index_add`,
    /// `git_index_write_tree_to` and `git_commit_create`.
    func makeCommit(
        baseTree: GitOID?, changes: [TreeChange], parent: GitOID?, message: String,
        author: String, email: String
    ) throws -> GitOID {
        var index: OpaquePointer?
        try GitError.check(git_index_new(&index), "git_index_new")
        defer { git_index_free(index) }
        if let baseTree { try readBaseTree(baseTree, into: index) }
        // A large commit's blobs go into pack files, not loose files (see GitPackWriter).
        let packer =
            changes.count(where: { $0.content != nil }) > GitPackWriter.looseLimit
            ? try GitPackWriter(repository: pointer, folder: path) : nil
        for change in changes {
            if let load = change.content {
                try addBlob(try load(), at: change.path, to: index, packer: packer)
            } else {
                let result = git_index_remove_bypath(index, change.path)
                if result != GIT_ENOTFOUND.rawValue { try GitError.check(result, "git_index_remove_bypath") }
            }
        }
        try packer?.write()
        var treeOid = git_oid()
        try GitError.check(git_index_write_tree_to(&treeOid, index, pointer), "git_index_write_tree_to")
        return try createCommit(tree: treeOid, parent: parent, message: message, author: author, email: email)
    }

    /// Fills an in-memory index with the tree `baseTree`.
    private func readBaseTree(_ baseTree: GitOID, into index: OpaquePointer?) throws {
        var oid = try git_oid(hex: baseTree)
        var tree: OpaquePointer?
        try GitError.check(git_tree_lookup(&tree, pointer, &oid), "git_tree_lookup")
        defer { git_tree_free(tree) }
        guard git_index_read_tree(index, tree) < 0 else { return }
        // The base holds an entry the index refuses (a '..' that `git mktree` let
        // through). Why not fail: every later push failed, for good, on a tree
        // git itself calls broken. The new commit leaves such entries out.
        let cleaned = try treeWithoutInvalidEntries(baseTree)
        var cleanOid = try git_oid(hex: cleaned)
        var cleanTree: OpaquePointer?
        try GitError.check(git_tree_lookup(&cleanTree, pointer, &cleanOid), "git_tree_lookup")
        defer { git_tree_free(cleanTree) }
        try GitError.check(git_index_read_tree(index, cleanTree), "git_index_read_tree")
    }

    /// Writes `content` as a blob (into `packer` if there is one) and adds it to `index` at `path`.
    private func addBlob(
        _ content: [UInt8], at path: String, to index: OpaquePointer?, packer: GitPackWriter?
    ) throws {
        var entry = git_index_entry()
        entry.mode = UInt32(GIT_FILEMODE_BLOB.rawValue)
        let now = UInt32(Date().timeIntervalSince1970)
        entry.ctime.seconds = Int32(bitPattern: now)
        entry.mtime.seconds = Int32(bitPattern: now)
        // An in-memory index has no repository of its own: write the blob first,
        // then add an entry that points at it.
        if let packer {
            entry.id = try packer.add(content)
        } else {
            try content.withUnsafeBytes { bytes in
                try GitError.check(
                    git_blob_create_from_buffer(&entry.id, pointer, bytes.baseAddress, bytes.count),
                    "git_blob_create_from_buffer")
            }
        }
        entry.file_size = UInt32(truncatingIfNeeded: content.count)
        try path.withCString { path in
            entry.path = path
            try GitError.check(git_index_add(index, &entry), "git_index_add")
        }
    }

    /// The commit object of `tree` on `parent` (none: a root commit), signed by `author` now.
    private func createCommit(
        tree treeOid: git_oid, parent: GitOID?, message: String, author: String, email: String
    ) throws -> GitOID {
        var treeOid = treeOid
        var tree: OpaquePointer?
        try GitError.check(git_tree_lookup(&tree, pointer, &treeOid), "git_tree_lookup")
        defer { git_tree_free(tree) }
        var signature: UnsafeMutablePointer<git_signature>?
        try GitError.check(git_signature_now(&signature, author, email), "git_signature_now")
        defer { git_signature_free(signature) }
        var parentCommit: OpaquePointer?
        if let parent {
            var oid = try git_oid(hex: parent)
            try GitError.check(git_commit_lookup(&parentCommit, pointer, &oid), "git_commit_lookup")
        }
        defer { git_commit_free(parentCommit) }
        var commitOid = git_oid()
        var parents: [OpaquePointer?] = parentCommit.map { [$0] } ?? []
        try GitError.check(
            git_commit_create(
                &commitOid, pointer, nil, signature, signature, "UTF-8", message, tree, parents.count, &parents),
            "git_commit_create")
        return commitOid.hex
    }
}
