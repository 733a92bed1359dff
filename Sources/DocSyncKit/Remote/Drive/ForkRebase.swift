import DocSyncJSON

/// The base a replica merges its document again from after its push lost a fork, so
/// that only its own edits are replayed onto the winning chain (git's rebase, field by
/// field), not the values it only carried over from other replicas' pushes on the losing
/// chain. Measured from the fork's shared version instead, a carried value that the
/// winning chain has since changed looked like this replica's edit, collided with the
/// later value, and won it with the later changesetId of this replica's merge.
///
/// The values other replicas pushed on the losing chain are theirs to send again: their
/// pushes lost the same fork, and each replica replays its own.
enum ForkRebase {
    /// The base's bytes: the document as this replica last synced it (the last of
    /// `chain`) with every field this replica itself changed on the losing chain set
    /// back to its value before that change. Nil when there is nothing to replay from
    /// (no shared version, no other replica's version on the chain, or not JSON objects):
    /// the caller then merges from the shared version as before.
    /// - Parameters:
    ///   - shared: the last version of the document both chains hold.
    ///   - chain: the document's versions on the losing chain after it, oldest first,
    ///     with the replica that pushed each.
    ///   - me: this replica.
    static func base(shared: [UInt8]?, chain: [(replica: String, bytes: [UInt8])], me: String) -> [UInt8]? {
        guard let shared, let last = chain.last, chain.contains(where: { $0.replica != me }),
              var previous = try? JSONValueParser.parse(shared), case .object = previous,
              var base = try? JSONValueParser.parse(last.bytes), case .object = base
        else { return nil }
        // Each field this replica changed, and its value before its first change (nil:
        // the field was absent).
        var own: [String: JSONValue?] = [:]
        var order: [String] = []
        for version in chain {
            guard let current = try? JSONValueParser.parse(version.bytes), case .object = current else { return nil }
            if version.replica == me {
                for path in FieldPaths.differing(previous, current) where own[path] == nil {
                    own[path] = .some(FieldPaths.value(at: path, in: previous))
                    order.append(path)
                }
            }
            previous = current
        }
        for path in order {
            guard let before = own[path] else { continue }
            base = FieldPaths.setting(before, at: path, in: base)
        }
        return JSONValueWriter.writeCompact(base)
    }
}
