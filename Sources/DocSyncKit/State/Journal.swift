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

    /// The largest `seq` an entry read back may carry; far beyond any real journal, and
    /// low enough that numbering on from it cannot overflow.
    static let maxSeq = 1 << 53

    public struct Damaged: Error, LocalizedError {
        public var path: String
        public var line: Int
        public var reason = "checksum mismatch"
        public var errorDescription: String? {
            "\(path): journal line \(line) is damaged (\(reason)); entries after it cannot be trusted. Run `docsync verify` and see docs/RECOVERY.md"
        }
    }

    /// Reads entries from byte `offset` on. Also establishes `nextSeq` and `length`, and
    /// repairs a torn tail when `repair` is set (the caller holds the tree lock).
    public func read(from offset: Int = 0, lastKnownSeq: Int = 0, repair: Bool) throws -> [JournalEntry] {
        let size = (try? FileSystem.linkStatus(path).size).map(Int.init) ?? 0
        if offset > size {
            try startOver(size: size, offset: offset, lastKnownSeq: lastKnownSeq, repair: repair)
            return []
        }
        let bytes = size > offset ? try FileSystem.readFile(path, from: offset) : []
        let parsed = ChecksummedLines.parse(bytes[...], baseOffset: offset)
        if let bad = parsed.corruptLine { throw Damaged(path: path, line: bad) }
        var entries = try decodeEntries(parsed.lines)
        var validLength = parsed.validLength
        var torn = parsed.tornTail
        // A batch is appended in one write, but a crash or a full disk can keep only its
        // first lines. Why they must go too: a pull's batch says "the base is now the
        // remote version" before "write that version into the file"; a replayed half
        // moved the base without the file, so the old file read as a local edit and was
        // pushed over the newer remote version (found by the full-disk tests).
        let complete = (entries.lastIndex { $0.more != true }).map { $0 + 1 } ?? 0
        if complete < entries.count {
            entries.removeSubrange(complete...)
            validLength = complete == 0 ? offset : parsed.lines[complete - 1].endOffset
            torn = true
        }
        for i in entries.indices { entries[i].more = nil }
        nextSeq = max(entries.map(\.seq).max() ?? lastKnownSeq, lastKnownSeq) + 1
        length = validLength
        if torn {
            warnings.append(
                "\(path): the last journal write was cut short (interrupted, or the disk was full); ignored it, \(entries.count) entries after offset \(offset) are intact"
            )
            if repair { try FileSystem.truncate(path, to: validLength) }
        }
        return entries
    }

    /// The journal is shorter than the checkpoint (truncated, deleted, or an older copy
    /// put back). Why not refuse: every entry before `offset` is already folded into the
    /// sealed state, so nothing the sync needs is missing; only history is. The remains
    /// are moved aside and a new journal is started (failing with "line 0 is damaged
    /// (checksum mismatch)" would point at the wrong fix).
    private func startOver(size: Int, offset: Int, lastKnownSeq: Int, repair: Bool) throws {
        let aside = path + ".damaged-\(FileSystem.currentTimeNanos / 1_000_000_000)"
        warnings.append(
            "\(path): the journal is shorter than the last checkpoint in .docsync/state (\(size) of \(offset) bytes: truncated or replaced); "
                + "the sync state is intact, so nothing is lost but the journal's history"
                + (repair ? "; moved what is left to \(aside) and started a new journal" : ""))
        if repair {
            if FileSystem.exists(path) { try FileSystem.rename(path, aside) }
            try FileSystem.writeAtomically(path, [])
        }
        nextSeq = lastKnownSeq + 1
        length = repair ? 0 : size
    }

    /// The entries of sound checksummed lines, in order.
    private func decodeEntries(_ lines: [ChecksummedLines.Line]) throws -> [JournalEntry] {
        var entries: [JournalEntry] = []
        entries.reserveCapacity(lines.count)
        for (i, line) in lines.enumerated() {
            // Why: a line whose checksum matches but which is no entry this version knows
            // (a hand edit) failed with a bare DecodingError that named no file.
            // A seq no journal can reach (the fuzzer's Int.max) would overflow the numbering
            // below and trap: refuse it like any other entry that makes no sense.
            guard let entry = try? JournalEntry.decode(line.payload), entry.seq <= Journal.maxSeq else {
                throw Damaged(path: path, line: i + 1, reason: "not a journal entry this version understands")
            }
            entries.append(entry)
        }
        return entries
    }

    /// Appends entries, numbering them, and fsyncs. Returns the numbers they were given,
    /// in order. Written a megabyte at a time, so a batch of 100,000 entries is never held
    /// as text whole; a crash mid-way leaves a batch whose last line says `more`, which
    /// reading drops. Why numbers and not the entries numbered: a copy of a clone's batch
    /// (100,000 entries of a few hundred bytes each) was a sixth of its peak memory.
    @discardableResult
    public func append(_ entries: [JournalEntry]) throws -> Range<Int> {
        guard !entries.isEmpty else { return nextSeq..<nextSeq }
        let written: Int
        do {
            written = try FileSystem.append(path) { write in
                try ChecksummedLines.write(to: write) { add in
                    for (i, entry) in entries.enumerated() {
                        var line = entry
                        line.seq = nextSeq + i
                        line.more = i < entries.count - 1 ? true : nil
                        try add(try line.encodedLine())
                    }
                }
            }
        } catch {
            // Take back what part of the batch did get written (a full disk), so the
            // file ends where it did; if even that fails, reading drops the half batch.
            try? FileSystem.truncate(path, to: length)
            throw error
        }
        let seqs = nextSeq..<nextSeq + entries.count
        nextSeq = seqs.upperBound
        length += written
        return seqs
    }
}
