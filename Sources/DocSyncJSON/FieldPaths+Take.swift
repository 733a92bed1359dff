/// `resolve --take` of one colliding field: the stored version's value put into the
/// document as it is now, and nothing else. A field inside an array of records with an
/// identity (`i.1.v`: element 1 of the merged array the conflict was recorded against)
/// is found by that element's identity, in the stored version and in the document now,
/// so edits made since to the other elements stay (SPEC: "never edits made since the
/// conflict"). Why: the whole array was taken, and a later edit of another element undone
/// (model check, git seed 23304). Anything it cannot match that way (no version to read
/// the index against, not an identity array, the element gone on a side) is settled at
/// the array, as `settledField` says.
extension FieldPaths {
    public static func taking(
        _ path: String, from stored: JSONValue, into current: JSONValue, recordedAgainst kept: JSONValue?,
        identityKeys: [String] = FieldPaths.defaultIdentityKeys
    ) -> JSONValue {
        let settled = settledField(path, in: [current, stored])
        guard settled != path else { return setting(value(at: path, in: stored), at: path, in: current) }
        let keys = FieldMerge.keys(inPath: path)
        let depth = FieldMerge.keys(inPath: settled).count
        guard depth < keys.count, let index = Int(keys[depth]), let kept,
            case .array(let keptArray)? = value(at: settled, in: kept),
            case .array(let storedArray)? = value(at: settled, in: stored),
            case .array(var currentArray)? = value(at: settled, in: current),
            keptArray.indices.contains(index),
            let key = identityKeys.first(where: { Merger.isIdentity($0, in: [keptArray, storedArray, currentArray]) }),
            let id = Merger.identity(of: keptArray[index], key: key),
            let storedElement = storedArray.first(where: { Merger.identity(of: $0, key: key) == id }),
            let at = currentArray.firstIndex(where: { Merger.identity(of: $0, key: key) == id })
        else { return setting(value(at: settled, in: stored), at: settled, in: current) }
        let rest = Array(keys.dropFirst(depth + 1))
        if rest.isEmpty {
            currentArray[at] = storedElement
        } else {
            currentArray[at] = taking(
                FieldMerge.path(rest), from: storedElement, into: currentArray[at], recordedAgainst: keptArray[index],
                identityKeys: identityKeys)
        }
        return setting(.array(currentArray), at: settled, in: current)
    }

    /// The identity members an array of records is matched by, unless one is configured.
    public static var defaultIdentityKeys: [String] { Merger.defaultIdentityKeys }
}
