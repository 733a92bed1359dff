import ArgumentParser
import Foundation

/// A point in time given on the command line: an RFC 3339 date-time
/// (`2026-11-23T20:44:33Z`, `2026-11-23T21:44:33+01:00`, fractions allowed) or a full date
/// (`2026-11-23`, meaning its midnight in UTC).
struct RFC3339Date: ExpressibleByArgument {
    var millis: Int64

    init?(argument: String) {
        let pattern =
            #/(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2}))?/#
        guard let m = argument.wholeMatch(of: pattern) else { return nil }
        var parts = DateComponents()
        parts.calendar = Calendar(identifier: .gregorian)
        parts.timeZone = TimeZone(identifier: "UTC")
        (parts.year, parts.month, parts.day) = (Int(m.1), Int(m.2), Int(m.3))
        var offset = 0
        if let hour = m.4, let minute = m.5, let second = m.6, let zone = m.8 {
            (parts.hour, parts.minute, parts.second) = (Int(hour), Int(minute), Int(second))
            if zone.count == 6, let h = Int(zone.dropFirst().prefix(2)), let mm = Int(zone.suffix(2)) {
                offset = (h * 3600 + mm * 60) * (zone.hasPrefix("-") ? -1 : 1)
            }
        } else {
            (parts.hour, parts.minute, parts.second) = (0, 0, 0)
        }
        guard parts.isValidDate, let date = parts.date else { return nil }
        let fraction = m.7.flatMap { Double("0" + $0) } ?? 0
        millis = Int64(((date.timeIntervalSince1970 - Double(offset)) + fraction) * 1000)
    }

    static var defaultValueDescription: String { "" }
}
