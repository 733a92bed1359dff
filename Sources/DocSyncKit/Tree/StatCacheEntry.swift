extension StatCache {
    /// What one file looked like when it was last read, and what it held.
    public struct Entry: Sendable, Equatable {
        public var inode: UInt64
        public var size: Int64
        public var mtimeNanos: Int64
        public var ctimeNanos: Int64
        /// SHA-256 of the content, 64 lower-case hex digits.
        public var hash: String
        /// Empty when the file has none.
        public var refId: String
        /// Empty when the file has none.
        public var changesetId: String
        public var racy: Bool

        public func matches(_ stat: FileStat) -> Bool {
            !racy && inode == stat.inode && size == stat.size && mtimeNanos == stat.mtimeNanos
                && ctimeNanos == stat.ctimeNanos
        }

        /// Whether the binary file can hold it. Why an entry may not be: only a text index
        /// written by hand can hold another hash, and such an entry vouches for nothing
        /// docsync would trust (its file is read again).
        var isStorable: Bool { ContentHash.isValid(hash) }
    }
}

extension StatCache {
    /// Whether every one of `paths` (tree-relative) is as the tree's saved index says the
    /// last scan or sync left it: the same file (inode, size, times, not racy), or absent
    /// and not in the index. `docsync watch` asks this of the files whose events arrived
    /// during its own sync: docsync stamping ids and writing pulled versions is not an edit.
    /// - Parameter known: the index as the last run left it, when the caller holds it
    ///   (read from the tree's `.docsync/index` otherwise).
    public static func unchangedSinceLastScan(root: String, paths: Set<String>, known: StatCache? = nil) -> Bool {
        let index = known ?? StatCache.load(from: TreeLayout(root: root).index)
        return paths.allSatisfy { path in
            guard let now = try? FileSystem.linkStatus(root + "/" + path) else { return index[path] == nil }
            // Racy entries count too: a same-size edit within the timestamp granularity of
            // docsync's own write is caught by the next sync's scan (which re-reads racy files).
            guard let entry = index[path] else { return false }
            return entry.inode == now.inode && entry.size == now.size && entry.mtimeNanos == now.mtimeNanos
                && entry.ctimeNanos == now.ctimeNanos
        }
    }
}
