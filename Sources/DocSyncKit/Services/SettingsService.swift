import DocSyncJSON
import Foundation

/// `docsync config`: settings, and the remote they name checked as they are set.
public struct SettingsService: WorkspaceService {
    public let workspace: Workspace

    public init(workspace: Workspace) { self.workspace = workspace }

    // MARK: config

    /// Sets or unsets a key. A remote key (url, kind or branch) must name a remote that
    /// exists (`create`: make a new one there), and, once this tree has synced, the same
    /// remote it synced with: then nothing is reset. Another remote needs `resetBase`,
    /// which starts from an empty base as `reset-base` does: the next sync merges the tree
    /// with whatever that remote holds and deletes nothing. Returns whether the base was reset.
    @discardableResult
    public func set(
        _ key: String, _ value: String?, relativeTo cwd: String? = nil, create: Bool = false,
        resetBase: Bool = false
    ) throws -> Bool {
        var updated = config
        if let value { try updated.set(key, value) } else { try updated.unset(key) }
        if ["remote.url", "remote.kind"].contains(key), let url = updated["remote.url"] {
            try settle(url: url, setting: key, in: &updated, relativeTo: cwd)
        }
        // A schema that cannot be read or compiled would hold every record it names.
        if key.hasPrefix("schema."), let value {
            let file = FileSystem.absolute(value, relativeTo: layout.root)
            if let problem = RecordSchemas(root: layout.root, config: updated).checkSchemaFile(file) {
                throw Config.Problem(message: "\(key): \(problem)")
            }
        }
        let (resets, missing) = try remoteSwitch(setting: key, to: updated, create: create, resetBase: resetBase)
        if let missing { try RemoteIdentity.create(kind: missing.kind, url: missing.url) }
        try updated.save(to: layout.config)
        config = updated
        if resets { try startFromEmptyBase() }
        return resets
    }

    /// The URL (and the kind it is read as) is checked when it is given, never first on
    /// the next cron run; relative folder paths are taken from `cwd`. A new URL picks its
    /// kind again (set remote.kind after it to force one).
    private func settle(url: String, setting key: String, in updated: inout Config, relativeTo cwd: String?) throws {
        let kind = key == "remote.url" ? nil : updated["remote.kind"].flatMap(RemoteKind.init(rawValue:))
        let address = try RemoteAddress.parse(
            url, kind: kind, relativeTo: cwd ?? FileManager.default.currentDirectoryPath)
        try address.checkSeparate(fromTree: layout.root)
        try updated.set("remote.url", address.url)
        if config["remote.kind"] != nil || key == "remote.kind" {
            try updated.set("remote.kind", address.kind.rawValue)
        }
    }

    /// When setting `key` names another remote: whether the base must be reset (this tree
    /// synced with a different remote, and `resetBase` allows it), and the remote to
    /// create (none there yet, and `create` asks for it). Throws when neither is allowed.
    private func remoteSwitch(
        setting key: String, to updated: Config, create: Bool, resetBase: Bool
    ) throws -> (resets: Bool, missing: (kind: RemoteKind, url: String)?) {
        let remoteKeys: Set = ["remote.url", "remote.kind", "remote.branch"]
        guard remoteKeys.contains(key), updated[key] != config[key], let url = updated["remote.url"] else {
            return (false, nil)
        }
        var missing: (kind: RemoteKind, url: String)? = nil
        let kind = updated["remote.kind"].flatMap(RemoteKind.init(rawValue:)) ?? RemoteKind.detect(url)
        if RemoteIdentity.exists(kind: kind, url: url) == false {
            guard create else { throw Workspace.Failure.noRemoteAt(url) }
            missing = (kind, url)
        }
        guard let cursor = state.cursor else { return (false, missing) }
        let verdict =
            missing != nil
            ? .different("there is no remote there yet")
            : RemoteIdentity.compare(
                cursor: cursor, kind: kind, url: url, branch: updated["remote.branch"] ?? "main")
        guard case let .different(reason) = verdict else { return (false, missing) }
        guard resetBase else { throw Workspace.Failure.differentRemote(url: url, reason: reason) }
        return (true, missing)
    }

    /// Starts from an empty base as `reset-base` does: the next sync merges the tree with
    /// whatever the new remote holds and deletes nothing.
    private func startFromEmptyBase() throws {
        var fresh = SyncState()
        fresh.journalSeq = state.journalSeq
        fresh.journalOffset = journal.length
        fresh.pending = []
        state = fresh
        try checkpoint()
        try? FileSystem.removeFile(layout.metadata + "/last-sync")
        var report = SyncReport()
        index = StatCache()
        _ = try recordLocalChanges(write: true, report: &report)
    }
}
