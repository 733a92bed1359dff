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
    /// back to its value before that change. A field is this replica's own change when
    /// its version differs there from the version the push was made on (`madeOn`: the
    /// document on the chain below it, which the replica had read and merged). Nil when
    /// that cannot be told (a version this replica made on no version of the document,
    /// or not JSON objects): the caller then merges from a shared version as before.
    /// - Parameters:
    ///   - chain: the document's versions on the losing chain, oldest first, with the
    ///     replica that pushed each and the version it was made on.
    ///   - me: this replica.
    /// - Parameters (continued):
    ///   - winning: the winning chain's version, and `held` every other version of the
    ///     document this replica held (its own pushes on any chain, the losing chain's).
    ///     A field this replica changed whose winning value is one it held before, and
    ///     not its latest, is stale there (carried over in a merge made before that
    ///     replica's later change), not changed: the base takes that value, so the
    ///     replica's later one is kept without a conflict. (Another replica setting the
    ///     field back to exactly such a value at the same time would lose to it.)
    static func base(
        chain: [(replica: String, bytes: [UInt8], madeOn: [UInt8]?)], me: String,
        winning: [UInt8]?, held: [[UInt8]]
    ) -> [UInt8]? {
        guard var base = base(chain: chain, me: me).flatMap({ try? JSONValueParser.parse($0) }),
            let winning = winning.flatMap({ try? JSONValueParser.parse($0) }), case .object = winning,
            let last = chain.last.flatMap({ try? JSONValueParser.parse($0.bytes) })
        else {
            return base(chain: chain, me: me)
        }
        let history = held.compactMap { try? JSONValueParser.parse($0) }
        for path in FieldPaths.differing(base, last) {
            let theirs = FieldPaths.value(at: path, in: winning)
            guard theirs != FieldPaths.value(at: path, in: base), theirs != FieldPaths.value(at: path, in: last) else {
                continue
            }
            if history.contains(where: { FieldPaths.value(at: path, in: $0) == theirs }) {
                base = FieldPaths.setting(theirs, at: path, in: base)
            }
        }
        return JSONValueWriter.writeCompact(base)
    }

    static func base(chain: [(replica: String, bytes: [UInt8], madeOn: [UInt8]?)], me: String) -> [UInt8]? {
        guard let last = chain.last, chain.contains(where: { $0.replica == me }),
            var base = try? JSONValueParser.parse(last.bytes), case .object = base
        else { return nil }
        // Each field this replica changed, and its value before its first change (nil:
        // the field was absent).
        var own: [String: JSONValue?] = [:]
        var order: [String] = []
        for version in chain where version.replica == me {
            guard let madeOn = version.madeOn, let before = try? JSONValueParser.parse(madeOn), case .object = before,
                let current = try? JSONValueParser.parse(version.bytes), case .object = current
            else { return nil }
            for path in FieldPaths.differing(before, current) where own[path] == nil {
                own[path] = .some(FieldPaths.value(at: path, in: before))
                order.append(path)
            }
        }
        for path in order {
            guard let before = own[path] else { continue }
            base = FieldPaths.setting(before, at: path, in: base)
        }
        return JSONValueWriter.writeCompact(base)
    }
}
