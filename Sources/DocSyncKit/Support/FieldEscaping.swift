/// Escaping for tab-separated records: paths and ids may hold any character but the
/// records must stay one line with tab-separated fields.
enum FieldEscaping {
    static func escape(_ s: String) -> String {
        guard s.utf8.contains(where: { $0 == 9 || $0 == 10 || $0 == 13 || $0 == 92 }) else { return s }
        var out = ""
        for ch in s.unicodeScalars {
            switch ch {
            case "\\": out += "\\\\"
            case "\t": out += "\\t"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            default: out.unicodeScalars.append(ch)
            }
        }
        return out
    }

    static func unescape<S: StringProtocol>(_ s: S) -> String {
        guard s.utf8.contains(92) else { return String(s) }
        var out = ""
        var escaping = false
        for ch in s.unicodeScalars {
            if escaping {
                switch ch {
                case "t": out += "\t"
                case "n": out += "\n"
                case "r": out += "\r"
                default: out.unicodeScalars.append(ch)
                }
                escaping = false
            } else if ch == "\\" {
                escaping = true
            } else {
                out.unicodeScalars.append(ch)
            }
        }
        return out
    }

    static func split(_ line: Substring) -> [Substring] {
        line.split(separator: "\t", omittingEmptySubsequences: false)
    }
}
