/// What a pull tells the user about one document, as a value: the planner decides it,
/// and the text is rendered from it (`description`) when the report is printed.
public enum DocumentNotice: Sendable, Equatable, CustomStringConvertible {
    /// Why one side's whole document was kept over the other's.
    public enum KeptBecause: Sendable, Equatable {
        /// The path's policy (`lww` keeps the later changesetId).
        case policy(MergePolicy)
        case tooDeepToMerge
    }

    /// A field that changed on both sides, and the side whose value the merge kept.
    public struct Collision: Sendable, Equatable {
        public var path: String
        public var taken: Reconciler.Side
    }

    /// One side deleted the document, the other edited it (or only renamed it,
    /// `renamedOnly`): the edit was kept.
    case editBeatDeletion(deletedOn: Reconciler.Side, renamedOnly: Bool = false)
    /// Content changed differently on both sides: the later version was kept (the
    /// three-way decision, before any policy settles it).
    case changedOnBothSides(kept: Reconciler.Side)
    /// Content changed differently on both sides: the path's policy kept one whole version.
    case keptWhole(Reconciler.Side, because: KeptBecause)
    /// Content changed on both sides and was merged field by field; `loser` the side
    /// whose version went to the conflict store (nil: nothing was lost).
    case merged(collisions: [Collision], loser: Reconciler.Side?)
    /// Both sides made (or brought back) the document at different paths.
    case differentPaths(kept: String, notApplied: String, notAppliedSide: Reconciler.Side)
    /// Renamed on both sides: `kept` won (by the later rename, or the later changesetId).
    case renamedOnBothSides(kept: String, byRenameTime: Bool, lostSide: Reconciler.Side, lostPath: String)
    /// Another document holds the incoming one's path: it goes beside it.
    case placedBeside(path: String, placedAt: String)
    /// The local file is not a valid document: the remote version (or deletion) waits.
    case waitsForFix(path: String, deletion: Bool)
    /// The local file could not be looked at (see `UnknownDocument`).
    case waitsForLook(path: String, reason: String, deletion: Bool)

    public var description: String {
        switch self {
        case .editBeatDeletion(.local, let renamedOnly):
            let what = renamedOnly ? "renamed" : "edited"
            return
                "deleted here but \(what) on the remote: kept the remote \(renamedOnly ? "rename" : "edit") (recorded as a conflict)"
        case .editBeatDeletion(.remote, let renamedOnly):
            let what = renamedOnly ? "renamed" : "edited"
            return
                "deleted on the remote but \(what) here: kept the local \(renamedOnly ? "rename" : "edit") (recorded as a conflict)"
        case .changedOnBothSides(let side):
            return
                "changed on both sides: kept the \(side.rawValue) version (later changesetId), the \(side.other.rawValue) one is in the conflict store"
        case .keptWhole(let side, let because):
            return
                "changed on both sides: kept the \(side.rawValue) version (\(because.text)); the \(side.other.rawValue) one is in the conflict store"
        case .merged(_, nil):
            return "changed on both sides: merged field by field"
        case .merged(let collisions, let loser?):
            let described = collisions.map { "\($0.path.isEmpty ? "(root)" : $0.path) (kept \($0.taken.rawValue))" }
            return
                "changed on both sides: merged field by field; changed on both: \(described.joined(separator: ", ")) "
                + "(collisions go to the later changesetId, an edit beats a removal); the \(loser.rawValue) version is in the conflict store"
        case .differentPaths(let kept, let notApplied, let side):
            return
                "at different paths on both sides: kept \(kept) (later changesetId); the \(side.rawValue) path "
                + "\(notApplied) was not applied"
        case .renamedOnBothSides(let kept, let byRenameTime, let lostSide, let lostPath):
            let why = byRenameTime ? "the later rename" : "later changesetId"
            return
                "renamed on both sides: kept \(kept) (\(why)); the \(lostSide.rawValue) rename to \(lostPath) "
                + "is a recorded conflict (`docsync resolve \(kept) --take \(lostSide.rawValue)` takes that name)"
        case .placedBeside(let path, let placedAt):
            return "\(path): both sides have a different document at this path; the incoming one is kept as \(placedAt)"
        case .waitsForFix(let path, let deletion):
            return
                "\(path): not a valid document here, so the remote \(deletion ? "deletion" : "version") waits; "
                + "it is merged with your fix on the first sync after the file is valid again"
        case .waitsForLook(let path, let reason, let deletion):
            return
                "\(path): not looked at here (\(reason)), so the remote \(deletion ? "deletion" : "version") waits; "
                + "it is applied on the first sync that can read the file again"
        }
    }
}

extension DocumentNotice.KeptBecause {
    var text: String {
        switch self {
        case .tooDeepToMerge: return "later changesetId; too deep to merge field by field"
        case .policy(.lww), .policy(.merge): return "later changesetId"
        case .policy(.manual): return "policy manual: run `docsync resolve` to settle"
        case .policy(let policy): return "policy \(policy.rawValue)"
        }
    }
}

extension Reconciler.Side {
    /// The side across from this one.
    public var other: Reconciler.Side { self == .local ? .remote : .local }
}
