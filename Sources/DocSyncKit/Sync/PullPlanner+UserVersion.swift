extension PullPlanner {
    /// What the user had of a document when the run first met it: its base, its file's
    /// version, and the published versions its pending content carried (`madeFrom`). A
    /// retry of the run decides the document again from these, and measures that merge
    /// from what they were made from (see `SyncSession.userVersions`).
    struct UserVersion {
        var base: DocVersion?
        var local: DocVersion?
        var madeFrom: [String]
    }
}
