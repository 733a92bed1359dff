// Writes "refId" and "changesetId" into a document without reformatting it.
//
// Every byte outside the inserted or replaced span stays as it was, so a user's file
// only ever changes in the two reserved values. Inserted members copy the layout the
// file already uses (line breaks, indentation, spacing around ':' and ','), taken from
// the bytes around the existing members.

public enum IdentityStamper {
    /// Returns the document bytes with "refId" and "changesetId" set.
    /// - Parameters:
    ///   - scanned: `JSONScanner.scanDocument(bytes)` for these exact bytes.
    ///   - refId: nil keeps the existing value (which should exist; if it does not, the
    ///     key stays absent). Non-nil replaces the existing value or inserts the key as
    ///     the first member.
    ///   - changesetId: likewise; a missing one is inserted right after "refId" if that
    ///     member exists, else first (after a refId inserted in the same call).
    public static func stamp(_ bytes: [UInt8], scanned: ScannedDocument, refId: String?, changesetId: String?)
        -> [UInt8]
    {
        let layout = Layout(bytes: bytes, scanned: scanned)
        let refIndex = scanned.members.firstIndex { $0.key == "refId" }
        let changesetIndex = scanned.members.firstIndex { $0.key == "changesetId" }

        var edits: [Edit] = []
        var insertFirst: [(key: String, value: String)] = []
        if let refId {
            if let i = refIndex {
                edits.append(Edit(range: scanned.members[i].valueRange, bytes: jsonString(refId)))
            } else {
                insertFirst.append(("refId", refId))
            }
        }
        if let changesetId {
            if let i = changesetIndex {
                edits.append(Edit(range: scanned.members[i].valueRange, bytes: jsonString(changesetId)))
            } else if let i = refIndex {
                edits.append(layout.insertion(after: i, key: "changesetId", value: changesetId))
            } else {
                insertFirst.append(("changesetId", changesetId))
            }
        }
        if !insertFirst.isEmpty { edits.append(layout.insertionAtStart(insertFirst)) }

        // Edits never overlap; an insertion right after a replaced value sorts after it.
        edits.sort { ($0.range.lowerBound, $0.range.upperBound) < ($1.range.lowerBound, $1.range.upperBound) }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + edits.reduce(0) { $0 + $1.bytes.count })
        var copied = 0
        for edit in edits {
            out.append(contentsOf: bytes[copied..<edit.range.lowerBound])
            out.append(contentsOf: edit.bytes)
            copied = edit.range.upperBound
        }
        out.append(contentsOf: bytes[copied...])
        return out
    }

    /// The JSON string literal for `value`, quotes included: `"`, `\` and control
    /// characters are escaped, everything else is written as UTF-8.
    static func jsonString(_ value: String) -> [UInt8] {
        var out: [UInt8] = [quote]
        out.reserveCapacity(value.utf8.count + 2)
        for byte in value.utf8 {
            switch byte {
            case quote, backslash: out += [backslash, byte]
            case 0x0A: out += [backslash, UInt8(ascii: "n")]
            case 0x0D: out += [backslash, UInt8(ascii: "r")]
            case 0x09: out += [backslash, UInt8(ascii: "t")]
            case 0x08: out += [backslash, UInt8(ascii: "b")]
            case 0x0C: out += [backslash, UInt8(ascii: "f")]
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += [
                    backslash, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)],
                    hex[Int(byte & 0xF)]
                ]
            default: out.append(byte)
            }
        }
        out.append(quote)
        return out
    }

    private struct Edit {
        var range: Range<Int>
        var bytes: [UInt8]
    }

    /// Reads the existing layout and builds insertions that match it.
    private struct Layout {
        let bytes: [UInt8]
        let scanned: ScannedDocument
        var members: [TopLevelMember] { scanned.members }

        /// New members as the first members of the object.
        func insertionAtStart(_ new: [(key: String, value: String)]) -> Edit {
            guard let first = members.first else { return insertionIntoEmpty(new) }
            let separator = bytes[first.keyRange.upperBound..<first.valueRange.lowerBound]
            let lead = scanned.openBrace + 1..<first.keyRange.lowerBound
            if let lineBreak = lastLineBreak(in: lead) {
                // Members on their own lines: each new one gets the first member's line
                // break and indentation, and a ',' at its end.
                let breakAndIndent = bytes[lineBreak..<first.keyRange.lowerBound]
                var out: [UInt8] = []
                for (key, value) in new {
                    out += breakAndIndent
                    out += member(key, separator, value)
                    out.append(UInt8(ascii: ","))
                }
                return Edit(range: lineBreak..<lineBreak, bytes: out)
            }
            // First member on the '{' line: put the new ones before it, followed by the
            // file's own member separator.
            let gap =
                members.count >= 2
                ? Array(bytes[members[0].valueRange.upperBound..<members[1].keyRange.lowerBound])
                : defaultComma(separator: separator, lead: lead)
            var out: [UInt8] = []
            for (key, value) in new {
                out += member(key, separator, value)
                out += gap
            }
            return Edit(range: first.keyRange.lowerBound..<first.keyRange.lowerBound, bytes: out)
        }

        /// A new member right after member `index`, separated the way neighbours are.
        func insertion(after index: Int, key: String, value: String) -> Edit {
            let anchor = members[index]
            let separator = bytes[anchor.keyRange.upperBound..<anchor.valueRange.lowerBound]
            let gap: [UInt8]
            if index + 1 < members.count {
                gap = Array(bytes[anchor.valueRange.upperBound..<members[index + 1].keyRange.lowerBound])
            } else if index > 0 {
                gap = Array(bytes[members[index - 1].valueRange.upperBound..<anchor.keyRange.lowerBound])
            } else if let lineBreak = lastLineBreak(in: scanned.openBrace + 1..<anchor.keyRange.lowerBound) {
                gap = [UInt8(ascii: ",")] + bytes[lineBreak..<anchor.keyRange.lowerBound]
            } else {
                gap = defaultComma(separator: separator, lead: scanned.openBrace + 1..<anchor.keyRange.lowerBound)
            }
            let end = anchor.valueRange.upperBound
            return Edit(range: end..<end, bytes: gap + member(key, separator[...], value))
        }

        /// `{}` and `{ }` get one line; an object spanning lines gets one member per
        /// line, indented two spaces (a tab if the '}' is tab-indented) past the '}'.
        func insertionIntoEmpty(_ new: [(key: String, value: String)]) -> Edit {
            let open = scanned.openBrace, close = scanned.closeBrace
            let separator = Array(": ".utf8)[...]
            let inner = open + 1..<close
            if let lineBreak = lastLineBreak(in: inner) {
                let breakEnd =
                    bytes[lineBreak] == 0x0D && lineBreak + 1 < close && bytes[lineBreak + 1] == 0x0A
                    ? lineBreak + 2 : lineBreak + 1
                let newline = bytes[lineBreak..<breakEnd]
                let closeIndent = bytes[breakEnd..<close]
                let indent = Array(closeIndent) + (closeIndent.contains(0x09) ? [0x09] : [0x20, 0x20])
                var out: [UInt8] = []
                for (i, (key, value)) in new.enumerated() {
                    out += newline
                    out += indent
                    out += member(key, separator, value)
                    if i < new.count - 1 { out.append(UInt8(ascii: ",")) }
                }
                return Edit(range: lineBreak..<lineBreak, bytes: out)
            }
            var out: [UInt8] = []
            for (i, (key, value)) in new.enumerated() {
                if i > 0 { out += Array(", ".utf8) }
                out += member(key, separator, value)
            }
            // `{ }`: mirror the space before the '}' after the new members.
            out += bytes[inner]
            return Edit(range: close..<close, bytes: out)
        }

        /// With a single member there is no ',' to copy: a minified member (`{"a":1}`)
        /// gets ",", anything else ", ".
        private func defaultComma(separator: ArraySlice<UInt8>, lead: Range<Int>) -> [UInt8] {
            separator.elementsEqual([UInt8(ascii: ":")]) && lead.isEmpty ? [UInt8(ascii: ",")] : Array(", ".utf8)
        }

        private func member(_ key: String, _ separator: ArraySlice<UInt8>, _ value: String) -> [UInt8] {
            jsonString(key) + separator + jsonString(value)
        }

        /// Start of the last line break (LF, CRLF or lone CR) in `range`.
        private func lastLineBreak(in range: Range<Int>) -> Int? {
            guard let i = range.last(where: { bytes[$0] == 0x0A || bytes[$0] == 0x0D }) else { return nil }
            return bytes[i] == 0x0A && i > range.lowerBound && bytes[i - 1] == 0x0D ? i - 1 : i
        }
    }
}

private let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")

/// Content compared without the changesetId's value: two replicas that made the same
/// edit stamp different ids, and that alone must not make a conflict.
public enum ContentIdentity {
    public static func sameApartFromChangesetId(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        if a == b { return true }
        guard let x = try? JSONScanner.scanDocument(a), let y = try? JSONScanner.scanDocument(b) else { return false }
        return blanked(a, x) == blanked(b, y)
    }

    static func blanked(_ bytes: [UInt8], _ scanned: ScannedDocument) -> ArraySlice<UInt8> {
        guard let range = scanned.member(named: "changesetId")?.valueRange else { return bytes[...] }
        return bytes[..<range.lowerBound] + bytes[range.upperBound...]
    }
}
