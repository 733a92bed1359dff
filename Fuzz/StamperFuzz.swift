// libFuzzer target `stamper`: IdentityStamper.stamp on arbitrary documents and ids.
//
// Input: a flags byte (bit 0: set a new refId, bit 1: set a new changesetId), two
// length-prefixed ids (any bytes, decoded as UTF-8 with replacement), then the document.
//
// Properties checked, for every document JSONScanner.scanDocument accepts:
// - The output scans, and its refId / changesetId are the new ids (or the old values
//   when not replaced; absent stays absent).
// - Every byte outside the edited values is kept: the output is the input with the
//   replaced values swapped for the new JSON strings and at most one contiguous insertion.
//   With nothing to insert or replace the output is the input, byte for byte.
// - Every other member keeps its key and value bytes, in order; bytes before '{' and
//   after '}' are kept.
// - Stamping the output again with the same ids changes nothing; restamping only the
//   changesetId leaves the content the same apart from the changesetId.

@_cdecl("LLVMFuzzerTestOneInput")
public func stamperFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var reader = FuzzReader(fuzzInput(data, size))
    let flags = reader.byte()
    let refBytes = reader.chunk(), changesetBytes = reader.chunk()
    let document = reader.rest()
    let refId = flags & 1 != 0 ? String(decoding: refBytes, as: UTF8.self) : nil
    let changesetId = flags & 2 != 0 ? String(decoding: changesetBytes, as: UTF8.self) : nil
    checkStamp(document, refId: refId, changesetId: changesetId, again: flags & 4 == 0)
    return 0
}

/// The reserved and other members of a scanned document.
private func otherMembers(_ bytes: [UInt8], _ scanned: ScannedDocument) -> [[UInt8]] {
    scanned.members.filter { $0.key != "refId" && $0.key != "changesetId" }
        .map { Array(bytes[$0.keyRange]) + [0xFF] + Array(bytes[$0.valueRange]) }
}

func checkStamp(_ input: [UInt8], refId: String?, changesetId: String?, again: Bool) {
    guard let before = try? JSONScanner.scanDocument(input) else { return }
    let output = IdentityStamper.stamp(input, scanned: before, refId: refId, changesetId: changesetId)
    let context =
        "input \(show(input)) refId \(refId.debugDescription) changesetId \(changesetId.debugDescription) output \(show(output))"

    let after: ScannedDocument
    do { after = try JSONScanner.scanDocument(output) } catch {
        check(false, "stamped output does not scan (\(error)): \(context)")
        return
    }
    checkMembers(output, after)  // the scanner target's structural checks

    // The ids.
    let oldRef = before.member(named: "refId"), oldChangeset = before.member(named: "changesetId")
    let newRef = after.member(named: "refId"), newChangeset = after.member(named: "changesetId")
    check(
        sameBytes(newRef?.stringValue, refId ?? oldRef?.stringValue)
            && (newRef == nil) == (refId == nil && oldRef == nil),
        "refId after stamping is \(newRef?.stringValue.debugDescription ?? "absent"): \(context)")
    check(
        sameBytes(newChangeset?.stringValue, changesetId ?? oldChangeset?.stringValue)
            && (newChangeset == nil) == (changesetId == nil && oldChangeset == nil),
        "changesetId after stamping is \(newChangeset?.stringValue.debugDescription ?? "absent"): \(context)")
    if refId == nil, let oldRef, let newRef {
        check(output[newRef.valueRange] == input[oldRef.valueRange], "kept refId changed bytes: \(context)")
    }
    if changesetId == nil, let oldChangeset, let newChangeset {
        check(
            output[newChangeset.valueRange] == input[oldChangeset.valueRange],
            "kept changesetId changed bytes: \(context)")
    }
    check(
        after.members.count == before.members.count + (refId != nil && oldRef == nil ? 1 : 0)
            + (changesetId != nil && oldChangeset == nil ? 1 : 0),
        "member count \(before.members.count) -> \(after.members.count): \(context)")

    // Byte preservation: the input with replaced values swapped (string literals written by
    // JSONValueWriter, an independent encoder), plus one contiguous insertion, is the output.
    var replacements: [(Range<Int>, [UInt8])] = []
    if let refId, let oldRef { replacements.append((oldRef.valueRange, JSONValueWriter.writeCompact(.string(refId)))) }
    if let changesetId, let oldChangeset {
        replacements.append((oldChangeset.valueRange, JSONValueWriter.writeCompact(.string(changesetId))))
    }
    replacements.sort { $0.0.lowerBound < $1.0.lowerBound }
    var expected: [UInt8] = []
    var copied = 0
    for (range, bytes) in replacements {
        expected += input[copied..<range.lowerBound]
        expected += bytes
        copied = range.upperBound
    }
    expected += input[copied...]
    let insertsSomething = (refId != nil && oldRef == nil) || (changesetId != nil && oldChangeset == nil)
    if !insertsSomething {
        check(
            output == expected,
            "output differs from the input with replaced values: \(context) expected \(show(expected))")
    } else {
        check(output.count > expected.count, "nothing inserted: \(context)")
        var prefix = 0
        while prefix < expected.count, output[prefix] == expected[prefix] { prefix += 1 }
        let suffix = expected[prefix...]
        check(
            output.suffix(suffix.count).elementsEqual(suffix),
            "output is not the input plus one insertion (diverges at \(prefix)): \(context) expected \(show(expected))")
        let inserted = output[prefix..<output.count - suffix.count]
        check(
            inserted.allSatisfy { $0 != 0x0A && $0 != 0x0D } || input.contains(where: { $0 == 0x0A || $0 == 0x0D }),
            "line break inserted into a one-line file: \(context)")
    }
    check(otherMembers(output, after) == otherMembers(input, before), "other members changed: \(context)")
    check(output[..<after.openBrace] == input[..<before.openBrace], "bytes before '{' changed: \(context)")
    check(output[(after.closeBrace + 1)...] == input[(before.closeBrace + 1)...], "bytes after '}' changed: \(context)")

    guard again else { return }
    // Idempotent: the same ids again change nothing.
    let twice = IdentityStamper.stamp(output, scanned: after, refId: refId, changesetId: changesetId)
    check(twice == output, "stamping twice with the same ids changed the file: \(context) twice \(show(twice))")
    // A new changesetId alone: the same content apart from the changesetId.
    guard newChangeset != nil else { return }
    let restamped = IdentityStamper.stamp(output, scanned: after, refId: nil, changesetId: "C\(output.count)")
    check(
        ContentIdentity.sameApartFromChangesetId(output, restamped),
        "restamping the changesetId changed other content: \(context)")
}
