// libFuzzer target `journal`: ChecksummedLines.parse and Journal.read/append.
//
// Input: a mode byte, then, by the mode byte modulo 3:
// - 0 ("raw"): the rest is a journal file's bytes, any bytes at all;
// - 1 ("entries"): a description of journal entries that the harness appends with
//   Journal.append, followed by a damage to apply (see `entriesMode`);
// - 2 ("hand-edited"): the rest is text whose lines become payloads with valid
//   checksums, then checked as in raw mode (reaches JournalEntry decoding).
//
// Properties checked:
// - parse never traps; its result is consistent: accepted lines end in '\n', lie in
//   order and re-encode to exactly their bytes; validLength is where the last accepted
//   line ends; torn tail and corrupt line are exclusive and describe what follows
//   validLength; the valid prefix parses to the same lines on its own; a slice that does
//   not start at index 0 gives the same result as the bytes on their own.
// - Journal.read throws nothing but Journal.Damaged, and throws it exactly when
//   parse reports damage before the last line or a checksummed line is no entry; on
//   success it returns one entry per accepted line of a whole batch (a trailing run of
//   entries marked "more" is a half batch and is dropped) and length is where the last
//   whole batch ends; repair truncates to there, after which a re-read is clean and equal.
// - Reading from a line boundary returns exactly the entries after it.
// - Entries appended with Journal.append read back equal (strings with any characters).
//   One append is one batch: a cut at any byte keeps none of it; flipping any byte never
//   yields a changed entry: damage in the last line drops the batch as torn, earlier
//   damage is refused as Damaged.

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

@_cdecl("LLVMFuzzerTestOneInput")
public func journalFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var reader = FuzzReader(fuzzInput(data, size))
    switch reader.byte() % 3 {
    case 0: rawMode(reader.rest())
    case 1: entriesMode(&reader)
    default:
        // Hand-edited lines: each input line gets a valid checksum, so the payload
        // reaches JournalEntry.decode and the sequence bookkeeping.
        // Split the bytes, not the String: Swift's "\r\n" is one Character, so a split on
        // "\n" would leave line breaks inside payloads.
        let lines = reader.rest().split(separator: 0x0A, omittingEmptySubsequences: false)
        rawMode(lines.flatMap { lineBytes(String(decoding: $0, as: UTF8.self)) })
    }
    return 0
}

/// One scratch directory per fuzzing process, on tmpfs when there is one (appends fsync).
/// libFuzzer ends with _Exit, so no exit handler runs: each process instead removes the
/// directories of earlier runs of this harness whose process is gone.
private let scratch: String = {
    let base = FileSystem.isDirectory("/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    let prefix = "docsync-journal-fuzz-"
    for name in (try? FileSystem.listDirectory(base)) ?? [] where name.hasPrefix(prefix) {
        guard let pid = Int32(name.dropFirst(prefix.count)), kill(pid, 0) != 0, errno == ESRCH else { continue }
        let dir = base + "/" + name
        for file in (try? FileSystem.listDirectory(dir)) ?? [] { unlink(dir + "/" + file) }
        rmdir(dir)
    }
    let path = base + "/" + prefix + String(getpid())
    if !FileSystem.isDirectory(path) && mkdir(path, 0o700) != 0 { fatalError("cannot create \(path)") }
    return path
}()

private func resetScratch() -> String {
    for name in (try? FileSystem.listDirectory(scratch)) ?? [] { unlink(scratch + "/" + name) }
    return scratch + "/journal"
}

private func lineBytes(_ payload: String) -> [UInt8] { Array(ChecksummedLines.encode(payload).utf8) }

// MARK: - Raw bytes

private func checkParse(_ bytes: [UInt8]) -> ChecksummedLines.ParseResult {
    let parsed = ChecksummedLines.parse(bytes[...])
    check(
        parsed.validLength >= 0 && parsed.validLength <= bytes.count,
        "validLength \(parsed.validLength) outside 0...\(bytes.count)")
    check(!(parsed.tornTail && parsed.corruptLine != nil), "both torn and corrupt")
    var previous = 0
    for line in parsed.lines {
        check(
            line.endOffset > previous && bytes[line.endOffset - 1] == 0x0A,
            "line end \(line.endOffset) not after \(previous) or not a newline")
        check(
            Array(bytes[previous..<line.endOffset]) == lineBytes(line.payload),
            "accepted line does not re-encode to its bytes: \(show(bytes[previous ..< line.endOffset]))")
        previous = line.endOffset
    }
    check(
        parsed.validLength == previous, "validLength \(parsed.validLength) is not the end of the last line \(previous)")
    let rest = bytes[previous...]
    if parsed.corruptLine == nil && !parsed.tornTail {
        check(rest.isEmpty, "undamaged but \(rest.count) bytes left over")
    }
    if parsed.tornTail {
        check(!rest.isEmpty, "torn tail with nothing after validLength")
        let newlines = rest.filter { $0 == 0x0A }.count
        check(newlines == 0 || (newlines == 1 && rest.last == 0x0A), "torn tail is more than the last line")
    }
    if let corrupt = parsed.corruptLine {
        check(corrupt == parsed.lines.count + 1, "corrupt line \(corrupt) after \(parsed.lines.count) good ones")
        check(rest.dropLast().contains(0x0A), "corrupt line reported for the last line")
    }
    // The valid prefix on its own parses cleanly to the same lines.
    let prefix = ChecksummedLines.parse(bytes[..<previous])
    check(
        prefix.lines.map(\.payload) == parsed.lines.map(\.payload) && !prefix.tornTail && prefix.corruptLine == nil
            && prefix.validLength == previous, "the valid prefix parses differently")
    // Slices that do not start at 0, and a base offset.
    let padded = [UInt8](repeating: 0x0A, count: 7) + bytes
    let shifted = ChecksummedLines.parse(padded[7...], baseOffset: 100)
    check(
        shifted.lines.map(\.payload) == parsed.lines.map(\.payload)
            && shifted.lines.map(\.endOffset) == parsed.lines.map { $0.endOffset + 100 }
            && shifted.validLength == parsed.validLength + 100 && shifted.tornTail == parsed.tornTail
            && shifted.corruptLine == parsed.corruptLine,
        "parsing a slice at offset 7 with base 100 differs")
    return parsed
}

/// Reads the journal at `path`; nil when it was refused as damaged. Any other error fails.
private func readJournal(_ path: String, from offset: Int = 0, repair: Bool) -> (
    entries: [JournalEntry], journal: Journal
)? {
    let journal = Journal(path: path)
    do {
        return (try journal.read(from: offset, repair: repair), journal)
    } catch is Journal.Damaged {
        return nil
    } catch {
        check(false, "Journal.read threw something other than Damaged: \(type(of: error)) \(error)")
        return nil
    }
}

private func rawMode(_ bytes: [UInt8]) {
    let parsed = checkParse(bytes)
    // A checksummed line must also be an entry, with a seq that numbering can go on from.
    let decodable = parsed.lines.allSatisfy { line in
        (try? JournalEntry.decode(line.payload)).map { $0.seq <= Journal.maxSeq } ?? false
    }
    let path = resetScratch()
    do { try FileSystem.writeAtomically(path, bytes, durable: false) } catch {
        check(false, "cannot write scratch file: \(error)")
    }

    let result = readJournal(path, repair: false)
    check(
        (result == nil) == (parsed.corruptLine != nil || !decodable),
        "Journal.read \(result == nil ? "refused" : "accepted") a journal with corruptLine \(parsed.corruptLine.map(String.init) ?? "none"), decodable \(decodable)"
    )
    guard let (entries, journal) = result else { return }
    // Batches are all or nothing: lines after the last entry without "more" are dropped.
    let decoded = parsed.lines.compactMap { try? JournalEntry.decode($0.payload) }
    let complete = (decoded.lastIndex { $0.more != true }).map { $0 + 1 } ?? 0
    let keptLength = complete == 0 ? 0 : parsed.lines[complete - 1].endOffset
    let cut = parsed.tornTail || complete < decoded.count
    check(
        entries.count == complete && entries.allSatisfy { $0.more == nil },
        "\(entries.count) entries for \(complete) in whole batches")
    check(journal.length == keptLength, "length \(journal.length) != end of the last whole batch \(keptLength)")
    check(journal.nextSeq == (entries.map(\.seq).max().map { max($0, 0) } ?? 0) + 1, "nextSeq \(journal.nextSeq)")
    check(journal.warnings.isEmpty != cut, "warnings \(journal.warnings) with a cut tail \(cut)")
    check((try? FileSystem.readFile(path)) == bytes, "read without repair changed the file")

    // Repair cuts the torn tail and any half batch; then all is clean.
    guard let (repaired, _) = readJournal(path, repair: true) else {
        return check(false, "repair read refused what a plain read accepted")
    }
    check(repaired == entries, "repair read returned other entries")
    check(
        (try? FileSystem.readFile(path)) == Array(bytes[..<keptLength]),
        "repair did not truncate to the last whole batch")
    guard let (again, clean) = readJournal(path, repair: false) else {
        return check(false, "re-read after repair refused")
    }
    check(again == entries && clean.warnings.isEmpty, "re-read after repair differs or warns")

    // From each line boundary: exactly the entries after it.
    for (i, line) in parsed.lines.enumerated() where i % 7 == 0 && i < complete {
        guard let (tail, _) = readJournal(path, from: line.endOffset, repair: false) else {
            return check(false, "read from a line boundary refused")
        }
        check(
            tail == Array(entries[(i + 1)...]),
            "read from offset \(line.endOffset) returned \(tail.count) entries, expected \(entries.count - i - 1)")
    }
}

// MARK: - Entries appended by the engine

private let kinds: [JournalEntry.Kind] = [
    .create, .update, .rename, .delete, .done, .apply, .seen, .held, .conflict, .cursor, .resolve
]

/// Entry description: kind byte, flags byte (which optional fields follow), then one
/// length-prefixed string per string field present and a count + bytes for `seqs`.
/// Up to 8 entries; the last three bytes of the input, if any remain, pick the damage.
private func entriesMode(_ reader: inout FuzzReader) {
    var entries: [JournalEntry] = []
    while !reader.isAtEnd && reader.bytes.count - reader.pos > 3 && entries.count < 8 {
        let kind = kinds[Int(reader.byte()) % kinds.count]
        let flags = reader.byte()
        func text(_ bit: UInt8) -> String? { flags & bit != 0 ? String(decoding: reader.chunk(), as: UTF8.self) : nil }
        // The fields as a flat line, decoded the way a journal line is: combinations that
        // do not fit the kind are refused there, so only entries the engine can make are
        // appended.
        var fields: [String: Any] = ["seq": 0, "time": 1, "kind": kind.rawValue]
        for (bit, key) in [
            (UInt8(1), "refId"), (2, "changesetId"), (4, "hash"), (8, "path"), (16, "fromPath"), (32, "reason"),
            (64, "cursor")
        ] {
            if let value = text(bit) { fields[key] = value }
        }
        if flags & 128 != 0 {
            fields["deleted"] = reader.byte() & 1 == 1
            fields["seqs"] = reader.chunk().map { Int($0) - 100 }
        }
        guard let data = try? JSONSerialization.data(withJSONObject: fields),
            let entry = try? JournalEntry.decode(String(decoding: data, as: UTF8.self))
        else { continue }
        entries.append(entry)
    }
    let damage = reader.byte(), where1 = Int(reader.byte()), where2 = Int(reader.byte())

    let path = resetScratch()
    let journal = Journal(path: path)
    let written: [JournalEntry]
    do { written = try journal.append(entries) } catch { return check(false, "append failed: \(error)") }
    check(written.map(\.seq) == entries.indices.map { $0 + 1 }, "append numbered \(written.map(\.seq))")
    guard let bytes = try? FileSystem.readFile(path) else {
        return check(entries.isEmpty, "no journal file after append")
    }
    let parsed = checkParse(bytes)
    check(
        parsed.lines.count == entries.count && !parsed.tornTail && parsed.corruptLine == nil,
        "appended journal does not parse cleanly")
    guard let (read, reader2) = readJournal(path, repair: false) else {
        return check(false, "appended journal refused")
    }
    check(read == written, "entries read back differ from those appended: \(read) vs \(written)")
    check(reader2.nextSeq == entries.count + 1 && reader2.length == bytes.count, "nextSeq/length after reading back")
    guard !bytes.isEmpty else { return }

    let ends = parsed.lines.map(\.endOffset)
    let position = (where1 << 8 | where2) % bytes.count
    var damaged = bytes
    switch damage % 3 {
    case 0:  // cut (a crash mid-append)
        damaged = Array(bytes[..<position])
        try? FileSystem.writeAtomically(path, damaged, durable: false)
        // One append is one batch: any cut inside it drops all of it.
        guard let (kept, after) = readJournal(path, repair: true) else {
            return check(false, "a cut journal was refused")
        }
        check(kept.isEmpty, "cut at \(position): kept \(kept.count) entries of a half batch")
        check(after.warnings.isEmpty == (position == 0), "cut at \(position): warnings \(after.warnings)")
        check((try? FileSystem.readFile(path))?.count == 0, "cut at \(position): not repaired to before the batch")
    case 1:  // flip a byte (corruption)
        damaged[position] ^= UInt8(1 + (where1 % 255))
        try? FileSystem.writeAtomically(path, damaged, durable: false)
        let lineIndex = ends.firstIndex { $0 > position }!
        let isLastLine = lineIndex == ends.count - 1
        let result = readJournal(path, repair: false)
        let splitsLine = damaged[position] == 0x0A
        let joinsLastLine = bytes[position] == 0x0A && lineIndex == ends.count - 2
        if splitsLine {
            // A new line break makes a complete line that fails its checksum, with more after it.
            check(result == nil, "a line split by a new line break was accepted: \(show(damaged))")
        } else if isLastLine || joinsLastLine {
            // Only the (possibly joined) last line is damaged: dropped as torn.
            guard let (kept, _) = result else {
                return check(false, "damage in the last line refused instead of dropped: \(show(damaged))")
            }
            check(kept.isEmpty, "damage in the last line of a batch: kept \(kept.count) entries of it")
        } else {
            check(result == nil, "damage in line \(lineIndex + 1) of \(ends.count) was not refused: \(show(damaged))")
        }
    default:  // garbage appended after a good journal
        damaged += [UInt8(where1), UInt8(where2)]
        try? FileSystem.writeAtomically(path, damaged, durable: false)
        let result = readJournal(path, repair: true)
        if where1 == 0x0A {
            // "\n…": an empty complete line that fails its checksum and is not the last.
            check(result == nil, "a bad line before the last was accepted")
        } else {
            // No line break, or one at the very end: a torn (or bad) last line, dropped.
            guard let (kept, after) = result else { return check(false, "trailing garbage was refused") }
            check(
                kept == written && after.warnings.count == 1,
                "trailing garbage: kept \(kept.count), warnings \(after.warnings)")
            check((try? FileSystem.readFile(path)) == bytes, "trailing garbage not cut off")
        }
    }
}
