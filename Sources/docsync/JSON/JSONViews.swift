import DocSyncKit
import Foundation

// The `--json` shapes of engine values that carry times: the engine keeps milliseconds,
// every JSON output says RFC 3339 in UTC (docs/JSON.md). Each view writes the engine
// value's fields, then replaces its times in the same object.

private struct TimeKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

private func replaceTimes(
    _ encoder: Encoder, _ times: [String: Int64?], nullIfMissing: Bool = false
) throws {
    var container = encoder.container(keyedBy: TimeKey.self)
    for (name, millis) in times {
        if let millis {
            try container.encode(Timestamp.rfc3339(millis), forKey: TimeKey(name))
        } else if nullIfMissing {
            try container.encodeNil(forKey: TimeKey(name))
        }
    }
}

struct ConflictJSON: Encodable {
    var record: ConflictStore.Record
    /// This replica's id: `storedSide` is the stored version's side seen from here
    /// (`side` is the recording replica's), `keptBy` the replica that made the kept version.
    var replicaId: String

    private enum Key: String, CodingKey { case storedSide, keptBy }

    func encode(to encoder: Encoder) throws {
        try record.encode(to: encoder)
        try replaceTimes(encoder, ["time": record.time, "resolved": record.resolution?.time])
        let view = ConflictPointOfView(record, replica: replicaId)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(view.storedSide, forKey: .storedSide)
        try container.encodeIfPresent(view.keptBy, forKey: .keptBy)
    }
}

/// A journal entry as `docsync log --json` shows it: the journal line's fields, its time,
/// and for a local action whether it is still pending.
struct LogEntryJSON: Encodable {
    var item: LogEntry
    /// Names of the replicas the entry mentions (`replica` → `replicaName`).
    var replicaNames: [String: String] = [:]

    private enum Key: String, CodingKey { case pending, replicaName }

    func encode(to encoder: Encoder) throws {
        try item.entry.encode(to: encoder)
        try replaceTimes(encoder, ["time": item.entry.time])
        var container = encoder.container(keyedBy: Key.self)
        if item.entry.isLocalAction { try container.encode(item.pending, forKey: .pending) }
        if case .held(_, _, let replica?) = item.entry.event, let name = replicaNames[replica] {
            try container.encode(name, forKey: .replicaName)
        }
    }
}

struct RemoteVersionJSON: Encodable {
    var version: RemoteVersionInfo
    /// The author's replica name, when `author` is a replica id this tree knows.
    var authorName: String?

    private enum Key: String, CodingKey { case authorName }
    func encode(to encoder: Encoder) throws {
        try version.encode(to: encoder)
        try replaceTimes(encoder, ["time": version.time])
        var container = encoder.container(keyedBy: Key.self)
        try container.encodeIfPresent(authorName, forKey: .authorName)
    }
}

struct HistoryJSON: Encodable {
    var history: DocumentHistory
    var replicaNames: [String: String] = [:]

    private enum Key: String, CodingKey { case refId, path, local, remote, remoteError }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(history.refId, forKey: .refId)
        try container.encode(history.path, forKey: .path)
        try container.encode(history.local.map { LogEntryJSON(item: $0, replicaNames: replicaNames) }, forKey: .local)
        try container.encode(
            history.remote.map { RemoteVersionJSON(version: $0, authorName: replicaNames[$0.author]) }, forKey: .remote)
        try container.encode(history.remoteError, forKey: .remoteError)
    }
}

struct GCJSON: Encodable {

    struct PurgedJSON: Encodable {
        var purged: TombstonePurge.Purged
        func encode(to encoder: Encoder) throws {
            try purged.encode(to: encoder)
            try replaceTimes(encoder, ["time": purged.time])
        }
    }

    var report: GCReport
    private enum Key: String, CodingKey { case remote, bytesFreed, gitCache }

    func encode(to encoder: Encoder) throws {
        try report.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        let remote = report.remote.map { WithFields(base: $0, extra: ["purged": $0.purged.map(PurgedJSON.init)]) }
        try container.encode(remote, forKey: .remote)
        try container.encode(report.gitCache, forKey: .gitCache)
        try container.encode(report.bytesFreed, forKey: .bytesFreed)
    }
}

/// `docsync status --json`: changes carry the note `status` prints next to them.
struct StatusJSON: Encodable {
    var status: StatusReport
    var replicaName: String?

    private enum Key: String, CodingKey { case conflicts, pending, unrecorded, replicaName, lastAttempt, invalidFiles }

    func encode(to encoder: Encoder) throws {
        try status.encode(to: encoder)
        try replaceTimes(encoder, ["lastSync": status.lastSync], nullIfMissing: true)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(status.invalidFiles, forKey: .invalidFiles)
        try container.encode(
            status.conflicts.map { ConflictJSON(record: $0, replicaId: status.replicaId) }, forKey: .conflicts)
        try container.encode(NotedChange.list(status.pending, recorded: true), forKey: .pending)
        try container.encode(NotedChange.list(status.unrecorded, recorded: false), forKey: .unrecorded)
        try container.encode(replicaName ?? status.replicaId, forKey: .replicaName)
        try container.encodeIfPresent(status.lastAttempt.map(AttemptJSON.init), forKey: .lastAttempt)
    }
}

/// A push, pull or sync report (and clone's, restore's …) as `--json` shows it: its fields,
/// each problem as its text, and `invalidFiles`, the files among them that are not valid
/// documents.
struct SyncReportJSON: Encodable {
    var report: SyncReport

    private enum Key: String, CodingKey { case invalidFiles }

    func encode(to encoder: Encoder) throws {
        try report.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(report.invalidFiles, forKey: .invalidFiles)
    }
}

/// The last run that gave up for now (exit 75), as `status` shows it.
struct AttemptJSON: Encodable {
    var attempt: DeferredAttempt

    func encode(to encoder: Encoder) throws {
        try attempt.encode(to: encoder)
        try replaceTimes(encoder, ["time": attempt.time])
    }
}

/// A change with the note that explains it (ChangeNotes).
struct NotedChange: Encodable {
    var change: ChangeSummary
    var note: String?

    static func list(_ changes: [ChangeSummary], recorded: Bool) -> [NotedChange] {
        zip(changes, ChangeNotes.notes(for: changes, recorded: recorded)).map(NotedChange.init)
    }

    private enum Key: String, CodingKey { case note }
    func encode(to encoder: Encoder) throws {
        try change.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encodeIfPresent(note, forKey: .note)
    }
}

/// The remote a tree syncs with, as init and clone report it.
struct RemoteJSON: Encodable {
    var url: String
    var kind: String
    /// Git remotes only.
    var branch: String?
    /// init: whether this run made the remote (false: an existing one was joined).
    var created: Bool?

    init?(_ config: Config, created: Bool?) {
        guard let url = config["remote.url"] else { return nil }
        self.url = url
        kind = config["remote.kind"] ?? RemoteKind.detect(url).rawValue
        branch = kind == "git" ? (config["remote.branch"] ?? "main") : nil
        self.created = created
    }

    /// "folder", "git repository, branch main".
    var description: String { branch.map { "git repository, branch \($0)" } ?? "folder" }

    private enum Key: String, CodingKey { case url, kind, branch, created }
    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(fields: [.url: url, .kind: kind, .branch: branch])
        try container.encodeIfPresent(created, forKey: .created)
    }
}

extension KeyedEncodingContainer {
    /// Writes each field, a nil one as `null` (a synthesized `encode(to:)` leaves it out).
    mutating func encode(fields: KeyValuePairs<Key, (any Encodable)?>) throws {
        for (key, value) in fields {
            if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
        }
    }
}

/// Fields added next to another value's in the same object (e.g. clone's next to its
/// sync report).
struct WithFields<Base: Encodable, Extra: Encodable>: Encodable {
    var base: Base
    var extra: Extra
    func encode(to encoder: Encoder) throws {
        try base.encode(to: encoder)
        try extra.encode(to: encoder)
    }
}
