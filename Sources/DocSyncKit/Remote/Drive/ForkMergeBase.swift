import Foundation

/// Merges two versions of a document the way the engine does (the configured policy,
/// counters and array rules), for a remote that must build a merge base: the versions'
/// changesetIds order them (the later wins a collision). Nil: not mergeable.
public typealias VersionMerge =
    @Sendable (
        _ path: String, _ base: [UInt8]?, _ earlier: (changesetId: String, bytes: [UInt8]),
        _ later: (changesetId: String, bytes: [UInt8])
    ) -> [UInt8]?

/// The base two versions of a document that met after a fork are merged from: the
/// latest version both descend from (`VersionAncestry`). When merges crossed (each side
/// had merged the other's earlier version) there are several such versions, none below
/// another; measured from any one of them, the other's fields looked changed on both
/// sides and a replica's later value could lose to an older one. Then, as git's
/// recursive merge does, the base is their merge, itself measured from their own base.
struct ForkMergeBase {
    enum Base {
        /// A version the remote holds.
        case version(FeedLine)
        /// The merge of several: its bytes, named after the latest of them.
        case merged(FeedLine, [UInt8])
    }

    let ancestry: VersionAncestry
    let bytes: (FeedLine) -> [UInt8]?
    let merge: VersionMerge?
    /// How deep merge bases of merge bases go before the latest one is taken as it is.
    static let depthLimit = 8

    func base(of refId: String, _ a: String, _ b: String) -> Base? { base(of: refId, [a], b) }

    /// The merge base of content made from every version in `mine` and version `b`.
    func base(of refId: String, _ mine: [String], _ b: String) -> Base? {
        let latest = ancestry.latestCommonAncestors(of: refId, mine, b)
        guard let last = latest.last else { return nil }
        if latest.count == 1 { return .version(last) }
        guard let merged = merged(refId, latest, depth: 0) else { return .version(last) }
        return .merged(last, merged)
    }

    /// `versions` (oldest first) merged one by one, each pair from its own merge base.
    private func merged(_ refId: String, _ versions: [FeedLine], depth: Int) -> [UInt8]? {
        guard let merge, depth < Self.depthLimit, let first = versions.first, var result = bytes(first) else {
            return nil
        }
        var below = ancestry.ancestors(of: refId, changesetId: first.changesetId)
        var latestId = first.changesetId
        for next in versions.dropFirst() {
            guard let nextBytes = bytes(next) else { return nil }
            let nextBelow = ancestry.ancestors(of: refId, changesetId: next.changesetId)
            let common = VersionAncestry.latest(below.filter { nextBelow[$0.key] != nil }) {
                ancestry.ancestors(of: refId, changesetId: $0)
            }
            let base: [UInt8]? =
                common.count > 1
                ? merged(refId, common, depth: depth + 1) ?? common.last.flatMap(bytes) : common.first.flatMap(bytes)
            guard let combined = merge(next.path ?? "", base, (latestId, result), (next.changesetId, nextBytes)) else {
                return nil
            }
            result = combined
            below.merge(nextBelow) { kept, _ in kept }
            latestId = max(latestId, next.changesetId)
        }
        return result
    }
}

/// A fork's merge bases for the documents a run asks about, reading every commit file
/// (to build the ancestry) only on the first question, and only once.
final class ForkMergeBases: @unchecked Sendable {
    private let readAncestry: () -> VersionAncestry?
    private let bytes: @Sendable (FeedLine) -> [UInt8]?
    private let merge: VersionMerge?
    private let lock = NSLock()
    private var built: VersionAncestry??

    init(
        readAncestry: @escaping () -> VersionAncestry?, bytes: @escaping @Sendable (FeedLine) -> [UInt8]?,
        merge: VersionMerge?
    ) {
        self.readAncestry = readAncestry
        self.bytes = bytes
        self.merge = merge
    }

    /// The merge base of versions `a` and `b` of document `refId` (nil: not found).
    func base(of refId: String, _ a: String, _ b: String) -> ForkMergeBase.Base? { base(of: refId, [a], b) }

    /// The merge base of content made from every version in `mine` and version `b`
    /// (nil: not found). Read again once if `b` arrived after the ancestry was read.
    func base(of refId: String, _ mine: [String], _ b: String) -> ForkMergeBase.Base? {
        lock.lock()
        defer { lock.unlock() }
        if built == nil || (built??.knows(refId, b) == false) { built = .some(readAncestry()) }
        guard let ancestry = built ?? nil else { return nil }
        return ForkMergeBase(ancestry: ancestry, bytes: bytes, merge: merge).base(of: refId, mine, b)
    }

    /// The base as a version the tree can hold: a version the remote has, or, for the
    /// merge of several, one named after the latest of them with the merged bytes.
    func version(of refId: String, _ mine: [String], _ b: String) -> (DocVersion, [UInt8]?)? {
        switch base(of: refId, mine, b) {
        case .version(let entry)?: return entry.version.map { ($0, nil) }
        case .merged(let entry, let bytes)?:
            guard let path = entry.path else { return nil }
            return (
                DocVersion(refId: refId, changesetId: entry.changesetId, hash: ContentHash.of(bytes), path: path), bytes
            )
        case nil: return nil
        }
    }
}
