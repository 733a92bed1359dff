import Foundation

extension DriveFolderRemote {
    /// What an upgrade did.
    public struct Upgrade: Sendable {
        /// The format-1 position the upgrade took over (`<generation>:<feed length>`), nil
        /// if the remote was already in the drive layout.
        public var from: String?
        /// How many documents, tombstones and shared conflict records it carried over.
        public var entries = 0
        /// Versions that were only in readable copies and were put into objects/.
        public var objectsAdded = 0
    }

    /// Upgrades the format-1 folder remote at `url` to the drive layout, in place and
    /// crash-safely: under format 1's lock, the whole feed's latest entries become one
    /// checkpoint commit of this replica, and only then is `format` replaced (the commit
    /// point). A crash before that leaves a format-1 remote (the stray commit is never a
    /// root: the new `format` names its base); after it, the old `generation`, feeds and
    /// tombstones are only leftovers, removed at the end. Trees that synced with the old
    /// layout continue: a cursor exactly at the upgraded position goes on from the base,
    /// an older one reads the state as a snapshot (as after a format-1 compaction).
    public static func upgrade(
        _ url: String, replica: ReplicaInfo, lockStaleSeconds: Double = 600, lockWaitSeconds: Double = 10
    ) throws -> Upgrade {
        let old = DirectoryRemote(url: url, lockStaleSeconds: lockStaleSeconds, lockWaitSeconds: lockWaitSeconds)
        let drive = DriveFolderRemote(url: url, lockWaitSeconds: lockWaitSeconds)
        if (try? drive.format()) != nil { return Upgrade() }
        let id = try old.identity()
        guard DriveLayout.isPlainName(replica.replicaId) else {
            throw RemoteError.rejected(
                url: url, reason: "replica id \(replica.replicaId.debugDescription) cannot name a folder")
        }
        let lock = RemoteLock(folder: old.meta, replica: replica.replicaId, files: old.files)
        if let holder = try lock.acquire(waitSeconds: lockWaitSeconds, staleSeconds: lockStaleSeconds) {
            throw RemoteError.locked(url: url, holder: holder)
        }
        defer { lock.release() }
        let position = try old.position()
        let entries = DriveHistory.latest(try old.readFeed(from: 0, to: position.length, epoch: position.epoch))
        var report = Upgrade(from: "\(position.generation):\(position.length)", entries: entries.count)
        // Every current version must be in objects/: the drive layout never reads the
        // readable copies (early format-1 pushes kept some versions only there).
        for entry in entries where !entry.deleted && entry.isDocument {
            guard let hash = entry.hash, !drive.objects.contains(hash) else { continue }
            try drive.objects.put(try old.read(entry.entry), hash: hash)
            report.objectsAdded += 1
        }
        try drive.objects.seal()
        let seq = try drive.nextSeq(replica.replicaId, after: 0)
        var header = DriveCommit.Header(
            commit: DriveCommit.makeId(replica: replica.replicaId, seq: seq), replica: replica.replicaId, seq: seq,
            parent: nil, height: 1, time: FileSystem.currentTimeNanos / 1_000_000, entries: entries.count)
        header.checkpoint = true
        header.upgradedFrom = report.from
        try drive.writeCommit(DriveCommit(header: header, entries: entries))
        try CrashPoint.hit("upgrade.after-commit")
        guard lock.stillHeld, try old.position() == position else { throw RemoteError.moved }
        try drive.layout.files.writeAtomically(
            drive.layout.format,
            Array("\(formatHeader)\nid \(id)\nbase \(header.commit)\nupgraded-from \(report.from!)\n".utf8))
        try CrashPoint.hit("upgrade.after-format")
        drive.removeFormat1Leftovers()
        return report
    }

    /// Removes what format 1 kept that the drive layout does not read (`generation`, the
    /// feeds, `intent`, `tombstones/`): after an upgrade, or by the next push if the
    /// upgrade died after its commit point. Nobody writes these files any more.
    func removeFormat1Leftovers() {
        guard layout.files.exists(layout.meta + "/generation") || layout.files.exists(layout.meta + "/tombstones")
        else {
            return
        }
        for name in (try? layout.files.listDirectory(layout.meta)) ?? []
        where name == "generation" || name == "feed" || name.hasPrefix("feed-") || name == "intent" {
            try? layout.files.removeFile(layout.meta + "/" + name)
        }
        if let names = try? layout.files.listDirectory(layout.meta + "/tombstones") {
            for name in names { try? layout.files.removeFile(layout.meta + "/tombstones/" + name) }
        }
        layout.files.removeEmptyDirectory(layout.meta + "/tombstones")
    }
}

/// Which layout a folder remote is in, read from its `format` file.
public enum FolderRemoteFormat: Int, Sendable {
    /// A shared file system (a lock, one feed, one commit point).
    case shared = 1
    /// Any folder, cloud drives included: one writer per file.
    case drive = 2

    /// The layout of the remote at `url`, or nil if there is none (or it cannot be read).
    public static func of(_ url: String) -> FolderRemoteFormat? { read(url).layout }

    /// The layout of the remote at `url` (nil: none, or unreadable), and whether a
    /// format-1 remote is held there (`hold-format 1`): `format` read once.
    public static func read(_ url: String) -> (layout: FolderRemoteFormat?, held: Bool) {
        let remote = DirectoryRemote(url: url)
        guard let bytes = try? remote.files.readFile(remote.meta + "/format") else { return (nil, false) }
        let text = String(decoding: bytes, as: UTF8.self)
        let first = text.split(separator: "\n").first
        if first == Substring(DriveFolderRemote.formatHeader) { return (.drive, false) }
        if first == Substring(DirectoryRemote.formatHeader) { return (.shared, isHeld(text)) }
        return (nil, false)
    }

    /// The layout a new folder remote gets when none is asked for: the drive layout;
    /// `DOCSYNC_REMOTE_FORMAT=1` in the environment makes format 1 the default (for a
    /// fleet that still runs docsync releases before the drive layout).
    public static var forNewRemotes: FolderRemoteFormat {
        ProcessInfo.processInfo.environment["DOCSYNC_REMOTE_FORMAT"] == "1" ? .shared : .drive
    }

    /// Makes a new, empty folder remote at `url` in `format`. A format-1 remote made on
    /// purpose is held there: `format` says `hold-format 1`, and docsync does not
    /// upgrade it (older releases ignore the line).
    public static func create(at url: String, format: FolderRemoteFormat) throws {
        switch format {
        case .shared:
            let fresh = !DirectoryRemote.isRemote(url)
            try DirectoryRemote.create(at: url)
            if fresh { try hold(url) }
        case .drive: try DriveFolderRemote.create(at: url)
        }
    }

    /// Marks the format-1 remote at `url` as one docsync must not upgrade.
    public static func hold(_ url: String) throws {
        let remote = DirectoryRemote(url: url)
        let path = remote.meta + "/format"
        let text = String(decoding: try remote.files.readFile(path), as: UTF8.self)
        guard !isHeld(text) else { return }
        try remote.files.writeAtomically(
            path, Array((text.hasSuffix("\n") ? text : text + "\n").utf8) + Array("hold-format 1\n".utf8))
    }

    static func isHeld(_ formatText: String) -> Bool {
        formatText.split(separator: "\n").contains("hold-format 1")
    }

    /// The remote object for the folder at `url`, in the layout it is in (format 1 when
    /// it cannot be told yet: its reads then say what is missing).
    /// - Parameter layout: the layout if the caller has read it already (nil: read it).
    public static func open(
        _ url: String, layout: FolderRemoteFormat? = nil, lockStaleSeconds: Double = 600, lockWaitSeconds: Double = 10,
        replica: String? = nil, merge: VersionMerge? = nil
    ) -> Remote {
        if (layout ?? of(url)) == .drive {
            let remote = DriveFolderRemote(url: url, lockWaitSeconds: lockWaitSeconds)
            remote.localReplica = replica
            remote.versionMerge = merge
            return remote
        }
        return DirectoryRemote(url: url, lockStaleSeconds: lockStaleSeconds, lockWaitSeconds: lockWaitSeconds)
    }
}
