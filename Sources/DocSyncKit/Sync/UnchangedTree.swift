/// How a run knows that nothing in the tree changed without reading the sync state's
/// base: the index flags each entry whose refId, hash and path are its document's tracked
/// version ("synced"), and says in its header which state those flags were set against
/// (a stamp of that state file's checksum). When the state is still that file, nothing is
/// pending, and the walk finds exactly the flagged entries, each file as the index saw it
/// (not racy), then every tracked document is in its file, unchanged and at its path, and
/// there is no other file: the scan would record nothing. Why: a no-op `status` at
/// 100,000 documents spent a third of its time reading the base and looking every
/// document up in it (docs/PERFORMANCE.md).
///
/// Anything else (a flag missing, a file changed or racy, a file more or fewer, another
/// state) and the run reads the base and scans as before: the flags can only make a run
/// skip work whose answer they prove.
public struct UnchangedTree: Sendable {
    /// The stamp of the state the index's flags must be set against.
    let stamp: UInt64
    /// How many documents the state tracks.
    let documents: Int

    /// What a run can check the tree against: nil when the state is not a saved file
    /// as it was read, or has pending actions (then the tracked versions are not the
    /// base's, and the scan has things to tell anyway).
    init?(state: SyncState) {
        guard state.pending.isEmpty, let digest = state.savedDigest else { return nil }
        stamp = Self.stamp(digest)
        documents = state.baseCount
    }

    /// Whether the walk is a tree in which nothing changed (see the type's comment).
    func holds(_ walk: [TreeWalker.Entry], index: StatCache) -> Bool {
        walk.count == documents && index.vouchesSynced(walk, stamp: stamp)
    }

    /// The first 16 hex digits of a state file's checksum, as a number that is never 0.
    static func stamp(_ digest: String) -> UInt64 {
        max(1, UInt64(digest.prefix(16), radix: 16) ?? 1)
    }

    /// The tracked versions flags are set against, and the stamp of their state.
    public struct Against {
        let stamp: UInt64
        let tracked: VersionTable
        /// What the flags of an index read under the state this one was read as can keep.
        var carried: Carried? = nil

        /// The paths of every document whose tracked version changed since the state
        /// `from` (sorted). A record whose flag was set against `from` at any other path
        /// keeps it: flagged, its document is the one whose old path that was, and did not
        /// change; not flagged, its document did not change either, or its new path would
        /// be here. Why: looking every record's document up again was a tenth of a 1% pull
        /// at 100,000 documents.
        struct Carried {
            let from: UInt64
            let paths: [String]

            /// Whether `path` is one of `paths`, for records asked in order (`cursor`
            /// only moves forward).
            func names(_ path: UnsafeRawBufferPointer, cursor: inout Int) -> Bool {
                while cursor < paths.count {
                    let order = IndexFile.withBytes(paths[cursor]) { UTF8Order.compare($0, path) }
                    if order == 0 { return true }
                    if order > 0 { return false }
                    cursor += 1
                }
                return false
            }
        }

        /// Whether record `i` of `file` is its document's tracked version: its flag as
        /// the file holds it where that still holds (see `Carried`), else looked up.
        /// `cursor` is `names`'s, the records being asked in order.
        func isTracked(_ file: IndexFile, _ i: Int, cursor: inout Int) -> Bool {
            if let carried, carried.from != 0, file.stamp == carried.from,
                !carried.names(file.path(i), cursor: &cursor)
            {
                return file.isSynced(i)
            }
            return file.isTracked(i, in: tracked)
        }

        /// Whether the entry of `path` holding `refId` and content `hash` is its
        /// document's tracked version.
        func isTracked(_ path: String, _ refId: String, _ hash: String) -> Bool {
            // A base that cannot be read flags nothing (the run that needs it reports it).
            guard !refId.isEmpty, tracked.canRead(), let version = tracked[refId] else { return false }
            return version.hash == hash && version.path == path
        }
    }

    /// What an index saved now can flag against: nil when the state in memory is not a
    /// saved file (changed since, or its base never read: nothing to compare with).
    static func against(_ state: SyncState) -> Against? {
        guard let digest = state.savedDigest, state.pending.isEmpty else { return nil }
        let carried = state.baseChangedPaths.map {
            Against.Carried(from: state.readStamp, paths: $0.sorted(by: UTF8Order.precedes))
        }
        return Against(stamp: stamp(digest), tracked: state.baseVersions, carried: carried)
    }
}
