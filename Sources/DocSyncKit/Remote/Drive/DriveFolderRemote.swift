import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A folder remote in the drive layout (`docsync-remote 2`), safe on folders a sync
/// service copies between machines (Dropbox, Google Drive, OneDrive, Nextcloud,
/// Syncthing, Unison): no file is ever written by two replicas, so the service never has
/// two versions of one file to choose between (see docs/REMOTE-LAYOUT.md):
///
///     format                        the remote's id and layout version (its creator, once)
///     objects/                      every pushed version by content hash (immutable)
///     replicas/<id>/commits/<n>.json  replica <id>'s pushes, each written once
///     replicas/<id>/info.json       replica <id>'s record: name, what it has seen
///
/// Readers merge the commits of all replicas into one history (`DriveHistory`); files
/// that have not arrived yet are "not here yet", never a deletion. The documents at
/// their paths are a view for people, never read back as the truth.
public final class DriveFolderRemote: Remote {
    public let root: String
    public let displayURL: String
    let layout: DriveLayout
    let objects: ObjectStore
    let lockWaitSeconds: Double
    public var writeProgress: ((RemoteWrite, Int, Int) -> Void)?
    /// This tree's replica id: after its push lost a fork, only its own edits are merged
    /// again (see ForkRebase). Nil: the tree's whole versions are, from the shared one.
    public var localReplica: String?
    /// How this tree merges two versions: a fork's merge base may be the merge of
    /// several versions (see ForkMergeBase). Nil: the latest of them is taken.
    public var versionMerge: VersionMerge?
    /// The ancestry `mergeBase(of:held:theirs:)` and a lost fork's rewind read, once per
    /// remote object (read again only when a version it is asked about arrived since).
    var askedBases: ForkMergeBases?
    /// Whether the tree holds a version (see `Remote.tellHeldVersions`): a parent a
    /// commit names is then here without reading older commit files (ParentPresence).
    var heldVersion: ((_ refId: String, _ changesetId: String) -> Bool)?
    public var historiesFork: Bool { true }
    /// `remote.maxDocumentBytes`, and where skipped documents are remembered.
    public var ceiling = RemoteDocumentCeiling()
    /// Documents (refIds) skipped for their size that `changes` brought again because
    /// they fit now: the engine merges them, so a push after that is not refused for them.
    var presentedSkipped = Set<String>()

    public func tellHeldVersions(_ held: @escaping (_ refId: String, _ changesetId: String) -> Bool) {
        heldVersion = held
    }

    public init(url: String, lockWaitSeconds: Double = 10) {
        displayURL = url
        root = FileSystem.absolute(url.hasPrefix("file://") ? String(url.dropFirst("file://".count)) : url)
        layout = DriveLayout(root: root, files: RemotePerimeter(root: root, url: url))
        objects = ObjectStore(root: layout.objects, files: layout.files)
        self.lockWaitSeconds = lockWaitSeconds
    }

    static let formatHeader = "docsync-remote 2"

    /// Makes `url` a new, empty remote in this layout. The folder may exist but must hold nothing.
    public static func create(at url: String) throws {
        let remote = DriveFolderRemote(url: url)
        let files = remote.layout.files
        if files.exists(remote.layout.format) { return }
        if FileSystem.exists(remote.root), !(try FileSystem.listDirectory(remote.root)).isEmpty {
            throw RemoteError.damaged(
                url: url,
                reason: "folder exists and is not empty, and is not a docsync remote; pick an empty or new folder")
        }
        // The root is the user's (it may be a symlink); what is below it, by descriptors.
        try FileSystem.createDirectories(remote.root)
        try files.createDirectories(remote.layout.replicas)
        try files.createDirectories(remote.layout.objects)
        try files.writeAtomically(remote.layout.format, Array("\(formatHeader)\nid \(UUIDString.random())\n".utf8))
    }

    // MARK: Format

    struct Format {
        var remoteId: String
        /// The commit an upgrade from format 1 made: the root of every chain.
        var base: String?
        /// The format-1 position it holds (`<generation>:<feed length>`).
        var upgradedFrom: String?
    }

    /// The remote's id and base. Its absence means the folder is missing or not mounted
    /// (or not synced here yet), which must read as "unreachable", never as "empty".
    func format() throws -> Format {
        guard FileSystem.isDirectory(root) else {
            throw RemoteError.missingFolder(root, url: displayURL)
        }
        // Before anything is read: a symlink among the remote's own folders stops the run.
        try layout.files.checkSkeleton()
        let bytes: [UInt8]
        do { bytes = try layout.files.readFile(layout.format) } catch {
            try layout.files.checkPerimeter()
            throw RemoteError.unreadableFormat(layout.format, error, url: displayURL)
        }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        guard lines.first == Self.formatHeader, lines.count >= 2, lines[1].hasPrefix("id ") else {
            throw RemoteError.damaged(
                url: displayURL, reason: "\(layout.format) is not a docsync remote format this version understands")
        }
        var format = Format(remoteId: String(lines[1].dropFirst(3)))
        for line in lines.dropFirst(2) {
            if line.hasPrefix("base ") { format.base = String(line.dropFirst(5)) }
            if line.hasPrefix("upgraded-from ") { format.upgradedFrom = String(line.dropFirst(14)) }
        }
        return format
    }

    /// The tree's cursor as a drive cursor. A format-1 cursor of this remote (the tree
    /// last synced before the upgrade) continues from the upgrade's commit if it was
    /// exactly there; an older one reads the whole state as a snapshot (nil, `snapshot`).
    func parseCursor(_ text: String?, format: Format) throws -> (cursor: DriveCursor?, snapshot: Bool) {
        guard let text else { return (nil, false) }
        if let cursor = DriveCursor(text) {
            guard cursor.remoteId == format.remoteId else { throw differentRemote(format.remoteId, cursor.remoteId) }
            return (cursor, false)
        }
        if let old = DirectoryRemote.Cursor(text) {
            guard old.remoteId == format.remoteId else { throw differentRemote(format.remoteId, old.remoteId) }
            if let base = format.base, let parts = DriveCommit.parts(of: base),
                format.upgradedFrom == "\(old.position.generation):\(old.position.length)"
            {
                return (
                    DriveCursor(remoteId: format.remoteId, tip: base, height: 1, seen: [parts.replica: parts.seq]),
                    false
                )
            }
            return (nil, true)
        }
        throw RemoteError.damaged(url: displayURL, reason: "this tree's remote cursor '\(text)' is not valid")
    }

    func differentRemote(_ id: String, _ expected: String) -> RemoteError {
        .damaged(
            url: displayURL,
            reason:
                "this is a different remote than the one this tree last synced with (remote id \(id), expected \(expected))"
        )
    }

}
