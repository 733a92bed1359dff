import Foundation

/// The append-only action journal, `.docsync/journal`: one checksummed JSON line per
/// entry. Entries are fsynced before anything acts on them. A torn last line (a crash
/// mid-append) is dropped with a warning; damage before the last line is refused, since
/// guessing could lose a user's change.
public final class Journal {
    public let path: String
    public private(set) var nextSeq: Int = 1
    public private(set) var length: Int = 0
    public private(set) var warnings: [String] = []

    public init(path: String) { self.path = path }

    public struct Damaged: Error, LocalizedError {
        public var path: String
        public var line: Int
        public var errorDescription: String? {
            "\(path): journal line \(line) is damaged (checksum mismatch); entries after it cannot be trusted. Run `docsync verify` and see docs/RECOVERY.md"
        }
    }

    /// Reads entries from byte `offset` on. Also establishes `nextSeq` and `length`, and
    /// repairs a torn tail when `repair` is set (the caller holds the tree lock).
    public func read(from offset: Int = 0, lastKnownSeq: Int = 0, repair: Bool) throws -> [JournalEntry] {
        let size = (try? FileSystem.linkStatus(path).size).map(Int.init) ?? 0
        guard offset <= size else {
            throw Damaged(path: path, line: 0)
        }
        let bytes = size > offset ? try FileSystem.readFile(path, from: offset) : []
        let parsed = ChecksummedLines.parse(bytes[...], baseOffset: offset)
        if let bad = parsed.corruptLine { throw Damaged(path: path, line: bad) }
        var entries: [JournalEntry] = []
        entries.reserveCapacity(parsed.lines.count)
        var seq = lastKnownSeq
        for line in parsed.lines {
            let entry = try JournalEntry.decode(line.payload)
            entries.append(entry)
            seq = max(seq, entry.seq)
        }
        nextSeq = seq + 1
        length = parsed.validLength
        if parsed.tornTail {
            warnings.append("\(path): the last journal entry was cut short (interrupted write); ignored it, \(parsed.lines.count) entries after offset \(offset) are intact")
            if repair { try FileSystem.truncate(path, to: parsed.validLength) }
        }
        return entries
    }

    /// Appends entries, numbering them, and fsyncs. Returns them with their `seq` set.
    @discardableResult
    public func append(_ entries: [JournalEntry]) throws -> [JournalEntry] {
        guard !entries.isEmpty else { return [] }
        var numbered = entries
        var text = ""
        for i in numbered.indices {
            numbered[i].seq = nextSeq
            nextSeq += 1
            text += ChecksummedLines.encode(try numbered[i].encodedLine())
        }
        let bytes = Array(text.utf8)
        try FileSystem.append(path, bytes)
        length += bytes.count
        return numbered
    }
}
