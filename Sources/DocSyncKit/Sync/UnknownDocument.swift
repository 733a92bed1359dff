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

    public init(path: String, refId: String, reason: String) {
        self.path = path
        self.refId = refId
        self.reason = reason
    }

    /// As `status` and a sync print it.
    public var message: String {
        "\(DocumentPath.printable(path)): not looked at (\(reason)); the document stays tracked and is not deleted"
    }

    /// Why the tracked document at `path` could not be looked at in `walk`, or nil when
    /// the walk looked where its file would be (then a missing file is a deletion).
    static func reason(for path: String, walk: TreeWalker.Walk, ignore: IgnoreRules) -> String? {
        if let reason = walk.unenteredReason(for: path) { return reason }
        if ignore.isIgnored(path, isDirectory: false) { return "ignored by .docsyncignore after it was synced" }
        return nil
    }
}
