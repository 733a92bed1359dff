#if canImport(Glibc)
    import Glibc
#endif

/// Times as people read them: RFC 3339 in UTC (`2026-11-23T18:04:05Z`).
public enum Timestamp {
    public static func rfc3339(_ millis: Int64) -> String {
        var seconds = time_t(millis / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return
            "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    /// "7 days", "1 day", "0.5 days".
    public static func days(_ days: Double) -> String {
        let text = days == days.rounded() ? String(Int(days)) : String(days)
        return text + (days == 1 ? " day" : " days")
    }
}
