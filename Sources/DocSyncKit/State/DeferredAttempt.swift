import Foundation

/// `.docsync/last-attempt`: the last run that gave up for now (exit 75: the remote
/// unreachable, the tree or the remote locked by another run) and why. A `--quiet` cron
/// run says nothing about it; `docsync status` shows it until a later sync succeeds.
public struct DeferredAttempt: Codable, Sendable, Equatable {
    /// When the run gave up (milliseconds since 1970).
    public var time: Int64
    /// The command that gave up, e.g. `sync`.
    public var command: String
    /// The reason, as the error message says it.
    public var reason: String

    public init(time: Int64, command: String, reason: String) {
        (self.time, self.command, self.reason) = (time, command, reason)
    }

    static func path(_ layout: TreeLayout) -> String { layout.metadata + "/last-attempt" }

    /// Notes the attempt in the tree containing `directory`. Best effort and without the
    /// tree lock (another run may hold it: that is often the reason): the file is
    /// replaced atomically, so a reader sees one whole attempt or the one before.
    public static func record(treeContaining directory: String, command: String, reason: String) {
        guard let layout = TreeLayout.find(from: directory), FileSystem.isDirectory(layout.metadata)
        else { return }
        let attempt = DeferredAttempt(
            time: FileSystem.currentTimeNanos / 1_000_000, command: command, reason: reason)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(attempt) else { return }
        try? FileSystem.writeAtomically(path(layout), Array(data) + [10], durable: false)
    }

    static func load(_ layout: TreeLayout) -> DeferredAttempt? {
        (try? FileSystem.readFile(path(layout))).flatMap {
            try? JSONDecoder().decode(DeferredAttempt.self, from: Data($0))
        }
    }
}
