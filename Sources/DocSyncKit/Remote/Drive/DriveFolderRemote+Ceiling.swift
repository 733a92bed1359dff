import Foundation

/// `remote.maxDocumentBytes` on a drive-layout folder remote (see RemoteDocumentCeiling):
/// a version's size is read from its object's stat (or its pack's index) before the object is.
extension DriveFolderRemote {
    /// The version's size when its object is larger than the ceiling, else nil.
    func oversize(_ hash: String) -> Int64? {
        guard let size = objects.size(of: hash), size > ceiling.maxBytes else { return nil }
        return size
    }

    /// Leaves the versions too large to read out of `changes` (named in `withheld`, so
    /// never read as deleted) and looks again at those earlier pulls skipped: reported
    /// again while still too large, brought once they fit (until the tree holds that
    /// version), forgotten once the remote has another version of the document. Says so.
    func withholdOversized(_ changes: inout RemoteChanges) {
        let remembered = ceiling.remembered(url: displayURL)
        var keep: [RemoteDocumentCeiling.Skipped] = []
        // Why look before filtering: a clone's 100,000 entries copied to leave none out.
        if changes.entries.contains(where: { !$0.deleted && $0.hash.flatMap(oversize) != nil }) {
            changes.entries.removeAll { entry in
                guard !entry.deleted, let hash = entry.hash, let size = oversize(hash) else { return false }
                keep.append(
                    RemoteDocumentCeiling.Skipped(
                        path: entry.path ?? entry.refId, size: size, key: hash, entry: entry))
                changes.withheld.insert(entry.refId)
                return true
            }
        }
        let new = keep.count
        // A snapshot names every document the remote has: what it says stands.
        if !remembered.isEmpty && !changes.isSnapshot {
            let named = Set(changes.entries.map(\.refId)).union(changes.withheld)
            for item in remembered {
                guard let entry = item.entry, let hash = entry.hash, !named.contains(entry.refId),
                    heldVersion?(entry.refId, entry.changesetId) != true, let size = objects.size(of: hash)
                else { continue }
                var still = item
                still.size = size
                keep.append(still)
                if size > ceiling.maxBytes {
                    changes.withheld.insert(entry.refId)
                } else {
                    presentedSkipped.insert(entry.refId)
                    changes.entries.append(entry)
                }
            }
        }
        for (i, item) in keep.enumerated() where i < new || item.size > ceiling.maxBytes {
            changes.warnings.append(ceiling.tooLarge(item.path, size: item.size, url: displayURL))
        }
        ceiling.remember(keep, url: displayURL)
    }

    /// After a push: the documents it wrote have a newer version than the one skipped
    /// (made from it, since the push was let through), which is not brought again.
    func forgetSkipped(_ writes: [RemoteWrite]) {
        let remembered = ceiling.remembered(url: displayURL)
        guard !remembered.isEmpty else { return }
        let written = Set(writes.map(\.refId))
        ceiling.remember(remembered.filter { $0.entry.map { !written.contains($0.refId) } ?? false }, url: displayURL)
    }

    /// A push that would replace or delete a document whose remote version this tree
    /// skipped for its size (never read, so never merged) is refused.
    func refuseOverwritingSkipped(_ writes: [RemoteWrite]) throws {
        let remembered = ceiling.remembered(url: displayURL).filter {
            $0.entry.map { !presentedSkipped.contains($0.refId) } ?? false
        }
        guard !remembered.isEmpty else { return }
        let byRefId = Dictionary(remembered.map { ($0.entry!.refId, $0) }, uniquingKeysWith: { a, _ in a })
        for write in writes {
            guard let item = byRefId[write.refId] else { continue }
            throw RemoteError.rejected(url: displayURL, reason: ceiling.pushRefused(item.path, size: item.size))
        }
    }
}
