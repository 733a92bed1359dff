import DocSyncJSON
import Foundation

/// A plain folder as the remote. Documents sit at their paths, readable by anyone; the
/// folder's `.docsync/` holds the rest (see docs/REMOTE-LAYOUT.md):
///
///     format          identity of this remote (a random id) and the layout version
///     generation      "<generation> <feed length>": the commit point of every push
///     feed            one checksummed line per document change, appended by pushes
///     objects/        every pushed version by content hash (immutable; packs/ for large pushes)
///     tombstones/     one file per deleted document
///     replicas/       one file per replica: what it has seen, for tombstone gc
///     lock            held while a push writes
///
/// A push writes documents and tombstones, appends to the feed, then replaces
/// `generation`; readers trust feed bytes only up to the length it names. So a no-op
/// pull reads one small file, and a pull reads only the feed lines it has not seen.
public final class DirectoryRemote: Remote {
    public let root: String
    public let displayURL: String
    let meta: String
    /// Every file below `root`, never through a symlink.
    let files: RemotePerimeter
    /// Every pushed version, content-addressed and immutable: what readers fall back to.
    let objects: ObjectStore
    let lockStaleSeconds: Double
    public var writeProgress: ((RemoteWrite, Int, Int) -> Void)?
    let lockWaitSeconds: Double
    /// `remote.maxDocumentBytes`: a version larger than it is never read.
    public var ceiling = RemoteDocumentCeiling()

    public init(url: String, lockStaleSeconds: Double = 600, lockWaitSeconds: Double = 10) {
        displayURL = url
        root = FileSystem.absolute(url.hasPrefix("file://") ? String(url.dropFirst("file://".count)) : url)
        meta = root + "/.docsync"
        files = RemotePerimeter(root: root, url: url)
        objects = ObjectStore(root: meta + "/objects", files: files)
        self.lockStaleSeconds = lockStaleSeconds
        self.lockWaitSeconds = lockWaitSeconds
    }

    static let formatHeader = "docsync-remote 1"

    /// Makes `url` a new, empty remote. The folder may exist but must hold nothing.
    public static func create(at url: String) throws {
        let remote = DirectoryRemote(url: url)
        let files = remote.files
        if files.exists(remote.meta + "/format") { return }
        if FileSystem.exists(remote.root), !(try FileSystem.listDirectory(remote.root)).isEmpty {
            throw RemoteError.damaged(
                url: url,
                reason: "folder exists and is not empty, and is not a docsync remote; pick an empty or new folder")
        }
        // The root is the user's (it may be a symlink); what is below it, by descriptors.
        try FileSystem.createDirectories(remote.root)
        try files.createDirectories(remote.meta + "/tombstones")
        try files.createDirectories(remote.meta + "/replicas")
        try files.writeAtomically(remote.meta + "/feed", [])
        try files.writeAtomically(remote.meta + "/generation", Array("0 0\n".utf8))
        try files.writeAtomically(
            remote.meta + "/format", Array("\(formatHeader)\nid \(UUIDString.random())\n".utf8))
    }

    /// Whether `url` holds a folder remote of either layout.
    public static func isRemote(_ url: String) -> Bool {
        let remote = DirectoryRemote(url: url)
        return remote.files.exists(remote.meta + "/format")
    }

}

extension RemoteChanges {
    /// The changes a folder remote's latest entries per key make (either layout): the
    /// document entries, the conflict records they share (with the losing bytes from
    /// `objects`), and with `snapshot` who deleted what gc purged.
    init(folding kept: [FeedLine], cursor: String, snapshot: Bool, warnings: [String], objects: ObjectStore) {
        var conflicts: [SharedConflict] = []
        var purgedDeleters: [String: String] = [:]
        var purgedDeletions: [String: RemoteEntry] = [:]
        for entry in kept where entry.purgedDeletion == true {
            let refId = String(entry.refId.dropFirst(FeedLine.purgedPrefix.count))
            purgedDeleters[refId] = entry.replica
            purgedDeletions[refId] = entry.entry
        }
        for entry in kept {
            guard let record = entry.conflict else { continue }
            let bytes = entry.hash.flatMap { try? objects.get($0) }
            conflicts.append(SharedConflict(record: record, bytes: bytes))
        }
        // One pass, no filtered copy of the lines first: a clone holds 100,000 of them.
        var entries: [RemoteEntry] = []
        entries.reserveCapacity(max(0, kept.count - conflicts.count - purgedDeleters.count))
        for line in kept where line.isDocument { entries.append(line.entry) }
        self.init(
            entries: entries, cursor: cursor,
            warnings: warnings, isSnapshot: snapshot, conflicts: conflicts,
            purgedDeleters: snapshot ? purgedDeleters : [:])
        if snapshot { self.purgedDeletions = purgedDeletions }
    }
}
