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
            guard folder.count == 2, FileSystem.isDirectory(dir), let names = try? FileSystem.listDirectory(dir) else { continue }
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
        return result
    }
}
