import DocSyncJSON
import Foundation

/// Per-tree settings, `.docsync/config`, read and written git-style by `docsync config`.
/// Every key is declared here with its meaning and default; the man page lists the same.
/// How a document changed differently on both sides is settled (see ContentPolicy).
public enum MergePolicy: String, Codable, Sendable, CaseIterable {
    case merge, lww, local, remote, manual
}

public struct Config: Sendable {
    public struct Key: Sendable {
        public var name: String
        public var help: String
        public var defaultValue: String?
        public var validate: @Sendable (String) -> String?  // problem, or nil when fine
        public var readOnly = false
    }

    public static let keys: [Key] = [
        Key(
            name: "core.replicaId", help: "this tree's replica id (set by init/clone; read-only)", defaultValue: nil,
            validate: { ReplicaID.isValid($0) ? nil : "not a replica id" }, readOnly: true),
        Key(
            name: "core.replicaName", help: "a readable name for this replica in remote records and logs",
            defaultValue: nil,
            validate: { $0.isEmpty || $0.contains("\n") ? "must be one non-empty line" : nil }),
        Key(
            name: "remote.url",
            help:
                "where the remote is: a folder, or a git URL (bare repository path, file://, git://, ssh://, user@host:path, https://)",
            defaultValue: nil,
            validate: { $0.isEmpty ? "must not be empty" : nil }),
        Key(
            name: "remote.kind", help: "remote kind, dir or git (picked from the URL when unset)", defaultValue: nil,
            validate: { ["dir", "git"].contains($0) ? nil : "must be 'dir' or 'git'" }),
        Key(
            name: "remote.branch", help: "git remotes: the branch that holds the documents", defaultValue: "main",
            validate: { $0.isEmpty || $0.contains(" ") || $0.contains("..") ? "not a valid branch name" : nil }),
        Key(
            name: "remote.sshKey", help: "git over ssh: private key file (ed25519) used when ssh-agent has none",
            defaultValue: nil,
            validate: { $0.isEmpty ? "must not be empty" : nil }),
        Key(
            name: "remote.knownHosts",
            help: "git over ssh: known_hosts file to check host keys against (default ~/.ssh/known_hosts)",
            defaultValue: nil,
            validate: { $0.isEmpty ? "must not be empty" : nil }),
        Key(
            name: "remote.caFile", help: "git over https: extra CA certificates (PEM) to trust", defaultValue: nil,
            validate: { $0.isEmpty ? "must not be empty" : nil }),
        Key(
            name: "remote.lockStaleSeconds",
            help: "age after which another machine's remote lock is considered abandoned", defaultValue: "600",
            validate: { (Double($0) ?? -1) > 0 ? nil : "must be a positive number of seconds" }),
        Key(
            name: "remote.lockWaitSeconds",
            help:
                "folder remotes: how long one push attempt waits for another machine's remote lock (a push makes 5 attempts before exiting 75)",
            defaultValue: "10",
            validate: { (Double($0) ?? -1) >= 0 ? nil : "must be a number of seconds" }),
        Key(
            name: "remote.maxDocumentBytes",
            help:
                "largest remote document a pull reads, in bytes (64 MiB): a larger one is named and not pulled (exit 1), its size checked before it is read; the rest of the pull goes on, it is named again on every run until it fits, and a push over it is refused",
            defaultValue: String(RemoteDocumentCeiling.defaultBytes),
            validate: {
                (Int64($0).map { $0 > 0 } ?? false) ? nil : "must be a positive whole number of bytes"
            }),
        Key(
            name: "push.maxDeleteShare",
            help: "largest share (0-1) of the remote's documents one push may delete without --force",
            defaultValue: "0.5",
            validate: { (Double($0).map { $0 >= 0 && $0 <= 1 } ?? false) ? nil : "must be a number from 0 to 1" }),
        Key(
            name: "gc.tombstoneMaxAgeDays",
            help:
                "docsync gc purges a remote tombstone once every replica known to the remote has seen it, or once it is older than this many days (a replica offline longer still ends up right: its unchanged copy is deleted, its edit is kept and pushed back)",
            defaultValue: "90",
            validate: {
                (Double($0).map { $0 > 0 && $0.isFinite } ?? false) ? nil : "must be a positive number of days"
            }),
        Key(
            name: "sync.maxOfflineDays",
            help:
                "after this many days without reaching the remote, push/pull/sync exit 1 and say since when, instead of 75 (try again later), so a remote that is gone for good is noticed",
            defaultValue: "7",
            validate: {
                (Double($0).map { $0 > 0 && $0.isFinite } ?? false) ? nil : "must be a positive number of days"
            }),
        Key(
            name: "sync.mode",
            help:
                "both: send this tree's changes and apply the remote's; receive-only: apply the remote's changes and never send this tree's (they stay recorded and are listed by status as not sent; push exits 1, sync and watch only pull); send-only: send this tree's changes and never apply the remote's (they are held aside and listed by status as not applied; a document changed on both sides waits until `docsync override` pushes the local version over the remote's, or the mode is both again and the next sync merges them)",
            defaultValue: "both",
            validate: {
                SyncMode(rawValue: $0) == nil ? "must be both, receive-only or send-only" : nil
            }),
        Key(
            name: "lock.waitSeconds", help: "how long a run waits for another run on the same tree before exiting 75",
            defaultValue: "5",
            validate: { (Double($0) ?? -1) >= 0 ? nil : "must be a number of seconds" }),
        Key(
            name: "watch.debounceMs",
            help:
                "how long docsync watch waits for the tree to stay quiet after an edit before it syncs, in milliseconds (a burst of saves is one sync)",
            defaultValue: "500",
            validate: {
                (Double($0).map { $0 >= 0 && $0 <= 3_600_000 } ?? false)
                    ? nil : "must be a number of milliseconds from 0 to 3600000"
            }),
        Key(
            name: "watch.pullSeconds",
            help:
                "how often docsync watch syncs to bring in the remote's changes when nothing changes here, in seconds",
            defaultValue: "60",
            validate: {
                (Double($0).map { $0 > 0 && $0 <= 86_400 } ?? false)
                    ? nil : "must be a positive number of seconds, at most 86400"
            }),
        Key(
            name: "merge.policy",
            help:
                "how a document changed on both sides is settled: merge (field by field, field collisions to the later changesetId), lww (whole document, later changesetId), local, remote, manual",
            defaultValue: "merge",
            validate: validPolicy),
        Key(
            name: "merge.policyFor.<glob>",
            help:
                "the policy for documents whose path matches <glob> (gitignore-style: * within a folder, ** across folders), e.g. merge.policyFor.contacts/** lww; the last matching key in --list order wins over merge.policy",
            defaultValue: nil,
            validate: validPolicy),
        Key(
            name: "merge.sets",
            help:
                "comma-separated dotted paths of arrays merged as sets (tags): every element either side added, none either side removed, each once; * matches any key or element, e.g. tags,items.*.labels",
            defaultValue: nil,
            validate: {
                $0.split(separator: ",").allSatisfy { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
                    ? nil : "must be comma-separated field paths"
            }),
        Key(
            name: "merge.arrayKey.<path>",
            help:
                "the member that identifies the elements of the array at <path> (a dotted path, * for any key or element), e.g. merge.arrayKey.order.lines sku; without one, the first of id, refId, uuid, key that every element has, unique",
            defaultValue: nil,
            validate: { $0.isEmpty || $0.contains("\n") ? "must be a member name" : nil }),
        Key(
            name: "schema.<glob>",
            help:
                "the JSON Schema (a file; relative paths from the tree's root) that records whose path matches <glob> must satisfy, e.g. schema.contacts/** schemas/contact.json; a record that fails it is reported and never pushed; the last matching key in --list order wins; a record's own \"$schema\" member naming a file wins over every key",
            defaultValue: nil,
            validate: { $0.isEmpty || $0.contains("\n") ? "must be a file path" : nil }),
        Key(
            name: "merge.counters",
            help:
                "comma-separated dotted paths of numeric fields merged by adding both sides' changes, e.g. stats.plays,visits",
            defaultValue: nil,
            validate: {
                $0.split(separator: ",").allSatisfy { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
                    ? nil : "must be comma-separated field paths"
            })
    ]

    static let validPolicy: @Sendable (String) -> String? = {
        MergePolicy(rawValue: $0) == nil
            ? "must be one of " + MergePolicy.allCases.map(\.rawValue).joined(separator: ", ") : nil
    }

    /// The declared key, or for pattern keys (`merge.policyFor.<glob>`) its template.
    public static func key(named name: String) -> Key? {
        if let exact = keys.first(where: { $0.name == name }) { return exact }
        for template in ["merge.policyFor.", "schema.", "merge.arrayKey."]
        where name.hasPrefix(template) && name.count > template.count {
            return keys.first { $0.name == template + "<glob>" || $0.name == template + "<path>" }
        }
        return nil
    }

    /// The merge policy for a document path.
    public func policy(for path: String) -> MergePolicy {
        var result = self["merge.policy"].flatMap(MergePolicy.init(rawValue:)) ?? .merge
        for (name, value) in values.sorted(by: { $0.key < $1.key }) where name.hasPrefix("merge.policyFor.") {
            let glob = String(name.dropFirst("merge.policyFor.".count))
            if Glob.match(Array(glob.utf8), Array(path.utf8)), let policy = MergePolicy(rawValue: value) {
                result = policy
            }
        }
        return result
    }

    /// `schema.<glob>` keys as (glob, schema file) in --list order (the last match wins).
    public var schemaRules: [(glob: String, schema: String)] {
        values.sorted(by: { $0.key < $1.key }).compactMap { name, value in
            name.hasPrefix("schema.") ? (String(name.dropFirst("schema.".count)), value) : nil
        }
    }

    /// `merge.sets` and `merge.arrayKey.<path>`: how arrays changed on both sides merge.
    public var arrayRules: FieldMerge.ArrayRules {
        let sets = Set(
            (self["merge.sets"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
                !$0.isEmpty
            })
        var keys: [String: String] = [:]
        for (name, value) in values where name.hasPrefix("merge.arrayKey.") {
            keys[String(name.dropFirst("merge.arrayKey.".count))] = value
        }
        return FieldMerge.ArrayRules(sets: sets, keys: keys)
    }

    public var counters: Set<String> {
        Set(
            (self["merge.counters"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter
            { !$0.isEmpty })
    }

    public private(set) var values: [String: String]

    public init(values: [String: String] = [:]) { self.values = values }

    public subscript(name: String) -> String? {
        values[name] ?? Self.key(named: name)?.defaultValue
    }

    public func number(_ name: String) -> Double {
        Double(self[name] ?? "") ?? Double(Self.key(named: name)?.defaultValue ?? "0") ?? 0
    }

    public var replicaId: String { values["core.replicaId"] ?? "" }

    public struct Problem: Error, LocalizedError {
        public var message: String
        public var errorDescription: String? { message }
    }

    /// Sets a key after checking it is known and the value is valid.
    public mutating func set(_ name: String, _ value: String, allowReadOnly: Bool = false) throws {
        guard let key = Self.key(named: name) else {
            throw Problem(
                message: "unknown config key '\(name)'; known keys: " + Self.keys.map(\.name).joined(separator: ", "))
        }
        if key.readOnly && !allowReadOnly { throw Problem(message: "config key '\(name)' is read-only") }
        if let problem = key.validate(value) { throw Problem(message: "invalid value for \(name): \(problem)") }
        values[name] = value
    }

    public mutating func unset(_ name: String) throws {
        guard let key = Self.key(named: name) else { throw Problem(message: "unknown config key '\(name)'") }
        if key.name.contains("<"), values[name] == nil { throw Problem(message: "config key '\(name)' is not set") }
        if key.readOnly { throw Problem(message: "config key '\(name)' is read-only") }
        values.removeValue(forKey: name)
    }

    public static func load(from path: String) throws -> Config {
        let recovery = "fix or restore it (see docs/RECOVERY.md#a-damaged-or-missing-config)"
        guard FileSystem.exists(path) else { throw Problem(message: "\(path) is missing; \(recovery)") }
        let bytes = try FileSystem.readFile(path)
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: String] else {
            throw Problem(
                message: "\(path): not a valid docsync config (expected a JSON object of strings); \(recovery)")
        }
        // Why: a config without a valid core.replicaId (hand edit, bad restore) made
        // changesetIds like "…-0000-" or "…-0000-NOT VALID" and pushed them to the remote,
        // where they sort before every real version. Known keys must hold valid values.
        guard let replica = object["core.replicaId"] else {
            throw Problem(message: "\(path): core.replicaId is missing; \(recovery)")
        }
        for (name, value) in object.sorted(by: { $0.key < $1.key }) {
            if let problem = key(named: name)?.validate(value) {
                throw Problem(
                    message:
                        "\(path): invalid value for \(name) ('\(name == "core.replicaId" ? replica : value)'): \(problem); \(recovery)"
                )
            }
        }
        return Config(values: object)
    }

    public func save(to path: String) throws {
        let data = try JSONSerialization.data(withJSONObject: values, options: [.prettyPrinted, .sortedKeys])
        try FileSystem.writeAtomically(path, Array(data) + [10])
    }
}
