// Scanner properties, shared by the scanner, stamper and jsonvalue targets (see ScannerFuzz.swift).

func checkPositioned(_ error: JSONSyntaxError, _ bytes: [UInt8], _ what: String) {
    check(
        error.offset >= 0 && error.offset <= bytes.count,
        "\(what): offset \(error.offset) outside 0...\(bytes.count) for \(show(bytes))")
    let (line, column) = JSONScanner.location(of: error.offset, in: bytes)
    check(
        error.line == line && error.column == column,
        "\(what): line/column \(error.line):\(error.column) but location(of:) says \(line):\(column)")
    check(error.line >= 1 && error.column >= 1, "\(what): non-positive line/column")
    check(!error.reason.isEmpty, "\(what): empty reason")
    if error.reason.contains("NUL") {
        check(
            error.offset < bytes.count && bytes[error.offset] == 0, "\(what): NUL blamed where there is none: \(error)")
    }
    if error.reason.contains("end of file") {
        check(error.offset == bytes.count, "\(what): end of file blamed at \(error.offset) of \(bytes.count)")
    }
    check(
        error.description == "line \(error.line), column \(error.column): \(error.reason)",
        "\(what): description format")
}

func isJSONWhitespace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }

func checkScanner(_ bytes: [UInt8]) {
    var validateError: JSONSyntaxError?
    do { try JSONScanner.validate(bytes) } catch { validateError = error }
    if let validateError { checkPositioned(validateError, bytes, "validate") }

    if let reference = ReferenceJSON.verdict(bytes) {
        check(
            (validateError == nil) == (reference == .valid),
            "validate says \(validateError.map { "invalid (\($0))" } ?? "valid"), reference says \(reference) for \(show(bytes))"
        )
    }

    let scanned: ScannedDocument
    do {
        scanned = try JSONScanner.scanDocument(bytes)
    } catch {
        checkPositioned(error, bytes, "scanDocument")
        if let validateError, error != validateError {
            // scanDocument may stop earlier, at a value that cannot be a document.
            check(
                (error.reason.contains("not an object") || error.reason.contains("duplicate member name"))
                    && error.offset <= validateError.offset,
                "scanDocument error \(error) differs from validate error \(validateError) in \(show(bytes))")
        } else if validateError == nil {
            check(
                error.reason.contains("not an object") || error.reason.contains("duplicate member name"),
                "scanDocument rejected valid JSON for an unexpected reason: \(error) in \(show(bytes))")
        }
        return
    }
    check(validateError == nil, "scanDocument accepted what validate rejects: \(show(bytes))")
    checkMembers(bytes, scanned)
}

func checkMembers(_ bytes: [UInt8], _ scanned: ScannedDocument) {
    let start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
    check(
        scanned.openBrace >= start && scanned.openBrace < bytes.count && bytes[scanned.openBrace] == UInt8(ascii: "{"),
        "openBrace \(scanned.openBrace) is not a '{'")
    check(bytes[start..<scanned.openBrace].allSatisfy(isJSONWhitespace), "non-whitespace before '{'")
    check(
        scanned.closeBrace > scanned.openBrace && scanned.closeBrace < bytes.count
            && bytes[scanned.closeBrace] == UInt8(ascii: "}"),
        "closeBrace \(scanned.closeBrace) is not a '}'")
    check(bytes[(scanned.closeBrace + 1)...].allSatisfy(isJSONWhitespace), "non-whitespace after '}'")

    var previousEnd = scanned.openBrace + 1
    var namesSeen: [[UInt8]: Int] = [:]
    for (index, member) in scanned.members.enumerated() {
        let gap = bytes[previousEnd..<member.keyRange.lowerBound]
        let expectedPunctuation = index == 0 ? 0 : 1
        check(
            gap.filter { !isJSONWhitespace($0) } == (index == 0 ? [] : [UInt8(ascii: ",")]),
            "bytes before member \(index) are not whitespace\(expectedPunctuation == 1 ? " and one ','" : ""): \(show(gap))"
        )
        let colon = bytes[member.keyRange.upperBound..<member.valueRange.lowerBound]
        check(
            colon.filter { !isJSONWhitespace($0) } == [UInt8(ascii: ":")],
            "key and value of member \(index) not separated by ':' only: \(show(colon))")
        check(
            member.keyRange.count >= 2 && bytes[member.keyRange.lowerBound] == 0x22
                && bytes[member.keyRange.upperBound - 1] == 0x22,
            "key range of member \(index) is not a string token")
        let keyToken = Array(bytes[member.keyRange])
        do { try JSONScanner.validate(keyToken) } catch {
            check(false, "key token \(show(keyToken)) does not validate: \(error)")
        }
        check(
            sameBytes(member.key, ReferenceJSON.decodeStringToken(keyToken[...])),
            "decoded key \(member.key.debugDescription) differs from reference \(ReferenceJSON.decodeStringToken(keyToken[...]).debugDescription)"
        )

        let valueToken = Array(bytes[member.valueRange])
        do { try JSONScanner.validate(valueToken) } catch {
            check(false, "value token \(show(valueToken)) does not validate: \(error)")
        }
        let first = valueToken.first ?? 0
        let expectedKind: JSONValueKind =
            switch first {
            case UInt8(ascii: "{"): .object
            case UInt8(ascii: "["): .array
            case 0x22: .string
            case UInt8(ascii: "t"), UInt8(ascii: "f"): .bool
            case UInt8(ascii: "n"): .null
            default: .number
            }
        check(member.kind == expectedKind, "member \(index) kind \(member.kind), token starts with \(first)")
        if member.kind == .string {
            check(
                sameBytes(member.stringValue, ReferenceJSON.decodeStringToken(valueToken[...])),
                "decoded string value differs from reference for \(show(valueToken))")
        } else {
            check(member.stringValue == nil, "non-string member has a stringValue")
        }
        // No name twice (I-JSON), compared as bytes: canonically equivalent names differ.
        let nameBytes = Array(member.key.utf8)
        check(namesSeen[nameBytes] == nil, "member name \(member.key.debugDescription) accepted twice")
        namesSeen[nameBytes] = index
        previousEnd = member.valueRange.upperBound
    }
    let tail = bytes[previousEnd..<scanned.closeBrace]
    check(tail.allSatisfy(isJSONWhitespace), "bytes after the last member are not whitespace: \(show(tail))")
    if let last = scanned.members.last {
        check(
            scanned.member(named: last.key)?.valueRange == last.valueRange,
            "member(named:) does not return the last occurrence")
    }
}
