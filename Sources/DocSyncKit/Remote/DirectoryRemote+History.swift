import DocSyncJSON
import Foundation

/// The versions of a document the feed holds, and `verify`.
extension DirectoryRemote {
    // MARK: History

    public func history(of refId: String, path: String?) throws -> [RemoteVersionInfo] {
        _ = try identity()
        let now = try position()
        let bytes = try readFeedFile(from: 0, epoch: now.epoch)
        guard bytes.count >= now.length else {
            throw RemoteError.damaged(url: displayURL, reason: "\(meta)/feed is shorter than its recorded length")
        }
        let parsed = ChecksummedLines.parse(bytes[0..<now.length])
        var versions: [RemoteVersionInfo] = []
        for line in parsed.lines {
            guard let e = try? JSONDecoder().decode(FeedLine.self, from: Data(line.payload.utf8)), e.refId == refId
            else { continue }
            versions.append(
                RemoteVersionInfo(
                    id: "@\(line.endOffset)", changesetId: e.changesetId, time: e.time, author: e.replica,
                    path: e.path, hash: e.hash, deleted: e.deleted))
        }
        return versions.reversed()
    }

    public func content(of version: RemoteVersionInfo, refId: String) throws -> [UInt8] {
        try FolderRemoteFiles.content(of: version, refId: refId, objects: objects, url: displayURL, ceiling: ceiling)
    }

    // MARK: Verify

    public func verify() -> [String] {
        // Any symlink under the root, read or not (the perimeter: see RemotePerimeter).
        var problems = files.strangeEntries()
        do {
            _ = try identity()
            let now = try position()
            let entries = try readFeed(from: 0, to: now.length, epoch: now.epoch)
            var latest: [String: FeedLine] = [:]
            for e in entries where e.isDocument { latest[e.refId] = e }
            var paths: [String: String] = [:]
            for e in latest.values.sorted(by: { $0.refId < $1.refId }) {
                if e.deleted {
                    if !files.exists(tombstonePath(e.refId)) {
                        problems.append("remote: tombstone for \(e.refId) is missing")
                    }
                    continue
                }
                if let path = e.path {
                    if let other = paths[path] {
                        problems.append("remote: \(path) is claimed by both \(other) and \(e.refId)")
                    }
                    paths[path] = e.refId
                }
                do { _ = try read(e.entry) } catch { problems.append("remote: " + error.localizedDescription) }
                if let path = e.path, let hash = e.hash,
                    let bytes = try? SafeTreeIO(perimeter: files).readIfPresent(path),
                    ContentHash.of(bytes) != hash
                {
                    problems.append(
                        "remote: \(path) does not hold its latest version \(e.changesetId) (a push was interrupted, or the file was edited in the remote folder)"
                    )
                }
                // Why: a readable copy deleted from the remote folder (by hand, or a partial
                // copy of the share) went unnoticed; pulls still work from objects/.
                if let path = e.path, !files.unrecorded.exists(root + "/" + path) {
                    problems.append(
                        "remote: \(path) is missing from the remote folder (version \(e.changesetId) is still in .docsync/objects; the next push of that document writes it again)"
                    )
                }
            }
        } catch {
            problems.append(error.localizedDescription)
        }
        return problems
    }
}
