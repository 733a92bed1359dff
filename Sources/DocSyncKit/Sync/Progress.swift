/// What a long run reports while it works, for a front end to show. The engine never
/// touches the terminal: it calls a `ProgressHandler`, the command line draws.
public enum ProgressPhase: String, Sendable {
    /// Reading the files of the tree (the stat cache skips unchanged ones).
    case scan
    /// Deciding, per file, what changed and stamping ids.
    case record
    /// Reading the remote's versions and writing them into the tree.
    case pull
    /// Writing documents to the remote.
    case push
    /// Sweeping `.docsync/objects/`.
    case gc
}

public enum ProgressEvent: Sendable {
    /// `done` of `total` items of the phase are finished.
    case step(ProgressPhase, done: Int, total: Int)
    /// One document was just pulled into the tree or written to the remote.
    case document(ProgressPhase, ChangeSummary)
    /// The phase is over (its last `step` said how far it got).
    case finished(ProgressPhase)
}

/// Called on the thread that runs the command, as things happen; it must be cheap
/// (the engine calls it once per file) and may drop calls it does not need.
public typealias ProgressHandler = (ProgressEvent) -> Void
