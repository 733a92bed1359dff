import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The name of a file docsync is writing, before its rename into place:
/// `.docsync-tmp-<pid>@<machine>-<n>-<name>`. The machine is in it because a folder
/// remote on a shared mount is written by processes of several machines at once: a pid
/// says whether the writer is alive only on the machine that wrote it (why: a push on one
/// machine removed the pack another machine's live push was writing, its pid unknown
/// here).
public struct TemporaryName: Equatable, Sendable {
    public static let prefix = ".docsync-tmp-"

    public var pid: Int32
    /// 8 hex digits naming the writer's machine; nil in names written before it was added.
    public var machine: String?

    /// This machine: the first 8 hex digits of `/etc/machine-id` (systemd's stable id),
    /// else of a hash of the host name.
    public static let thisMachine: String = {
        if let id = try? FileSystem.readFile("/etc/machine-id"), id.count >= 8,
            id.prefix(8).allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
        {
            return String(decoding: id.prefix(8), as: UTF8.self)
        }
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, host.count - 1)
        let hash = ContentHash.of(Array(String(cString: host).utf8))
        return String(hash.suffix(8))
    }()

    /// The name for this process's `n`-th temporary file for `base`.
    static func make(_ n: UInt64, for base: some StringProtocol) -> String {
        "\(prefix)\(processID)@\(thisMachine)-\(n)-" + base.prefix(40)
    }

    /// The writer named in `name`, nil if it is not a temporary file's name.
    public init?(_ name: some StringProtocol) {
        guard name.hasPrefix(Self.prefix) else { return nil }
        let rest = name.dropFirst(Self.prefix.count)
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        guard let pid = Int32(digits), pid > 0 else { return nil }
        self.pid = pid
        let after = rest.dropFirst(digits.count)
        machine = after.first == "@" ? String(after.dropFirst().prefix { $0 != "-" }) : nil
    }

    /// How long a temporary file of another machine must lie unchanged to count as left
    /// behind: longer than two machines' clocks plausibly differ (a day), since its age is
    /// read from the mtime the writer's clock set.
    public static let foreignStaleSeconds: Double = 2 * 86_400

    /// Whether the file is a leftover: its writer, on this machine, is gone; or it is
    /// older than `staleSeconds` (a pid used again), `foreignStaleSeconds` when another
    /// machine wrote it. A name without a machine counts as this machine's.
    public func isStale(modifiedNanos mtimeNanos: Int64?, staleSeconds: Double = 3600) -> Bool {
        let foreign = machine.map { $0 != Self.thisMachine } ?? false
        if let mtimeNanos {
            let age = Double(FileSystem.currentTimeNanos - mtimeNanos) / 1e9
            if age > (foreign ? Self.foreignStaleSeconds : staleSeconds) { return true }
        }
        guard !foreign, pid != processID else { return false }
        return kill(pid, 0) != 0 && errno == ESRCH
    }
}
