// The `format` keyword, asserted (not only annotated) for the formats listed here:
// a string that does not match fails validation, in both drafts. Unknown formats, and
// values that are not strings, always pass.
//
// - date-time, date, time: RFC 3339 (`full-date`, `full-time` with its offset, both
//   required); calendar-checked (Feb 29 only in leap years); a leap second only at 23:59:60 UTC.
// - email: a dot-atom local part (or a quoted string) "@" a host name or an [IP literal].
// - hostname: RFC 1123 labels of 1-63 letters, digits and inner hyphens, 253 chars at most.
// - ipv4 (dotted quad, no leading zeros), ipv6 (RFC 4291 text forms).
// - uri: an absolute URI (RFC 3986: a scheme, then only URI characters and valid % escapes).
// - uri-reference: the same without the scheme requirement.
// - uuid: 8-4-4-4-12 hex digits.
// - regex: compiles as a pattern.

enum Format {
    static let asserted: Set<String> = [
        "date-time", "date", "time", "email", "hostname", "ipv4", "ipv6", "uri", "uri-reference", "uuid", "regex"
    ]

    /// False when `text` is not a valid `format`; true for formats not asserted.
    static func check(_ format: String, _ text: String) -> Bool {
        switch format {
        case "date-time": isDateTime(text)
        case "date": isDate(Array(text.utf8)[...])
        case "time": isTime(Array(text.utf8)[...])
        case "email": isEmail(text)
        case "hostname": isHostname(text)
        case "ipv4": isIPv4(text)
        case "ipv6": isIPv6(text)
        case "uri": isURI(text, requireScheme: true)
        case "uri-reference": isURI(text, requireScheme: false)
        case "uuid": isUUID(text)
        case "regex": RegexPattern(text) != nil
        default: true
        }
    }

    // MARK: Dates and times

    private static func isDateTime(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count > 11, bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t") else { return false }
        return isDate(bytes[..<10]) && isTime(bytes[11...])
    }

    private static func number(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard !bytes.isEmpty, bytes.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return bytes.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    private static func isDate(_ b: ArraySlice<UInt8>) -> Bool {
        let b = Array(b)
        guard b.count == 10, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
            let year = number(b[0..<4]), let month = number(b[5..<7]), let day = number(b[8..<10]),
            (1...12).contains(month), day >= 1
        else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return day <= days[month - 1]
    }

    private static func isTime(_ b: ArraySlice<UInt8>) -> Bool {
        let b = Array(b)
        guard b.count >= 9, b[2] == UInt8(ascii: ":"), b[5] == UInt8(ascii: ":"),
            let hour = number(b[0..<2]), let minute = number(b[3..<5]), let second = number(b[6..<8]),
            hour <= 23, minute <= 59, second <= 60
        else { return false }
        var i = 8
        if b[i] == UInt8(ascii: ".") {
            i += 1
            let start = i
            while i < b.count, number(b[i...i]) != nil { i += 1 }
            guard i > start else { return false }
        }
        guard i < b.count else { return false }
        var offsetMinutes = 0
        switch b[i] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard i + 1 == b.count else { return false }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard b.count - i == 6, b[i + 3] == UInt8(ascii: ":"),
                let h = number(b[i + 1...i + 2]), let m = number(b[i + 4...i + 5]), h <= 23, m <= 59
            else { return false }
            offsetMinutes = (h * 60 + m) * (b[i] == UInt8(ascii: "+") ? 1 : -1)
        default:
            return false
        }
        if second == 60 {
            // A leap second is the last second of the day in UTC.
            let utc = ((hour * 60 + minute - offsetMinutes) % 1440 + 1440) % 1440
            return utc == 23 * 60 + 59
        }
        return true
    }

    // MARK: Internet names

    private static func isEmail(_ text: String) -> Bool {
        guard let at = text.lastIndex(of: "@") else { return false }
        let local = text[..<at], domain = text[text.index(after: at)...]
        guard !local.isEmpty, !domain.isEmpty else { return false }
        if local.hasPrefix("\""), local.hasSuffix("\""), local.count >= 2 {
            // quoted string: anything printable except unescaped quote
        } else {
            let atext = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-/=?^_`{|}~")
            let parts = local.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { atext.contains($0) } }) else { return false }
        }
        if domain.hasPrefix("["), domain.hasSuffix("]") {
            let literal = domain.dropFirst().dropLast()
            if literal.hasPrefix("IPv6:") { return isIPv6(String(literal.dropFirst(5))) }
            return isIPv4(String(literal))
        }
        return isHostname(String(domain))
    }

    private static func isHostname(_ text: String) -> Bool {
        let name = Substring(text)
        guard !name.isEmpty, name.utf8.count <= 253 else { return false }
        return name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            guard !label.isEmpty, label.utf8.count <= 63, !label.hasPrefix("-"), !label.hasSuffix("-") else {
                return false
            }
            return label.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-")
            }
        }
    }

    private static func isIPv4(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in
                guard let value = number(Array(part.utf8)[...]), part.count <= 3 else { return false }
                return value <= 255 && (part == "0" || !part.hasPrefix("0"))
            }
    }

    private static func isIPv6(_ text: String) -> Bool {
        guard !text.isEmpty, text.unicodeScalars.allSatisfy({ $0.isASCII }) else { return false }
        var groups = Substring(text)
        var maxGroups = 8
        // An embedded IPv4 address takes the place of the last two groups.
        if let lastColon = groups.lastIndex(of: ":"), groups[groups.index(after: lastColon)...].contains(".") {
            guard isIPv4(String(groups[groups.index(after: lastColon)...])) else { return false }
            groups = groups[...lastColon]
            if !groups.hasSuffix("::") { groups = groups.dropLast() }
            maxGroups = 6
        }
        let halves = groups.components("::")
        guard halves.count <= 2 else { return false }
        func hexGroups(_ part: Substring) -> Int? {
            if part.isEmpty { return 0 }
            let items = part.split(separator: ":", omittingEmptySubsequences: false)
            for item in items {
                guard (1...4).contains(item.count), item.allSatisfy(\.isHexDigit) else { return nil }
            }
            return items.count
        }
        if halves.count == 1 {
            return hexGroups(halves[0]) == maxGroups
        }
        guard let left = hexGroups(halves[0]), let right = hexGroups(halves[1]) else { return false }
        return left + right < maxGroups
    }

    // MARK: URIs and UUIDs

    private static func isURI(_ text: String, requireScheme: Bool) -> Bool {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~:/?#[]@!$&'()*+,;=%")
        let bytes = Array(text.unicodeScalars)
        var i = 0
        while i < bytes.count {
            let c = bytes[i]
            guard c.isASCII, allowed.contains(Character(c)) else { return false }
            if c == "%" {
                guard i + 2 < bytes.count, Character(bytes[i + 1]).isHexDigit, Character(bytes[i + 2]).isHexDigit else {
                    return false
                }
                i += 2
            }
            i += 1
        }
        let beforeFragment = text.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
        var rest = beforeFragment
        if let colon = beforeFragment.firstIndex(of: ":"),
            let first = beforeFragment.first, first.isLetter,
            beforeFragment[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) })
        {
            rest = beforeFragment[beforeFragment.index(after: colon)...]
        } else if requireScheme {
            return false
        } else if let firstSegment = rest.split(separator: "/", omittingEmptySubsequences: false).first,
            !rest.hasPrefix("//"), firstSegment.prefix(while: { $0 != "?" }).contains(":")
        {
            // A relative path's first segment may not hold a colon (it would read as a scheme).
            return false
        }
        if rest.hasPrefix("//") {
            let authority = rest.dropFirst(2).prefix { $0 != "/" && $0 != "?" }
            guard isAuthority(authority) else { return false }
            rest = rest.dropFirst(2 + authority.count)
        }
        return !rest.contains("[") && !rest.contains("]")
    }

    /// `[userinfo@]host[:port]` with an IP literal in brackets, a numeric port, one "@" at most.
    private static func isAuthority(_ authority: Substring) -> Bool {
        var host = authority
        if let at = authority.firstIndex(of: "@") {
            host = authority[authority.index(after: at)...]
            let userinfo = authority[..<at]
            if host.contains("@") || userinfo.contains("[") || userinfo.contains("]") { return false }
        }
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            let literal = host[host.index(after: host.startIndex)..<close]
            guard literal.hasPrefix("v") || isIPv6(String(literal)) else { return false }
            host = host[host.index(after: close)...]
            guard host.isEmpty || host.hasPrefix(":") else { return false }
        } else if host.contains("[") || host.contains("]") {
            return false
        }
        if let colon = host.lastIndex(of: ":") {
            return host[host.index(after: colon)...].allSatisfy { $0.isASCII && $0.isNumber }
        }
        return true
    }

    private static func isUUID(_ text: String) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12]
            && groups.allSatisfy { $0.allSatisfy { $0.isASCII && $0.isHexDigit } }
    }
}

extension Substring {
    /// Splits at every occurrence of a separator string.
    fileprivate func components(_ separator: String) -> [Substring] {
        var result: [Substring] = []
        var rest = self
        while let range = rest.firstRange(of: separator) {
            result.append(rest[..<range.lowerBound])
            rest = rest[range.upperBound...]
        }
        result.append(rest)
        return result
    }
}
