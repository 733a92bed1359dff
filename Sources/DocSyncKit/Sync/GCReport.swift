/// What `docsync gc` freed (or, with --dry-run, would free).
public struct GCReport: Codable, Sendable {
    public var dryRun = false
    /// Journal entries dropped: already folded into `.docsync/state`, not pending.
    public var journalEntriesDropped = 0
    /// Local actions not yet on the remote: always kept, in the state and the journal.
    public var pendingKept = 0
    public var journalBytesBefore = 0
    public var journalBytesAfter = 0
    /// Objects in `.docsync/objects/` that nothing refers to any more.
    public var objectsRemoved = 0
    public var objectBytesFreed: Int64 = 0
    /// `.docsync-tmp-…` files left by killed writes.
    public var temporaryFilesRemoved = 0
    public var warnings: [String] = []
    /// The remote's tombstone purge (nil with --local-only or without a remote).
    public var remote: TombstonePurge? = nil
    /// Set when the remote could not be reached: the local half was still done.
    public var remoteUnreachable: String? = nil
    /// A git remote's cache repository repacked (nil for a folder remote).
    public var gitCache: GitCacheRepack? = nil

    public init() {}

    /// Every byte freed locally.
    public var bytesFreed: Int64 { Int64(journalBytesBefore - journalBytesAfter) + objectBytesFreed }
}
