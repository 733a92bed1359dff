import Foundation

/// `.docsync/state` (docs/FORMATS.md): a sealed file of tab-separated lines saying where
/// the replica stands, which names the base file (`BaseFile`) that holds the base. Why
/// apart: a run that never asks for a base version reads this file only, a few lines, and
/// a save that did not change the base writes this file only.
///
/// A state an older version wrote holds the base as its last lines (`docsync-state 1`):
/// read in place as the base file's would be, and written with a base file by the next save.
extension SyncState {
    static let header = "docsync-state 2"

    public struct Damaged: Error, LocalizedError {
        public var path: String
        public var reason: String
        public var errorDescription: String? {
            "\(path): the sync state is \(reason). docsync will not guess (that could look like every document was deleted). See docs/RECOVERY.md: `docsync reset-base` rebuilds it safely from the tree and the remote"
        }
    }

    public static func load(from path: String) throws -> SyncState {
        let folder = FileSystem.splitLast(path).folder
        var attempt = 0
        while true {
            attempt += 1
            guard let bytes = try FileSystem.readFileIfPresent(path) else {
                throw Damaged(path: path, reason: "missing")
            }
            guard let (end, digest) = SealedFile.bodyAndDigest(bytes) else {
                throw Damaged(path: path, reason: "damaged (checksum mismatch: torn or corrupted)")
            }
            var reader = StateFileReader(path: path, bytes: bytes)
            try reader.read(upTo: end)
            var state = reader.state
            if let name = reader.baseFile {
                try CrashPoint.hit("state.before-base-file")
                guard let file = try BaseFile.open(name, in: folder) else {
                    // A run that saved a newer state between this run's two reads removed
                    // the base file this state names: read the newer one.
                    if attempt < 10, (try? FileSystem.readFileIfPresent(path)) != bytes { continue }
                    throw Damaged(
                        path: FileSystem.join(folder, name.fileName), reason: "missing (the state names it as its base)"
                    )
                }
                state.baseStorage = BaseStorage(file: file, in: folder)
            } else {
                state.baseStorage = BaseStorage(lines: reader.base.lines(of: bytes))
                // Other lines between the base's (an older layout): parsed now, so that a
                // save never copies them along with the base's lines.
                if !reader.base.inOneRun { _ = state.baseStorage.parsed }
            }
            state.savedDigest = digest
            state.readStamp = UnchangedTree.stamp(digest)
            return state
        }
    }

    /// Writes the base file (unless the state names one that holds its base already),
    /// then the state, then removes the base file the state named before. Returns the
    /// state file's checksum (what `savedDigest` names).
    @discardableResult
    public func save(to path: String) throws -> String {
        let folder = FileSystem.splitLast(path).folder
        let baseFile = try baseStorage.save(in: folder)
        let digest = try SealedFile.write(to: path, durable: true) { out in
            writePosition(to: &out)
            for p in pending { try out.line("pending", text: p.encodedLine()) }
            for h in held.values.sorted(by: { UTF8Order.precedes($0.refId ?? "", $1.refId ?? "") }) {
                try out.line("held", text: h.encodedLine())
            }
            if let baseFile {
                out.raw("basefile")
                out.tabRaw(baseFile.digest)
                out.tabNumbers(baseFile.count, baseFile.size)
                out.newline()
            }
            out.raw("end")
            out.tabNumbers(baseFile?.count ?? 0, pending.count)
            out.newline()
        }
        BaseFile.removeOthers(in: folder.isEmpty ? "." : folder, keeping: baseFile)
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
/// base file's name taken, or (a state an older version wrote) the base's lines checked.
private struct StateFileReader {
    let path: String
    let bytes: [UInt8]
    var state = SyncState()
    /// The base file the state names (nil: none, or the base is in the state's lines).
    var baseFile: BaseFile.Name?
    /// The state's own `base` lines (an older version's layout).
    var base = BaseLinesCheck()
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
            guard f.count == 1, f.equals(0, "docsync-state 2") || f.equals(0, "docsync-state 1") else {
                throw damaged("not a state file this version understands")
            }
            sawHeader = true
        } else if sawEnd {
            throw damaged("damaged (a line after the end)")
        } else if f.equals(0, "base") {
            guard baseFile == nil, base.take(f, line: line) else { throw damaged("damaged (unknown record)") }
        } else if f.equals(0, "basefile") {
            // The digest names a file: 64 lower-case hex digits, nothing else.
            guard f.count == 4, baseFile == nil, base.count == 0, ContentHash.isValid(f.raw(1)),
                let count = f.int64(2), let size = f.int64(3), count > 0, size > 0
            else { throw damaged("damaged (unknown record)") }
            baseFile = BaseFile.Name(digest: f.raw(1), count: Int(count), size: Int(size))
        } else if f.equals(0, "end") && f.count == 3 {
            let baseCount = baseFile?.count ?? base.count
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
