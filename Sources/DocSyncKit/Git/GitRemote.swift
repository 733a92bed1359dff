import CLibGit2
import DocSyncJSON
import Foundation

/// A git repository as the remote: documents at their paths in the branch's tree,
/// tombstones under `.docsync/tombstones/`, one commit per push. The fetched history is
/// cached in a bare repository inside the working tree's `.docsync/git`. The cursor is
/// the commit the base reflects, so a pull diffs two trees and reads only what changed.
///
/// Commits made with plain git are first-class: a changed blob is a change even if its
/// changesetId was not updated, and a file without ids is adopted. Ids derived for such
/// files are deterministic (every replica derives the same), and the stamped version is
/// published back by the next push.
public final class GitRemote: Remote {
    public let url: GitURL
    public let branch: String
    public var displayURL: String { url.display }
    public var writeProgress: ((RemoteWrite, Int, Int) -> Void)?
    /// The replica id of the tree this remote serves (its own commits carry it as a
    /// trailer), for `RemoteChanges.ownVersions`. Nil: not told.
    public var localReplica: String?
    let repo: GitRepository
    let context: TransportContext
    let effectiveURL: String

    /// Fetches that went through libgit2's transport: none for a local repository (the
    /// tests' proof that `GitLocalFetch` served it).
    var fetchesOverTransport = 0

    /// `remote.maxDocumentBytes`, and where skipped documents are remembered.
    public var ceiling = RemoteDocumentCeiling()
    /// Paths of skipped documents `changes` brought again because they fit now: the
    /// engine merges them, so a push made after that is no longer refused for them.
    var presentedSkipped = Set<String>()
    /// Whether the tree holds a version (see `Remote.tellHeldVersions`).
    var heldVersion: ((_ refId: String, _ changesetId: String) -> Bool)?

    public func tellHeldVersions(_ held: @escaping (_ refId: String, _ changesetId: String) -> Bool) {
        heldVersion = held
    }

    /// Content of versions docsync derived (stamped) during `changes`, by refId.
    var derivedContent: [String: [UInt8]] = [:]
    /// Blob of each version `changes` returned, by refId.
    var blobOf: [String: GitOID] = [:]

    static let gitReplica = "git0"
    static let tombstoneFolder = ".docsync/tombstones/"
    /// Shared conflict records: `<refId>/<changesetId>.meta.json` and the losing bytes
    /// beside it as `<changesetId>.json`.
    static let conflictFolder = ".docsync/conflicts/"
    /// When each document was last renamed, and by whom: `<refId>.json` holding
    /// `{"movedAt", "path", "refId", "replica"}`, written with the rename. A commit's time
    /// is when it was pushed; of two renames of one document the later *rename* wins.
    static let movedFolder = ".docsync/moved/"

    struct MovedRecord: Codable {
        var refId: String
        var path: String
        var movedAt: Int64
        var replica: String
    }

    static func conflictPaths(_ record: ConflictStore.Record) -> (meta: String, bytes: String) {
        let stem =
            conflictFolder + DocumentPath.fileName(forRefId: record.refId) + "/"
            + DocumentPath.fileName(forRefId: record.storeName)
        return (stem + ".meta.json", stem + ".json")
    }

    public init(url text: String, branch: String, cachePath: String, settings: GitTransportSettings) throws {
        guard let url = GitURL(text) else {
            throw RemoteError.rejected(url: text, reason: "not a URL docsync understands")
        }
        self.url = url
        self.branch = branch
        let resolved = url.resolved(with: SSHConfig(path: settings.home + "/.ssh/config"))
        effectiveURL = resolved.url
        context = TransportContext(
            settings: settings, url: GitURL(resolved.url) ?? url, identityFile: resolved.identityFile)
        repo = try GitRepository.openOrCreateBare(at: cachePath)
    }

    var trackingRef: String { "refs/remotes/origin/\(branch)" }

    // MARK: Errors

    /// Turns a libgit2 failure into what the user should hear: try later (75), or fix
    /// something (credentials, trust, URL, branch).
    func translate(_ error: GitError, during action: String) -> RemoteError {
        if error.code == GitError.certificate || context.trustProblem != nil {
            return .rejected(url: displayURL, reason: context.trustProblem ?? "certificate refused: \(error.message)")
        }
        if error.code == GitError.auth || error.code == GitError.user
            || error.message.lowercased().contains("authentication")
        {
            return authenticationFailed()
        }
        let lower = error.message.lowercased()
        if url.scheme == .file, !FileSystem.exists(FileSystem.absolute(url.path)) {
            return .rejected(
                url: displayURL,
                reason:
                    "no git repository there (the path does not exist); check the URL, or create one with `git init --bare \(url.path)`"
            )
        }
        // Why: libgit2 reports ENOSPC as an OS-class error, which counted as "network":
        // a full disk exited 75, and cron stays silent on 75 while the disk stays full.
        // Checked first: the message names a path, which may contain any of the words below.
        if lower.contains("no space left on device") || lower.contains("disk quota exceeded")
            || Self.isNearlyFull(repo.path)
        {
            return diskFull(error, during: action)
        }
        // The HTTP status only as libgit2 words it. Why: a bare "404" matched a path that
        // merely contained those digits (a temporary folder's UUID) and blamed the URL.
        if lower.contains("could not find repository") || lower.contains("not found") && url.scheme != .file
            || lower.contains("does not appear to be a git repository")
            || lower.contains("repository not found") || lower.contains("status code: 404")
            || lower.contains("404 not found")
        {
            return .rejected(
                url: displayURL,
                reason:
                    "no git repository there (\(error.message)); check the URL, or create one with `git init --bare`")
        }
        if error.isNetwork || lower.contains("connect") || lower.contains("early eof")
            || lower.contains("unexpected") && lower.contains("socket")
        {
            return .unreachable(url: displayURL, reason: error.message)
        }
        return .damaged(url: displayURL, reason: "\(action) failed: \(error.message)")
    }

    /// Failed authentication: what was tried, and how to give docsync a credential.
    private func authenticationFailed() -> RemoteError {
        let tried =
            context.lastCredentialKind.isEmpty
            ? "no usable credentials found" : "tried \(context.lastCredentialKind)"
        let fix =
            url.scheme == .ssh
            ? "load a key into ssh-agent or set `docsync config remote.sshKey ~/.ssh/id_ed25519`"
            : "set DOCSYNC_GIT_TOKEN or configure a git credential helper"
        return .rejected(url: displayURL, reason: "authentication failed (\(tried)); \(fix)")
    }

    /// A full disk: never a network problem (75), so cron does not stay silent about it.
    private func diskFull(_ error: GitError, during action: String) -> RemoteError {
        let lower = error.message.lowercased()
        let which = lower.contains("no space left on device") ? "" : "No space left on device for \(repo.path): "
        return .damaged(
            url: displayURL,
            reason:
                "\(action) failed: \(error.message) (\(which)the disk is full: free some space and run again; local changes stay recorded)"
        )
    }

    /// Whether the file system holding `path` has (almost) no room left. Why: libgit2
    /// does not always pass ENOSPC on; an object write that failed for want of space later
    /// surfaced as "target OID for the reference doesn't exist", which blamed the remote.
    static func isNearlyFull(_ path: String) -> Bool {
        var fs = statvfs()
        guard statvfs(path, &fs) == 0 else { return false }
        return UInt64(fs.f_bavail) * UInt64(fs.f_frsize) < 256 * 1024
    }

    /// Fetches the branch; nil when the repository has no such branch yet (a new,
    /// empty repository is a valid remote).
    func fetchHead() throws -> GitOID? {
        let branches: [String]
        do {
            branches = try fetchBranch()
        } catch let error as GitError {
            throw translate(error, during: "fetch")
        }
        let head = try repo.referenceTarget(trackingRef)
        if head == nil, !branches.isEmpty {
            throw RemoteError.rejected(
                url: displayURL,
                reason:
                    "branch '\(branch)' does not exist there (branches: \(branches.sorted().joined(separator: ", "))); set `docsync config remote.branch NAME`"
            )
        }
        return head
    }

    /// A path or `file://` URL this process can open is read directly (`GitLocalFetch`);
    /// anything else, or a path that is no repository, goes through the transport.
    private func fetchBranch() throws -> [String] {
        if url.scheme == .file, let remote = GitLocalFetch.open(FileSystem.absolute(url.path)) {
            return try GitLocalFetch.fetch(into: repo, from: remote, branch: branch)
        }
        fetchesOverTransport += 1
        context.trustProblem = nil
        context.credentialAttempts = 0
        return try TrustStore.with(context.settings, url: context.url, scratch: repo.path) {
            try GitTransport.fetch(repo, url: effectiveURL, branch: branch, context: context)
        }
    }

    static let cursorPrefix = "git:"

    func commitOf(cursor: String?) throws -> GitOID? {
        guard let cursor else { return nil }
        guard cursor.hasPrefix(Self.cursorPrefix) else {
            throw RemoteError.damaged(
                url: displayURL, reason: "this tree last synced with a different kind of remote (cursor \(cursor))")
        }
        let id = String(cursor.dropFirst(Self.cursorPrefix.count))
        return id.isEmpty ? nil : id
    }

}
