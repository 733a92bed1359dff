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
        let keys = FieldMerge.keys(inPath: path)
        let arrayDepth =
            settledField(path, in: [current, stored]) == path ? nil : arrayDepth(of: keys, in: [current, stored])
        guard let depth = arrayDepth else {
            return setting(value(at: path, in: stored), at: path, in: current)
        }
        let arrayPath = FieldMerge.path(Array(keys.prefix(depth)))
        let wholeArray = setting(value(at: arrayPath, in: stored), at: arrayPath, in: current)
        guard depth < keys.count, let index = Int(keys[depth]), let kept,
            case .array(let keptArray)? = value(at: arrayPath, in: kept),
            case .array(let storedArray)? = value(at: arrayPath, in: stored),
            case .array(var currentArray)? = value(at: arrayPath, in: current),
            keptArray.indices.contains(index),
            let key = identityKeys.first(where: { Merger.isIdentity($0, in: [keptArray, storedArray, currentArray]) }),
            let id = Merger.identity(of: keptArray[index], key: key),
            let storedElement = storedArray.first(where: { Merger.identity(of: $0, key: key) == id }),
            let at = currentArray.firstIndex(where: { Merger.identity(of: $0, key: key) == id })
        else { return wholeArray }
        let rest = Array(keys.dropFirst(depth + 1))
        if rest.isEmpty {
            currentArray[at] = storedElement
        } else {
            currentArray[at] = taking(
                FieldMerge.path(rest), from: storedElement, into: currentArray[at], recordedAgainst: keptArray[index],
                identityKeys: identityKeys)
        }
        return setting(.array(currentArray), at: arrayPath, in: current)
    }

    /// The identity members an array of records is matched by, unless one is configured.
    public static var defaultIdentityKeys: [String] { Merger.defaultIdentityKeys }

    /// How many keys of `keys` lead through objects to an array in any of `documents`.
    private static func arrayDepth(of keys: [String], in documents: [JSONValue]) -> Int? {
        var currents = documents.map { Optional($0) }
        for depth in keys.indices {
            if currents.contains(where: { if case .array? = $0 { true } else { false } }) { return depth }
            currents = currents.map { current in
                guard case .object(let members)? = current else { return nil }
                return members[keys[depth]]
            }
        }
        return nil
    }
}
