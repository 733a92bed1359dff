import DocSyncJSON
import Foundation

/// `docsync blame DOC [POINTER]`: for each field of a record, the version that last set it.
public struct FieldBlame: Codable, Sendable, Equatable {
    /// RFC 6901 pointer of a field (a scalar, or an empty object or array).
    public var pointer: String
    /// Compact JSON of its value now.
    public var value: String
    /// The version that set it: its changesetId, the replica that made it, and when.
    public var changesetId: String
    public var replica: String
    public var time: Int64
}

public struct BlameReport: Codable, Sendable {
    public var path: String
    public var refId: String
    /// How many versions were read, and from where.
    public var versions: Int
    public var fields: [FieldBlame]
    /// Why the remote's history was not read, if it was not (only this replica's journal then).
    public var remoteError: String?
}

extension HistoryService {
    /// One version of a record, as blame reads it.
    private struct BlameVersion {
        var changesetId: String
        var replica: String
        var time: Int64
        var value: JSONValue
    }

    /// Every version of the record (the remote's history and this replica's journal,
    /// oldest first by changesetId), then, per field of the file as it is now, the last
    /// version whose value there differs from the one before. Fields are found by position
    /// (an array element that moved counts as set by the move). Changes nothing.
    public func blame(_ doc: String, pointer: String?, relativeTo cwd: String) throws -> BlameReport {
        let (refId, path) = try resolveDocument(doc, relativeTo: cwd)
        guard let path, let bytes = try SafeTreeIO(root: layout.root).readIfPresent(path) else {
            throw Workspace.Failure.notTracked(doc)
        }
        let current: JSONValue
        do { current = try JSONValueParser.parseDocument(bytes) } catch {
            throw Workspace.Failure.gaveUp(
                "\(path):\(error.line):\(error.column): \(error.reason); blame needs a valid document")
        }
        let (versions, remoteError) = try blameVersions(of: refId, path: path)
        let ordered = versions.values.sorted { changesetOrder($0.changesetId, $1.changesetId) }
        let now = current.removing(.both)
        let nowId = (try? JSONScanner.scanDocument(bytes))?.member(named: "changesetId")?.stringValue
        let unrecorded = BlameVersion(
            changesetId: nowId.flatMap { versions[$0] != nil ? nil : $0 } ?? "(not recorded)",
            replica: config.replicaId, time: FileSystem.currentTimeNanos / 1_000_000, value: now)
        let history = ordered.last.map { $0.value == now } ?? false ? ordered : ordered + [unrecorded]
        var fields: [FieldBlame] = []
        for (place, value) in Self.leaves(now) where pointer.map({ place == $0 || place.hasPrefix($0 + "/") }) ?? true {
            let setter = Self.lastSetter(of: place, in: history)
            fields.append(
                FieldBlame(
                    pointer: place, value: JSONValueWriter.compactString(value),
                    changesetId: setter.changesetId, replica: setter.replica, time: setter.time))
        }
        return BlameReport(path: path, refId: refId, versions: ordered.count, fields: fields, remoteError: remoteError)
    }

    /// Every version of the record this replica's journal kept and the remote's history
    /// holds, by changesetId, and why the remote's history was not read, if it was not.
    private func blameVersions(of refId: String, path: String) throws -> (
        versions: [String: BlameVersion], remoteError: String?
    ) {
        var versions: [String: BlameVersion] = [:]
        func add(_ id: String, _ replica: String, _ time: Int64, _ content: [UInt8]?) {
            guard versions[id] == nil, let content, let value = try? JSONValueParser.parse(content) else { return }
            // When it was saved: the time in its changesetId (when it reached here otherwise).
            let saved = ChangesetID(id).map { Int64($0.wallMillis) } ?? time
            versions[id] = BlameVersion(changesetId: id, replica: replica, time: saved, value: value.removing(.both))
        }
        for entry in try log().map(\.entry) where entry.refId == refId {
            guard let id = entry.changesetId, let hash = entry.hash else { continue }
            add(id, ChangesetID(id)?.replica ?? config.replicaId, entry.time, try? objects.get(hash))
        }
        var remoteError: String?
        do {
            let remote = try makeRemote()
            for v in try remote.history(of: refId, path: path) where !v.deleted && versions[v.changesetId] == nil {
                add(
                    v.changesetId, ChangesetID(v.changesetId)?.replica ?? v.author, v.time,
                    try? remote.content(of: v, refId: refId))
            }
        } catch {
            remoteError = (error as? LocalizedError)?.errorDescription ?? "\(error)"
        }
        return (versions, remoteError)
    }

    /// The last version whose value at `place` differs from the version before it (the
    /// first version when none does).
    private static func lastSetter(of place: String, in history: [BlameVersion]) -> BlameVersion {
        var setter = history.first!
        for (before, after) in zip(history, history.dropFirst())
        where JSONPointer.value(at: place, in: before.value) != JSONPointer.value(at: place, in: after.value) {
            setter = after
        }
        return setter
    }

    /// Every scalar (and empty container) of a value with its pointer, in document order.
    static func leaves(_ value: JSONValue) -> [(String, JSONValue)] {
        var out: [(String, JSONValue)] = []
        var pending: [(String, JSONValue)] = [("", value)]
        while let (at, v) = pending.popLast() {
            switch v {
            case .object(let members) where !members.isEmpty:
                for (key, child) in members.reversed() {
                    pending.append((JSONPointer.appending(key, to: at), child))
                }
            case .array(let items) where !items.isEmpty:
                for (i, child) in items.enumerated().reversed() { pending.append((at + "/\(i)", child)) }
            default:
                out.append((at, v))
            }
        }
        return out
    }
}
