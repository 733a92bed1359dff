/// The index as docsync wrote it before the binary file (`docsync-index 1`: a sealed text
/// file, one line per file), read once when a tree made by an older docsync is opened;
/// the next save writes the binary file. docs/FORMATS.md describes it.
enum IndexTextFormat {
    /// The entries of a sound text index; nil if `bytes` is not one (wrong header,
    /// a malformed line, a broken seal).
    static func entries(_ bytes: [UInt8]) -> [String: StatCache.Entry]? {
        var entries: [String: StatCache.Entry] = [:]
        entries.reserveCapacity(bytes.count / 160)
        var sawHeader = false
        var sound = true
        let sealed = SealedFile.forEachLine(bytes) { f in
            guard sound else { return }
            guard sawHeader else {
                sawHeader = f.count == 1 && f.equals(0, "docsync-index 1")
                sound = sawHeader
                return
            }
            guard f.count == 9, let ino = f.uint64(1), let size = f.int64(2), let m = f.int64(3), let c = f.int64(4)
            else {
                sound = false
                return
            }
            entries[f.text(0)] = StatCache.Entry(
                inode: ino, size: size, mtimeNanos: m, ctimeNanos: c, hash: f.raw(5),
                refId: f.text(6), changesetId: f.text(7), racy: f.equals(8, "r"))
        }
        return sealed && sound && sawHeader ? entries : nil
    }
}
