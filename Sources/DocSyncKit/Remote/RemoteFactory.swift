/// The remote a tree's configuration names.
public enum RemoteKind: String, Sendable, CaseIterable {
    case dir, git

    /// git for anything that looks like a git URL or repository, else a folder.
    public static func detect(_ url: String) -> RemoteKind {
        GitURL.looksLikeGit(url) ? .git : .dir
    }

    /// Whether a git URL is reached over the network (not a path or `file://`).
    public static func isNetworkGit(_ url: String) -> Bool { RemoteIdentity.localGitPath(url) == nil }
}

/// Makes the remote a tree's configuration names (`remote.url`, `remote.kind` and the
/// kind's settings), with what the user should hear about it: a git repository in a
/// folder a sync service copies, or a format-1 folder upgraded to the drive layout (only
/// by a run that may write).
struct RemoteFactory {
    let config: Config
    /// The tree's `.docsync` folder (a git remote's cache lives there).
    let metadata: String
    let replica: ReplicaInfo
    let readOnly: Bool

    func make() throws -> (remote: Remote, warnings: [String]) {
        guard let url = config["remote.url"] else { throw Workspace.Failure.noRemote }
        switch config["remote.kind"].flatMap(RemoteKind.init(rawValue:)) ?? RemoteKind.detect(url) {
        case .git: return try git(url)
        case .dir: return try folder(url)
        }
    }

    private func git(_ url: String) throws -> (remote: Remote, warnings: [String]) {
        var warnings: [String] = []
        let settings = GitTransportSettings(
            sshKey: config["remote.sshKey"], knownHosts: config["remote.knownHosts"], caFile: config["remote.caFile"])
        if let path = RemoteIdentity.localGitPath(url),
            let sign = DriveFolderSigns.reason(
                for: path, exists: FileSystem.exists, list: { (try? FileSystem.listDirectory($0)) ?? [] })
        {
            warnings.append(
                "\(url): this git repository seems to be in a folder a sync service copies between machines (\(sign)); "
                    + "git's refs and packs break there and pushes can be lost. Use a folder remote there "
                    + "(docsync init --remote FOLDER), or a git server")
        }
        let remote = try GitRemote(
            url: url, branch: config["remote.branch"] ?? "main", cachePath: metadata + "/git", settings: settings)
        remote.localReplica = replica.replicaId
        remote.ceiling = ceiling
        return (remote, warnings)
    }

    private func folder(_ url: String) throws -> (remote: Remote, warnings: [String]) {
        var warnings: [String] = []
        let (stale, wait) = (config.number("remote.lockStaleSeconds"), config.number("remote.lockWaitSeconds"))
        // A format-1 remote moves to the drive layout on the first run that may write
        // (see DriveFolderRemote.upgrade); a read-only run reads it as it is.
        var (layout, held) = FolderRemoteFormat.read(url)
        if !readOnly, layout == .shared, !held {
            let upgrade = try DriveFolderRemote.upgrade(
                url, replica: replica, lockStaleSeconds: stale, lockWaitSeconds: wait)
            if let from = upgrade.from {
                warnings.append(
                    "\(url): upgraded the folder remote to the drive layout (docsync-remote 2) from format 1 at \(from); "
                        + "docsync releases before it cannot sync with it any more")
            }
            layout = .drive
        }
        let remote = FolderRemoteFormat.open(
            url, layout: layout, lockStaleSeconds: stale, lockWaitSeconds: wait, replica: replica.replicaId,
            merge: ContentPolicy.versionMerge(config: config))
        (remote as? DriveFolderRemote)?.ceiling = ceiling
        (remote as? DirectoryRemote)?.ceiling = ceiling
        return (remote, warnings)
    }

    /// `remote.maxDocumentBytes`; skipped documents are remembered in `.docsync`.
    private var ceiling: RemoteDocumentCeiling {
        RemoteDocumentCeiling(
            maxBytes: Int64(config["remote.maxDocumentBytes"] ?? "") ?? RemoteDocumentCeiling.defaultBytes,
            memoryPath: metadata + "/remote-skipped.json", mayWrite: !readOnly)
    }
}
