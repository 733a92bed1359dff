/// Why a `seen` entry set a document's base, where it is not a pull's plain "the remote
/// has this" (journaled without a reason). The journal keeps the text; code compares
/// cases, so a misspelt reason cannot silently read as another.
public enum SeenReason: Sendable, Equatable {
    /// A pull that could not be applied (the user saved, moved or deleted the file under
    /// it) put the document's old base back.
    case notApplied
    /// The document left a sparse replica's selection: its file removed here, nothing
    /// deleted anywhere. No remote position (see `SyncState.baseAheadOfCursor`).
    case leftSelection
    /// The remote's history was rewritten and the base rebuilt from what it holds now.
    case historyRewritten
    /// A reason this version does not know (written by a newer docsync), kept as it was.
    case other(String)

    /// The text written to the journal (and shown by `docsync log`).
    public var text: String {
        switch self {
        case .notApplied: "not applied"
        case .leftSelection: "left the selection"
        case .historyRewritten: "history rewritten"
        case .other(let text): text
        }
    }

    public init(text: String) {
        switch text {
        case SeenReason.notApplied.text: self = .notApplied
        case SeenReason.leftSelection.text: self = .leftSelection
        case SeenReason.historyRewritten.text: self = .historyRewritten
        default: self = .other(text)
        }
    }
}
