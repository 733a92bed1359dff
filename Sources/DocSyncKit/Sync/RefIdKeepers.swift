/// Who keeps a refId that several files carry: the file at the tracked path, else the
/// file that was there before (same inode: moved, not copied), else the one with the
/// tracked content, else the first by path. The rest are copies.
///
/// Most refIds are carried by one file: only the shared ones get a list. A refId is
/// shared only if some file away from the document's tracked path carries it (a new
/// file, a copy, a move), so only those are collected; each is then joined by the file
/// at the tracked path if that one carries it too. Why: a no-op run then builds no table
/// of every file's refId only to find no copies.
struct RefIdKeepers {
    let files: [ChangeRecorder.FileInfo]
    let tracked: VersionTable
    /// The stat cache as it was before this scan (for the inodes of tracked paths).
    let previousIndex: StatCache
    /// Tracked paths whose files are not valid documents right now.
    let unreadable: Set<String>
    /// refId → the indices of the files carrying it, for refIds more than one file carries.
    let sharedRefIds: [String: [Int]]
    /// Tracked paths the walk could not look at whose documents a file elsewhere carries.
    var unknownTracked: Set<String> = []

    init(
        files: [ChangeRecorder.FileInfo], tracked: VersionTable, previousIndex: StatCache,
        unreadable: Set<String>
    ) {
        self.files = files
        self.tracked = tracked
        self.previousIndex = previousIndex
        self.unreadable = unreadable
        self.sharedRefIds = Self.sharedRefIds(files: files, tracked: tracked)
    }

    static func sharedRefIds(files: [ChangeRecorder.FileInfo], tracked: VersionTable) -> [String: [Int]] {
        var awayCarriers: [String: [Int]] = [:]
        for i in files.indices where !files[i].unchanged {
            guard let r = files[i].refId, tracked[r]?.path != files[i].path else { continue }
            awayCarriers[r, default: []].append(i)
        }
        var shared: [String: [Int]] = [:]
        for (r, away) in awayCarriers {
            var carriers = away
            if let home = tracked[r].flatMap({ ChangeRecorder.fileIndex(of: $0.path, in: files) }),
                files[home].refId == r
            {
                carriers.append(home)
                carriers.sort()
            }
            if carriers.count > 1 { shared[r] = carriers }
        }
        return shared
    }

    /// Whether the files carrying `ref` wait, neither keeper nor copy: its tracked path
    /// could not be looked at and none of them has the inode the index holds for it. Why
    /// not a copy: an editor that saves by writing a new file gives the file a new inode,
    /// so after a save and a move the index's inode no longer tells a move from a copy,
    /// and a move taken for a copy split the document in two once the folder came back
    /// (model check, folder seed 24113). Once the path can be looked at, the rules below
    /// decide with everything in view.
    func waits(_ ref: String, carrier: Int) -> Bool {
        guard !unknownTracked.isEmpty, let t = tracked[ref], unknownTracked.contains(t.path) else { return false }
        guard let oldInode = previousIndex[t.path]?.inode else { return true }
        return !(sharedRefIds[ref] ?? [carrier]).contains { files[$0].stat.inode == oldInode }
    }

    /// The index of the file that keeps `ref`, asked by the file at `carrier`; nil when
    /// no file does (the tracked file is there but unreadable).
    func keeper(of ref: String, carrier: Int) -> Int? {
        // Its tracked file may still be there, unseen (see `UnknownDocument`): only the file
        // that was there (the same inode: moved out) keeps the refId; any other is a copy
        // (with no such file, they all wait: see `waits`).
        if !unknownTracked.isEmpty, let t = tracked[ref], unknownTracked.contains(t.path) {
            guard let oldInode = previousIndex[t.path]?.inode else { return nil }
            return (sharedRefIds[ref] ?? [carrier]).first { files[$0].stat.inode == oldInode }
        }
        // The common case, asked once per file: no file unreadable, no refId shared.
        if unreadable.isEmpty && sharedRefIds.isEmpty { return carrier }
        let t = tracked[ref]
        // The tracked file is still there but not a valid document right now: it keeps
        // the identity (it is not deleted either), and every other file carrying the
        // refId is a copy. Why: a copy made just before the original was saved half-way
        // took the identity, as a rename, and the original was deleted everywhere.
        if let t, unreadable.contains(t.path) { return nil }
        guard let idxs = sharedRefIds[ref] else { return carrier }
        let oldInode = t.flatMap { previousIndex[$0.path]?.inode }
        return idxs.first { files[$0].path == t?.path } ?? idxs.first { files[$0].stat.inode == oldInode }
            ?? idxs.first { files[$0].hash == t?.hash } ?? idxs[0]
    }
}
