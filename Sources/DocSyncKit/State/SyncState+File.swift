import Foundation

/// `.docsync/state` (docs/FORMATS.md): a sealed file of tab-separated lines, the base
/// last. Why last: a run that never asks for a base version reads the lines before them,
/// checks the rest (count and fields) without parsing it, and a save that did not change
/// the base copies those lines as they are (see `BaseStorage`).
extension SyncState {
    static let header = "docsync-state 1"

    public struct Damaged: Error, LocalizedError {
        public var path: String
        public var reason: String
        public var errorDescription: String? {
            "\(path): the sync state is \(reason). docsync will not guess (that could look like every document was deleted). See docs/RECOVERY.md: `docsync reset-base` rebuilds it safely from the tree and the remote"
        }
    }

    public static func load(from path: String) throws -> SyncState {
        guard let bytes = try FileSystem.readFileIfPresent(path) else {
            throw Damaged(path: path, reason: "missing")
        }
        guard let (end, digest) = SealedFile.bodyAndDigest(bytes) else {
            throw Damaged(path: path, reason: "damaged (checksum mismatch: torn or corrupted)")
        }
        var reader = StateFileReader(path: path, bytes: bytes)
        try reader.read(upTo: end)
        var state = reader.state
        let inOrder = reader.baseInOneRun && reader.baseInOrder && bytes.count <= Int(UInt32.max)
        state.baseStorage = BaseStorage(
            lines: BaseStorage.Lines(
                bytes: bytes, range: reader.baseLines, count: reader.baseCount,
                starts: inOrder ? reader.baseStarts : nil))
        // Other lines between the base's (an older layout): parsed now, so that a save
        // never copies them along with the base's lines.
        if !reader.baseInOneRun { _ = state.baseStorage.parsed }
        state.savedDigest = digest
        state.readStamp = UnchangedTree.stamp(digest)
        return state
    }

    /// Writes the state; returns the file's checksum (what `savedDigest` names).
    @discardableResult
    public func save(to path: String) throws -> String {
        let digest = try SealedFile.write(to: path, durable: true) { out in
            writePosition(to: &out)
            for p in pending { try out.line("pending", text: p.encodedLine()) }
            for h in held.values.sorted(by: { UTF8Order.precedes($0.refId ?? "", $1.refId ?? "") }) {
                try out.line("held", text: h.encodedLine())
            }
            baseStorage.write(to: &out)
            out.raw("end")
            out.tabNumbers(baseCount, pending.count)
            out.newline()
        }
        return digest
    }

    /// The header and the lines that say where the state stands: journal, cursor, last
    /// sync, and whether the base is ahead of the cursor.
    private func writePosition(to out: inout SealedFile.Builder) {
        out.raw(Self.header)
        out.newline()
        out.raw("journal")
        out.tabNumbers(journalSeq, journalOffset)
        out.newline()
        out.line("cursor", text: cursor ?? "")
        if let lastSync {
            out.raw("lastsync")
            out.tabNumber(lastSync)
            out.newline()
        }
        if baseAheadOfCursor {
            out.raw("ahead")
            out.newline()
        }
    }
}

/// One pass over a sound state file: every line but the base's parsed into a state; the
/// base's lines checked (five fields each) and counted, and where they lie noted.
private struct StateFileReader {
    let path: String
    let bytes: [UInt8]
    var state = SyncState()
    var baseCount = 0
    /// From the first base line's start to the last one's end.
    var baseLines = 0..<0
    /// Whether no other line lies between base lines (always so in files this version
    /// writes; an older one wrote the pending and held lines after the base).
    var baseInOneRun = true
    /// Where each base line starts, and whether their refIds are in strictly rising byte
    /// order (so in files this version writes; older ones wrote them in any order).
    var baseStarts: [UInt32] = []
    var baseInOrder = true
    private var previousRefId: Range<Int> = 0..<0
    private var sawHeader = false
    private var sawEnd = false

    init(path: String, bytes: [UInt8]) {
        self.path = path
        self.bytes = bytes
    }

    func damaged(_ reason: String) -> SyncState.Damaged { SyncState.Damaged(path: path, reason: reason) }

    mutating func read(upTo end: Int) throws {
        try SealedFile.forEachLine(bytes, in: 0..<end) { fields, line in try readLine(fields, line) }
        guard sawHeader else { throw damaged("not a state file this version understands") }
        guard sawEnd else { throw damaged("incomplete") }
    }

    private mutating func readLine(_ f: SealedFile.Fields, _ line: Range<Int>) throws {
        if !sawHeader {
            guard f.count == 1, f.equals(0, "docsync-state 1") else {
                throw damaged("not a state file this version understands")
            }
            sawHeader = true
        } else if sawEnd {
            throw damaged("damaged (a line after the end)")
        } else if f.equals(0, "base") {
            guard f.count == 5 else { throw damaged("damaged (unknown record)") }
            if baseCount == 0 {
                baseLines = line
            } else {
                if baseLines.upperBound != line.lowerBound { baseInOneRun = false }
                baseLines = baseLines.lowerBound..<line.upperBound
                if baseInOrder && f.compare(previousRefId, f.ranges[1]) >= 0 { baseInOrder = false }
            }
            previousRefId = f.ranges[1]
            if baseInOrder { baseStarts.append(UInt32(truncatingIfNeeded: line.lowerBound)) }
            baseCount += 1
        } else if f.equals(0, "end") && f.count == 3 {
            guard f.int64(1) == Int64(baseCount), f.int64(2) == Int64(state.pending.count) else {
                throw damaged("incomplete")
            }
            sawEnd = true
        } else {
            try state.readRecord(f, path: path)
        }
    }
}

extension SyncState {
    /// Folds one line of the state file other than the header, `base` and `end`.
    fileprivate mutating func readRecord(_ f: SealedFile.Fields, path: String) throws {
        if f.equals(0, "journal") && f.count == 3 {
            journalSeq = f.int64(1).map { Int($0) } ?? 0
            journalOffset = f.int64(2).map { Int($0) } ?? 0
        } else if f.equals(0, "cursor") && f.count == 2 {
            let position = f.text(1)
            cursor = position.isEmpty ? nil : position
        } else if f.equals(0, "lastsync") && f.count == 2 {
            lastSync = f.int64(1)
        } else if f.equals(0, "ahead") && f.count == 1 {
            baseAheadOfCursor = true
        } else if f.equals(0, "held") && f.count == 2 {
            guard let entry = try? JournalEntry.decode(f.text(1)), let refId = entry.refId else {
                throw Damaged(path: path, reason: "damaged (bad held entry)")
            }
            held[refId] = entry
        } else if f.equals(0, "pending") && f.count == 2 {
            guard let entry = try? JournalEntry.decode(f.text(1)) else {
                throw Damaged(path: path, reason: "damaged (bad pending entry)")
            }
            pending.append(entry)
        } else {
            throw Damaged(path: path, reason: "damaged (unknown record)")
        }
    }
}
