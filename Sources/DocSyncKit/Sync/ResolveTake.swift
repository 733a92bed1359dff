/// What `docsync resolve --take` asked for, from the command line to the journal and the
/// conflict record's resolution: a side as this replica sees it, a replica (name or id)
/// or a stored version (a changesetId prefix), or nothing (the document kept as it is).
/// The journal and the records keep the text; code switches over the cases.
public enum ResolveTake: Sendable, Equatable {
    case local
    case remote
    /// A replica's name or id, or a changesetId prefix: which one is decided against the
    /// open records (`ConflictService.chosenRecord`).
    case named(String)
    /// No `--take`: the document stays as it is now.
    case asIs

    /// The text written to the journal and the record (and shown by `log`, `conflicts`).
    public var text: String {
        switch self {
        case .local: "local"
        case .remote: "remote"
        case .named(let text): text
        case .asIs: "as is"
        }
    }

    /// `--take`'s argument: `local`, `remote`, or a name, id or prefix.
    public init(argument: String) {
        switch argument {
        case "local": self = .local
        case "remote": self = .remote
        default: self = .named(argument)
        }
    }

    /// The text a journal entry or a record's resolution holds (nil: an older entry
    /// without one, which took nothing).
    init(text: String?) {
        guard let text, text != ResolveTake.asIs.text else {
            self = .asIs
            return
        }
        self.init(argument: text)
    }

    /// The side a `local` or `remote` take names.
    var side: Reconciler.Side? {
        switch self {
        case .local: .local
        case .remote: .remote
        default: nil
        }
    }
}
