#if canImport(Glibc)
    import Glibc
#endif

extension ObjectStore {
    struct SweepResult {
        var removed = 0
        var bytes: Int64 = 0
        /// `.docsync-tmp-…` files a killed write left behind.
        var temporaryFiles = 0
    }

    /// Removes every object whose hash is not in `keep`, and leftover temporary files.
    /// The caller holds the tree lock, so no write into the store is under way. Removing
    /// an object is safe at any moment: nothing kept refers to it, so a crash halfway
    /// leaves only objects that a later sweep removes.
    func sweep(keeping keep: Set<String>, dryRun: Bool, progress: ProgressHandler? = nil) -> SweepResult {
        var result = SweepResult()
        guard let folders = try? FileSystem.listDirectory(root) else { return result }
        defer { progress?(.finished(.gc)) }
        for (swept, folder) in folders.sorted().enumerated() {
            progress?(.step(.gc, done: swept, total: folders.count))
            let dir = root + "/" + folder
            guard folder.count == 2, FileSystem.isDirectory(dir), let names = try? FileSystem.listDirectory(dir) else {
                continue
            }
            var left = names.count
            for name in names.sorted() {
                let isTemporary = name.hasPrefix(".docsync-tmp-")
                guard isTemporary || !keep.contains(folder + name) else { continue }
                let size: Int64 = (try? FileSystem.linkStatus(dir + "/" + name))?.size ?? 0
                if !dryRun {
                    guard unlink(dir + "/" + name) == 0 else { continue }
                }
                left -= 1
                if isTemporary { result.temporaryFiles += 1 } else { result.removed += 1 }
                result.bytes += size
            }
            if left == 0 && !dryRun { rmdir(dir) }
        }
        sweepPacks(keeping: keep, dryRun: dryRun, into: &result)
        return result
    }

    /// Packs holding objects nobody needs are rewritten with only the live ones (into
    /// one new pack, complete and flushed before the old ones go); a pack without an
    /// index is what a killed run left and is removed.
    private func sweepPacks(keeping keep: Set<String>, dryRun: Bool, into result: inout SweepResult) {
        let folder = packs.folder
        guard let names = try? FileSystem.listDirectory(folder) else { return }
        let indexes = packs.allIndexes()
        let indexed = Set(indexes.map(\.packPath))
        for name in names.sorted()
        where name.hasPrefix(".docsync-tmp-") || (name.hasSuffix(".pack") && !indexed.contains(folder + "/" + name)) {
            if !dryRun { guard unlink(folder + "/" + name) == 0 else { continue } }
            result.temporaryFiles += 1
        }
        var stale: [PackIndex] = []
        var live: [(hash: String, bytes: [UInt8])] = []
        var seen = Set<String>()
        for index in indexes {
            let entries = index.entries()
            let dead = entries.filter { !keep.contains($0.hash) }
            guard !dead.isEmpty else { continue }
            result.removed += dead.count
            result.bytes += Int64(dead.reduce(0) { $0 + $1.length })
            stale.append(index)
            guard !dryRun else { continue }
            for entry in entries where keep.contains(entry.hash) && seen.insert(entry.hash).inserted {
                // A damaged copy is not carried over: `verify` reports the object missing.
                guard let raw = ContentHash.raw(entry.hash), let bytes = index.bytes(raw),
                    ContentHash.of(bytes) == entry.hash
                else { continue }
                live.append((entry.hash, bytes))
            }
        }
        guard !dryRun, !stale.isEmpty else { return }
        do {
            if !live.isEmpty {
                let writer = try PackWriter(folder: folder, files: files)
                for object in live { try writer.append(object.bytes, hash: ContentHash.raw(object.hash)!) }
                _ = try writer.finish()
                FileSystem.syncFilesystem(containing: folder)
            }
        } catch {
            return  // the old packs stay: nothing is lost, the next gc tries again
        }
        for index in stale {
            unlink(index.indexPath)
            unlink(index.packPath)
        }
        packs.forget()
    }
}
