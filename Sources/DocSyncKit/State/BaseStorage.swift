import Foundation

/// The base of a sync state (`SyncState.base`), kept as the state file's `base` lines
/// until a run first asks for a version. Why: at 100,000 documents, making every version
/// (four strings and a dictionary insertion each) was a fifth of a no-op `status`, which
/// asks for none of them (see `UnchangedTree`). The lines are checked when the file is
/// read (its checksum, their fields and count); only the parse waits.
///
/// Shared by copies of a state until one of them changes the base (`SyncState.base`'s
/// `_modify` copies first), so a state keeps value semantics.
final class BaseStorage: @unchecked Sendable {
    /// A state file's `base` lines, one after another, as the file holds them.
    struct Lines: Sendable {
        let bytes: [UInt8]
        let range: Range<Int>
        let count: Int
    }

    private let lock = NSLock()
    /// The versions, by refId; empty until `load` while `lines` is set.
    var versions: [String: DocVersion]
    private var lines: Lines?

    init(_ versions: [String: DocVersion] = [:]) {
        self.versions = versions
    }

    init(lines: Lines) {
        versions = [:]
        self.lines = lines
    }

    /// How many versions, without parsing them.
    var count: Int { lock.withLock { lines?.count ?? versions.count } }

    /// The lines as read, while nobody has asked for a version: a save copies them as
    /// they are.
    var unparsedLines: Lines? { lock.withLock { lines } }

    /// The versions, parsed now if they were not yet.
    var parsed: [String: DocVersion] {
        lock.withLock {
            if let lines {
                versions = Self.parse(lines)
                self.lines = nil
            }
            return versions
        }
    }

    /// The versions, parsed for the caller if they were not yet (this storage, which
    /// other states may share, stays as it is).
    var copy: [String: DocVersion] { lock.withLock { lines.map(Self.parse) ?? versions } }

    /// The versions of the `base` lines `SyncState.load` checked (refId, changesetId, hash
    /// and path, tab-separated); other lines among them are passed over.
    private static func parse(_ lines: Lines) -> [String: DocVersion] {
        var versions: [String: DocVersion] = [:]
        versions.reserveCapacity(lines.count)
        SealedFile.forEachLine(lines.bytes, in: lines.range) { fields, _ in
            guard fields.equals(0, "base") else { return }
            let version = DocVersion(
                refId: fields.text(1), changesetId: fields.text(2), hash: fields.raw(3), path: fields.text(4))
            versions[version.refId] = version
        }
        return versions
    }
}
