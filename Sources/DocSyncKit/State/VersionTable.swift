/// Documents' versions by refId, looked up one at a time: a state's base (the state
/// file's lines, searched in place: see `BaseStorage`) and, for the tracked versions, what
/// the pending actions made of the documents they touch. Why not a dictionary: a 1% pull
/// at 100,000 documents looks up a few thousand versions, and parsing all of them for it
/// was a seventh of its time.
///
/// A snapshot: the state it came from clones its base before changing it.
struct VersionTable: Sendable {
    private let base: BaseStorage
    /// Versions set (or, nil, removed) over the base's.
    private let overlay: [String: DocVersion?]
    /// How many documents have a version.
    let count: Int

    init(base: BaseStorage, overlay: [String: DocVersion?] = [:], count: Int) {
        self.base = base
        self.overlay = overlay
        self.count = count
    }

    /// A table of these versions (tests, and callers that hold a dictionary anyway).
    init(_ versions: [String: DocVersion]) {
        self.init(base: BaseStorage(versions), count: versions.count)
    }

    var isEmpty: Bool { count == 0 }

    /// Whether the versions can be looked up: false when the base file they come from
    /// fails its check (see `BaseStorage.readIfPossible`).
    func canRead() -> Bool { base.readIfPossible() }

    subscript(refId: String) -> DocVersion? {
        if let set = overlay[refId] { return set }
        return base.version(refId)
    }

    /// Every version, parsed.
    var all: [String: DocVersion] {
        var versions = base.parsed
        Self.apply(overlay, to: &versions)
        return versions
    }

    /// Sets each version of `changes` in `versions`, removing those set to nil.
    static func apply(_ changes: [String: DocVersion?], to versions: inout [String: DocVersion]) {
        for (refId, version) in changes {
            if let version { versions[refId] = version } else { versions.removeValue(forKey: refId) }
        }
    }
}
