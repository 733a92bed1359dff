/// A tracked document whose file the scan could not look at: a folder it could not open
/// or read, a symlink it does not follow, a folder that became another tree, a path
/// ignored after the document was synced. Its state is unknown, never "deleted": it stays
/// tracked, remote changes to it wait aside, and the run says so and exits 1 (SPEC, "The
/// working tree": what the scan could not look at is unknown).
public struct UnknownDocument: Sendable, Codable, Equatable {
    public var path: String
    public var refId: String
    /// Why it was not looked at, naming the entry the walk did not enter.
    public var reason: String
    /// Files elsewhere carrying its refId, none of them the file that was at `path` (another
    /// inode): moved or copied is decided once `path` can be looked at, and until then they
    /// are not recorded (see `RefIdKeepers.waits`).
    public var waiting: [String]?

    public init(path: String, refId: String, reason: String, waiting: [String]? = nil) {
        self.path = path
        self.refId = refId
        self.reason = reason
        self.waiting = waiting
    }

    /// As `status` and a sync print it.
    public var message: String {
        "\(DocumentPath.printable(path)): not looked at (\(reason)); the document stays tracked and is not deleted"
            + waitingNote
    }

    /// What `status` and a sync add about the files that wait with it.
    public var waitingNote: String {
        guard let waiting, !waiting.isEmpty else { return "" }
        let names = waiting.map(DocumentPath.printable).joined(separator: ", ")
        return
            "; \(names) \(waiting.count == 1 ? "carries" : "carry") its refId and \(waiting.count == 1 ? "waits" : "wait")"
            + " unrecorded until this path can be looked at (the document moved there, or a copy)"
    }

    /// Why the tracked document at `path` could not be looked at in `walk`, or nil when
    /// the walk looked where its file would be (then a missing file is a deletion).
    static func reason(for path: String, walk: TreeWalker.Walk, ignore: IgnoreRules) -> String? {
        if let reason = walk.unenteredReason(for: path) { return reason }
        if ignore.isIgnored(path, isDirectory: false) { return "ignored by .docsyncignore after it was synced" }
        return nil
    }
}
