import DocSyncJSON
import Foundation

// `resolve`'s steps: which stored version is wanted, what the report says, and the
// journal entries that write it.
extension ConflictService {
    /// The stored version whose values `take` asks for (nil: the kept side, already
    /// there): `local` / `remote` (as this replica sees them), a replica's name or id, or a
    /// changesetId prefix.
    func chosenRecord(take: ResolveTake, whole: Bool, among open: [ConflictStore.Record], doc: String) throws
        -> ConflictStore.Record?
    {
        var chosen: ConflictStore.Record? = nil
        switch take {
        case .asIs:
            if whole {
                throw Workspace.Failure.gaveUp(
                    "--whole needs --take local|remote|ID: which stored version to bring back")
            }
        case .local, .remote:
            chosen = open.last { sideHere(of: $0) == take.side }
        case let .named(replica) where replicaId(named: replica, among: open) != nil:
            let id = replicaId(named: replica, among: open)!
            chosen = open.last { $0.lostBy == id }
        case let .named(id):
            let matches = open.filter { $0.changesetId.hasPrefix(id) }
            guard let match = matches.last else {
                throw Workspace.Failure.gaveUp(
                    "no stored version '\(id)' in the open conflicts of \(doc); see `docsync conflicts`")
            }
            if Set(matches.map(\.changesetId)).count > 1 {
                throw Workspace.Failure.gaveUp(
                    "'\(id)' matches several stored versions of \(doc): \(matches.map(\.changesetId).joined(separator: ", "))"
                )
            }
            chosen = match
        }
        return chosen
    }

    /// What `resolve` says it did.
    static func notice(for write: ResolveWrite?, chosen: ConflictStore.Record?, path: String, side: String?) -> String {
        switch write {
        case let .fields(_, replaced):
            return
                "\(path): took \(replaced.joined(separator: ", ")) from \(side ?? "the stored version"); every other field stays as it is now"
        case let .whole(_, undone):
            return "\(path): brought back the whole stored version \(chosen?.changesetId ?? "?")"
                + (undone.isEmpty ? "" : "; this undoes later edits of \(undone.joined(separator: ", "))")
        case .delete:
            return "\(path): the deletion wins; the document is deleted"
        case let .move(target):
            return "\(path): takes the name \(target) after all; the document moves there"
        case nil:
            return "\(path): kept as it is now"
        }
    }

    /// The file operation and local action that carry out `write` (stamped with a new
    /// changesetId, its bytes in the object store), journaled before the file is written.
    func fileEntries(for write: ResolveWrite?, refId: String, path: String, io: SafeTreeIO) throws -> [JournalEntry] {
        let tracked = state.trackedVersions[refId]
        let fileBytes = try io.readIfPresent(path)
        var entries: [JournalEntry] = []
        func operation(
            _ result: DocVersion?, _ action: JournalEntry.LocalAction, _ version: DocVersion, fromPath: String? = nil
        ) {
            entries.append(
                JournalEntry(
                    .apply(
                        .init(
                            refId: refId, changesetId: result?.changesetId ?? version.changesetId, result: result,
                            fromPath: path, fromHash: fileBytes.map(ContentHash.of)))))
            entries.append(JournalEntry(.local(action, version: version, fromPath: fromPath)))
        }
        switch write {
        case let .fields(value, _):
            let current = fileBytes ?? []
            var stamped = value
            let changesetId = clock.next().description
            if case .object(var members) = stamped {
                members["changesetId"] = .string(changesetId)
                stamped = .object(members)
            }
            let bytes = ContentPolicy.keepingLineEndsAndBOM(
                of: current, JSONValueWriter.write(stamped, indent: JSONValueWriter.detectIndent(of: current)))
            let version = DocVersion(refId: refId, changesetId: changesetId, hash: try objects.put(bytes), path: path)
            operation(version, .update, version)
        case let .whole(bytes, _):
            let scanned = try JSONScanner.scanDocument(bytes)
            let changesetId = clock.next().description
            let stamped = IdentityStamper.stamp(bytes, scanned: scanned, refId: refId, changesetId: changesetId)
            let version = DocVersion(refId: refId, changesetId: changesetId, hash: try objects.put(stamped), path: path)
            operation(version, .update, version)
        case .delete:
            if let tracked { operation(nil, .delete, tracked) }
        case let .move(target):
            guard target != path, let tracked else { break }
            guard try io.readIfPresent(target) == nil else {
                throw Workspace.Failure.gaveUp("\(target) holds another file; move it away, then resolve \(path) again")
            }
            var moved = tracked
            moved.path = target
            operation(moved, .rename, moved, fromPath: path)
        case nil:
            break
        }
        return entries
    }
}
