import DocSyncJSON
import Foundation

/// `docsync merge-driver BASE OURS THEIRS [PATH]`: a git merge driver for JSON records,
/// with the engine and settings of a sync (field merge, arrays, counters, the path's
/// policy). A decision as a value: `merge` reads nothing and writes nothing.
///
/// The later save wins collisions: the side whose `changesetId` is later, else (no ids,
/// or the same id on both sides) ours, git's convention. A merged record that is neither side's gets a new `changesetId`, later
/// than both (one changesetId names one content), when the sides carry them.
public enum MergeDriver {
    public struct Outcome: Sendable {
        /// What OURS becomes.
        public var result: [UInt8]
        /// Fields that collided, as JSON pointers, with each side's value (compact JSON).
        public var collisions: [Collision]
        /// Which side won the collisions ("ours" or "theirs"), and why.
        public var winner: String
        public var why: String
        /// Whether git should leave the file unmerged (collisions, or a policy that does
        /// not merge).
        public var unmerged: Bool
    }

    public struct Collision: Sendable, Equatable {
        public var pointer: String
        public var ours: String?
        public var theirs: String?
        public var kept: String
    }

    public struct Failure: Error, LocalizedError {
        public var message: String
        public var errorDescription: String? { message }
    }

    /// - Parameters:
    ///   - base: the common ancestor's bytes (empty: none; git passes an empty file).
    ///   - replica: the replica id a new changesetId carries (nil: a new random one).
    public static func merge(
        base: [UInt8], ours: [UInt8], theirs: [UInt8], path: String?, config: Config,
        replica: String?, nowMillis: UInt64
    ) throws -> Outcome {
        func parse(_ bytes: [UInt8], _ name: String) throws -> JSONValue {
            try Self.parse(bytes, name, path: path)
        }
        let o = try parse(ours, "ours"), t = try parse(theirs, "theirs")
        let b =
            base.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) ? nil : try parse(base, "base")
        let (oursId, theirsId) = (changesetId(of: o), changesetId(of: t))
        let (oursLater, why) = Self.later(oursId: oursId, theirsId: theirsId)
        let winner = oursLater ? "ours" : "theirs"

        let policy = path.map(config.policy(for:)) ?? config.policy(for: "")
        switch policy {
        case .merge: break
        case .lww:
            return Outcome(
                result: oursLater ? ours : theirs, collisions: [], winner: winner, why: "policy lww, \(why)",
                unmerged: true)
        case .local, .manual:
            return Outcome(
                result: ours, collisions: [], winner: "ours", why: "policy \(policy.rawValue)", unmerged: true)
        case .remote:
            return Outcome(result: theirs, collisions: [], winner: "theirs", why: "policy remote", unmerged: true)
        }
        let merged = FieldMerge.merge(
            base: b, local: o, remote: t, collisions: oursLater ? .local : .remote,
            counters: config.counters, arrays: config.arrayRules)
        let collisions = merged.conflicts.map {
            Collision(
                pointer: pointer($0.path), ours: $0.local, theirs: $0.remote,
                kept: $0.taken == .local ? "ours" : "theirs")
        }
        var outcome = Outcome(
            result: ours, collisions: collisions, winner: winner, why: why, unmerged: !collisions.isEmpty)
        // Only the changesetId is left out here: a different refId is a different document.
        if merged.merged.isSameDocument(as: o, ignoring: .changesetId) { return outcome }
        if merged.merged.isSameDocument(as: t, ignoring: .changesetId) {
            outcome.result = theirs
            return outcome
        }
        let value = Self.stamped(
            merged.merged, oursId: oursId, theirsId: theirsId, replica: replica, nowMillis: nowMillis)
        outcome.result = ContentPolicy.keepingLineEndsAndBOM(
            of: ours, JSONValueWriter.write(value, indent: JSONValueWriter.detectIndent(of: ours)))
        return outcome
    }

    /// A repeated member name is refused: merging would keep one of its values silently.
    static func parse(_ bytes: [UInt8], _ name: String, path: String?) throws -> JSONValue {
        do { return try JSONValueParser.parse(bytes, uniqueMemberNames: true) } catch {
            throw Failure(
                message: "\(name) (\(path ?? "the file")):\(error.line):\(error.column): \(error.reason); not merged")
        }
    }

    /// Whether ours is the later side, and why. The same id on both sides: both were
    /// edited outside docsync from one version, so neither is later; the tie goes to
    /// ours, as git's does.
    static func later(oursId: String?, theirsId: String?) -> (oursLater: Bool, why: String) {
        let tie = oursId != nil && oursId == theirsId
        let oursLater = tie || (oursId.flatMap { ours in theirsId.map { changesetOrder($0, ours) } } ?? true)
        let why =
            tie
            ? "both sides carry the same changesetId (edited outside docsync): ours, as git does"
            : oursId != nil && theirsId != nil ? "later changesetId" : "no changesetIds to compare: ours, as git does"
        return (oursLater, why)
    }

    /// A merge of two documents with ids is a new version: a changesetId later than both.
    static func stamped(
        _ merged: JSONValue, oursId: String?, theirsId: String?, replica: String?, nowMillis: UInt64
    ) -> JSONValue {
        guard case .object(var members) = merged, members["changesetId"] != nil || oursId != nil || theirsId != nil
        else { return merged }
        let latest = [oursId, theirsId].compactMap { $0.flatMap(ChangesetID.init) }.max()
        let wall = max(nowMillis, (latest?.wallMillis ?? 0) + 1)
        let id = ChangesetID(wallMillis: wall, counter: 0, replica: replica ?? ReplicaID.generate())
        members["changesetId"] = .string(id.description)
        return .object(members)
    }

    static func changesetId(of value: JSONValue) -> String? {
        guard case .object(let members) = value, case .string(let id)? = members["changesetId"], ChangesetID(id) != nil
        else { return nil }
        return id
    }

    /// A dotted field path as a JSON pointer: `a.b~1c` → `/a/b.c`.
    public static func pointer(_ path: String) -> String {
        JSONPointer.pointer(FieldMerge.keys(inPath: path))
    }
}
