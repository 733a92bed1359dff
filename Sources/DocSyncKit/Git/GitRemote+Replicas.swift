import Foundation

/// Who a git remote knows: nothing but the branch's history says it. Each docsync commit
/// ends with trailers naming the replica that made it and the docsync version it ran:
///
///     Replica: 9461eb2315bc
///     Docsync-Version: 0.1.0
///
/// `docsync replicas forget` makes an empty commit with `Retired-Replica: <id>`: from
/// there back, that replica's commits no longer count (for gc or the list). A later
/// commit of its own makes it known again.
extension GitRemote {
    static let versionTrailer = "Docsync-Version:"
    static let retiredTrailer = "Retired-Replica:"

    /// The trailers every docsync commit ends with.
    static func trailers(of replica: ReplicaInfo) -> String {
        "Replica: \(replica.replicaId)\n" + (replica.version.map { "\(versionTrailer) \($0)\n" } ?? "")
            + (replica.selection.flatMap(selectionTrailer) ?? "")
    }

    /// `Sparse-Selection: ["/contacts/"]`: a sparse replica's selection, as JSON (patterns
    /// may hold spaces), in each of its commits: gc reads the latest one's.
    static let selectionKey = "Sparse-Selection:"

    static func selectionTrailer(_ patterns: [String]) -> String? {
        guard let data = try? JSONEncoder().encode(patterns) else { return nil }
        return "\(selectionKey) \(String(decoding: data, as: UTF8.self))\n"
    }

    /// The selection a commit's message names (nil: its replica keeps everything).
    static func selection(inMessage message: String) -> [String]? {
        guard let text = trailer(selectionKey, in: message) else { return nil }
        return try? JSONDecoder().decode([String].self, from: Data(text.utf8))
    }

    /// What the branch's first-parent history says, newest first, at most
    /// `gcHistoryLimit` commits back.
    struct HistoryScan {
        /// For each known replica, how many commits back its latest commit is.
        var latestPush: [String: Int] = [:]
        /// That latest commit of each known replica.
        var latestCommit: [String: GitRepository.CommitInfo] = [:]
        /// The selection each sparse replica's latest commit names.
        var selection: [String: [String]] {
            latestCommit.compactMapValues { GitRemote.selection(inMessage: $0.message) }
        }
        /// For each tombstone asked about, how many commits back its current content was written.
        var introduced: [String: Int] = [:]
    }

    /// Walks the history once. `tombstones` (path → blob at head) are the files whose
    /// introducing commit is wanted; with none, no tree is diffed.
    func scanHistory(head: GitOID, tombstones: [String: GitOID] = [:]) throws -> HistoryScan {
        var scan = HistoryScan()
        // Retired before they committed again: their older commits do not count.
        var retired = Set<String>()
        var current: GitOID? = head
        var index = 0
        while let id = current, index < Self.gcHistoryLimit {
            let info = try repo.commit(id)
            // Read first: a replica that retires itself (--force) is retired by this commit.
            for line in info.message.split(separator: "\n")
            where line.hasPrefix(Self.retiredTrailer + " ") {
                let gone = line.dropFirst(Self.retiredTrailer.count + 1).trimmingCharacters(
                    in: .whitespaces)
                if !gone.isEmpty, scan.latestPush[gone] == nil { retired.insert(gone) }
            }
            if let replicaId = Self.replicaId(inMessage: info.message), scan.latestPush[replicaId] == nil,
                !retired.contains(replicaId)
            {
                scan.latestPush[replicaId] = index
                scan.latestCommit[replicaId] = info
            }
            if !tombstones.isEmpty {
                let parentTree = try info.parents.first.map { try repo.commit($0).tree }
                for change in try repo.diff(from: parentTree, to: info.tree) {
                    guard let path = change.newPath, scan.introduced[path] == nil, let blob = change.newBlob,
                        tombstones[path] == blob
                    else { continue }
                    scan.introduced[path] = index
                }
            }
            current = info.parents.first
            index += 1
        }
        return scan
    }

    public func knownReplicas() throws -> [KnownReplica] {
        guard let head = try fetchHead() else { return [] }
        let scan = try scanHistory(head: head)
        return scan.latestCommit.map { replicaId, commit in
            KnownReplica(
                replicaId: replicaId, name: Self.replicaName(fromAuthor: commit.author) ?? replicaId,
                lastSync: commit.time * 1000, seen: commit.id,
                version: Self.trailer(Self.versionTrailer, in: commit.message))
        }.sorted { $0.replicaId < $1.replicaId }
    }

    /// Each replica's name (its latest commit's author), from the history this tree last
    /// fetched: no network, for lines that name a replica (`status`, `conflicts`, `log`).
    public func replicaNamesAtHand() -> [String: String] { cachedReplicaNames() }

    public func cachedReplicaNames() -> [String: String] {
        var names: [String: String] = [:]
        var current = try? repo.referenceTarget(trackingRef)
        var index = 0
        while let id = current, index < Self.gcHistoryLimit, let info = try? repo.commit(id) {
            if let replicaId = Self.replicaId(inMessage: info.message), names[replicaId] == nil,
                let name = Self.replicaName(fromAuthor: info.author)
            {
                names[replicaId] = name
            }
            current = info.parents.first
            index += 1
        }
        return names
    }

    /// docsync commits are authored `docsync (<name>)`.
    static func replicaName(fromAuthor author: String) -> String? {
        guard author.hasPrefix("docsync ("), author.hasSuffix(")") else { return nil }
        let name = author.dropFirst("docsync (".count).dropLast()
        return name.isEmpty ? nil : String(name)
    }

    /// One empty commit with a `Retired-Replica:` trailer, pushed like any push (a
    /// rejected push fetches and tries again, up to 5 times).
    public func forgetReplica(_ replicaId: String, replica: ReplicaInfo) throws {
        var attempts = 0
        while true {
            attempts += 1
            guard let head = try fetchHead() else { return }
            let message =
                "docsync: retire replica \(replicaId) from \(replica.name)\n\n"
                + "gc no longer waits for it; it is known again once it commits.\n\n"
                + Self.trailers(of: replica) + "\(Self.retiredTrailer) \(replicaId)\n"
            do {
                let commit = try publish(
                    baseTree: try repo.commit(head).tree, changes: [], parent: head, message: message,
                    replica: replica)
                try repo.setReference(trackingRef, to: commit, message: "docsync replicas forget")
                return
            } catch RemoteError.moved {
                guard attempts < 5 else {
                    throw Workspace.Failure.contended(
                        "the remote kept changing during 5 attempts (other replicas are pushing); try again shortly"
                    )
                }
            }
        }
    }
}
