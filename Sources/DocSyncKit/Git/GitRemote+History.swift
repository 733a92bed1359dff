import CLibGit2
import DocSyncJSON
import Foundation

/// The versions of a document in the branch's history, and `verify`.
extension GitRemote {
    public func noteReplica(_ replica: ReplicaInfo, seen cursor: String) throws {
        // Recorded in commit messages; a no-op sync must not create commits.
    }

    public func verify() -> [String] {
        var problems: [String] = []
        do {
            guard let head = try fetchHead() else { return [] }
            var seen: [String: String] = [:]
            for file in try repo.files(inTree: try repo.commit(head).tree) where Self.isDocumentPath(file.path) {
                guard let bytes = try smallBlob(file.blob) else {
                    problems.append("remote: \(file.path) is larger than remote.maxDocumentBytes; not checked")
                    continue
                }
                guard let scanned = try? JSONScanner.scanDocument(bytes) else {
                    problems.append("remote: \(file.path) is not valid JSON")
                    continue
                }
                guard let refId = scanned.member(named: "refId")?.stringValue else { continue }
                if let other = seen[refId] { problems.append("remote: \(file.path) and \(other) share refId \(refId)") }
                seen[refId] = file.path
            }
        } catch {
            problems.append((error as? LocalizedError)?.errorDescription ?? "\(error)")
        }
        return problems
    }

    /// Every version of the document `refId` in the branch's history (first-parent),
    /// newest first: the commits that changed its content or path, or deleted it.
    public func history(of refId: String, path: String?) throws -> [RemoteVersionInfo] {
        _ = try? fetchHead()
        guard var current = try repo.referenceTarget(trackingRef) else { return [] }
        // The document's file in each commit, newest first.
        var states: [(commit: GitRepository.CommitInfo, file: GitRepository.TreeFile?)] = []
        var lastPath = path
        for _ in 0..<1000 {
            let info = try repo.commit(current)
            let files = try repo.files(inTree: info.tree).filter { Self.isDocumentPath($0.path) }
            func holds(_ f: GitRepository.TreeFile) -> Bool {
                (try? smallBlob(f.blob)).flatMap { try? JSONScanner.scanDocument($0) }?.member(named: "refId")?
                    .stringValue == refId
            }
            let file = files.first { $0.path == lastPath && holds($0) } ?? files.first(where: holds)
            if let file { lastPath = file.path }
            states.append((info, file))
            guard let parent = info.parents.first else { break }
            current = parent
        }
        var versions: [RemoteVersionInfo] = []
        for (i, state) in states.enumerated() {
            let older = i + 1 < states.count ? states[i + 1].file : nil
            guard state.file?.blob != older?.blob || state.file?.path != older?.path else { continue }
            if let file = state.file {
                // A version larger than remote.maxDocumentBytes is not read, nor listed.
                guard let bytes = try smallBlob(file.blob) else { continue }
                let cs = (try? JSONScanner.scanDocument(bytes))?.member(named: "changesetId")?.stringValue ?? ""
                versions.append(
                    RemoteVersionInfo(
                        id: state.commit.id, changesetId: cs, time: state.commit.time * 1000,
                        author: state.commit.author,
                        path: file.path, hash: ContentHash.of(bytes), deleted: false))
            } else if older != nil {
                versions.append(
                    RemoteVersionInfo(
                        id: state.commit.id, changesetId: "", time: state.commit.time * 1000,
                        author: state.commit.author,
                        path: older?.path, hash: nil, deleted: true))
            }
        }
        return versions
    }

    public func content(of version: RemoteVersionInfo, refId: String) throws -> [UInt8] {
        guard !version.deleted, let path = version.path else {
            throw RemoteError.damaged(url: displayURL, reason: "version \(version.id) is a deletion")
        }
        let files = try repo.files(inTree: try repo.commit(version.id).tree)
        guard let file = files.first(where: { $0.path == path }) else {
            throw RemoteError.damaged(url: displayURL, reason: "\(path) is not in commit \(version.id)")
        }
        return try boundedBlob(file.blob, path: path)
    }
}
