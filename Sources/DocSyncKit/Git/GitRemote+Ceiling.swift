import Foundation

/// `remote.maxDocumentBytes` on a git remote (see RemoteDocumentCeiling): a blob's size is
/// read from its object header before the blob is; a larger document is not read at all.
extension GitRemote {
    /// The blob's size when it is larger than the ceiling, else nil.
    func oversize(_ blob: GitOID) -> Int64? {
        guard let size = try? repo.objectSize(blob), size > ceiling.maxBytes else { return nil }
        return size
    }

    /// The blob's bytes, or nil when it is larger than the ceiling (then never read).
    func smallBlob(_ blob: GitOID) throws -> [UInt8]? {
        if oversize(blob) != nil { return nil }
        return try repo.blob(blob)
    }

    /// The blob's bytes, or an error naming `path` when it is larger than the ceiling.
    func boundedBlob(_ blob: GitOID, path: String) throws -> [UInt8] {
        if let size = oversize(blob) {
            throw RemoteError.damaged(url: displayURL, reason: ceiling.tooLarge(path, size: size, url: displayURL))
        }
        return try repo.blob(blob)
    }

    /// The documents earlier pulls skipped for their size, looked at again (their paths
    /// are in no diff from the cursor on): reported again while still too large, pulled
    /// once they fit (until the tree holds that version), forgotten once the branch holds
    /// something else there. Remembers them with those `reading` skipped now, and says so.
    func revisitSkipped(into reading: inout DiffReading, headTree: GitOID?) {
        let remembered = ceiling.remembered(url: displayURL)
        guard !remembered.isEmpty || !reading.skipped.isEmpty else { return }
        let skippedNow = Set(reading.skipped.map(\.path))
        var keep = reading.skipped
        for item in remembered where !skippedNow.contains(item.path) {
            guard let headTree, (try? repo.blobId(atPath: item.path, inTree: headTree)) == item.key else { continue }
            if let size = oversize(item.key) {
                var still = item
                still.size = size
                keep.append(still)
                continue
            }
            let introduction = item.introducedAt.map {
                PlainGitIntroduction(
                    time: $0, replacedChangesetId: item.replacedChangesetId, replacedRefId: item.replacedRefId)
            }
            let previous = item.previousBlob.flatMap { try? smallBlob($0) }
            guard
                case .success(let entry)? = try? entry(
                    path: item.path, blob: item.key, previous: previous, commitTime: item.commitTime ?? 0,
                    introduction: introduction, historyRead: item.historyRead ?? false)
            else { continue }
            // Pulled by an earlier run: nothing left to do.
            if heldVersion?(entry.refId, entry.changesetId) == true { continue }
            presentedSkipped.insert(item.path)
            if reading.puts[entry.refId] == nil { reading.puts[entry.refId] = (0, entry) }
            keep.append(item)
        }
        for item in keep where oversize(item.key) != nil {
            reading.warnings.append(ceiling.tooLarge(item.path, size: item.size, url: displayURL))
        }
        ceiling.remember(keep, url: displayURL)
    }

    /// A push that would replace or delete a document the remote holds a version of that
    /// this tree skipped for its size (never read, so never merged) is refused.
    func refuseOverwritingSkipped(_ writes: [RemoteWrite], baseTree: GitOID?) throws {
        let remembered = ceiling.remembered(url: displayURL).filter { !presentedSkipped.contains($0.path) }
        guard !remembered.isEmpty, let baseTree else { return }
        let byPath = Dictionary(remembered.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
        for write in writes {
            for path in [write.previous?.path, write.new?.path].compactMap({ $0 }) {
                guard let item = byPath[path], (try? repo.blobId(atPath: path, inTree: baseTree)) == item.key else {
                    continue
                }
                throw RemoteError.rejected(url: displayURL, reason: ceiling.pushRefused(path, size: item.size))
            }
        }
    }
}
