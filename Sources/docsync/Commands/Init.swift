import ArgumentParser
import DocSyncKit

extension RemoteKind: ExpressibleByArgument {}

/// How to reach a remote, shared by init and clone.
struct RemoteOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The remote kind, dir or git; picked from the URL when omitted.", valueName: "KIND"))
    var kind: RemoteKind?

    @Option(
        help: ArgumentHelp("For git remotes: the branch holding the documents (default main).", valueName: "BRANCH"))
    var branch: String?

    /// Checks the URL (exit 2 when it can never work) and decides its kind. Relative
    /// folder paths are taken from the working folder; URLs are kept as given.
    func address(_ url: String, from base: String) throws -> RemoteAddress {
        try RemoteAddress.parse(url, kind: kind, relativeTo: base)
    }
}

/// `--name`, shared by init and clone.
struct ReplicaNameOption: ParsableArguments {
    @Option(help: ArgumentHelp("A readable name for this replica (default: the host name).", valueName: "NAME"))
    var name: String?
}

extension DocSync {
    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "init",
            abstract: "Make a folder a docsync working tree.",
            discussion:
                "Creates .docsync/ in DIR (default: the current folder). With --remote, a missing or empty folder is made a new remote; an existing remote is joined, and the first sync merges both sides: a file without ids at a path where the remote has a document joins that document (the same content is simply that document; different content is merged field by field, fields that differ being a recorded conflict, exit 3). Files stamped while the remote is unreachable (exit 75) still join at the first sync that reaches it."
        )

        @OptionGroup var global: GlobalOptions

        @Option(
            help: ArgumentHelp(
                "The remote: a folder, or a git URL (bare repository path, file://, git://, ssh://, user@host:path, https://).",
                valueName: "URL"))
        var remote: String?

        @OptionGroup var remoteOptions: RemoteOptions

        @OptionGroup var replica: ReplicaNameOption

        @Option(
            help: ArgumentHelp(
                "For a new folder remote: its layout, 2 (the default: any folder, cloud drives and Syncthing included) or 1 (a shared file system only, for docsync releases before 2 to sync with; docsync then never upgrades it).",
                valueName: "N"))
        var remoteFormat: Int?

        @Argument(help: "The folder to make a working tree (created if missing).")
        var directory: String?

        func validate() throws {
            if let remoteFormat, FolderRemoteFormat(rawValue: remoteFormat) == nil {
                throw ValidationError("--remote-format must be 1 or 2, not \(remoteFormat)")
            }
        }

        func run() throws {
            try global.withMadeWorkspace(makeTree) { workspace, createdRemote in
                let tree = TreeJSON(workspace, remote: RemoteJSON(workspace.config, created: createdRemote))
                try global.printResult(command: "init", tree) {
                    Output.line(
                        "Initialized docsync tree in \(tree.root) (replica \(tree.replicaName), id \(tree.replicaId))")
                    if let remote = tree.remote {
                        Output.line(Self.remoteLine(remote, created: createdRemote))
                    }
                }
            }
        }

        /// What init says about the remote. Why not always "joined" for git: an empty bare
        /// repository was said to be an existing remote that was joined.
        static func remoteLine(_ remote: RemoteJSON, created: Bool) -> String {
            if created && remote.kind == "git" {
                return
                    "Started a new remote in the empty git repository at \(remote.url) (\(remote.description)); the first push or sync sends this tree's documents"
            }
            if created { return "Created a new remote at \(remote.url) (\(remote.description))" }
            if remote.kind == "git" && RemoteKind.isNetworkGit(remote.url) {
                // Whether the repository is empty is not known without the network.
                return
                    "Set the remote to \(remote.url) (\(remote.description)); run `docsync sync` to merge it with this tree (an empty repository is started by the first push)"
            }
            return
                "Joined the existing remote at \(remote.url) (\(remote.description)); run `docsync sync` to merge it with this tree"
        }

        /// Makes the tree (and the remote, where there is none yet); says whether it made the remote.
        private func makeTree() throws -> (Workspace, Bool) {
            let target = FileSystem.join(global.workingDirectory, directory ?? "")
            let path = directory.map { $0.hasPrefix("/") ? $0 : target } ?? global.workingDirectory
            let address = try remote.map { try remoteOptions.address($0, from: global.workingDirectory) }
            try address?.checkSeparate(fromTree: FileSystem.absolute(path))
            try FileSystem.createDirectories(FileSystem.absolute(path))
            return try Workspace.initialize(
                at: path, remoteURL: address?.url, kind: address?.kind,
                branch: remoteOptions.branch, replicaName: replica.name,
                remoteFormat: remoteFormat.flatMap(FolderRemoteFormat.init(rawValue:)))
        }
    }

    struct Clone: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "clone",
            abstract: "Make a new working tree from a remote.",
            discussion:
                "Every document on the remote is pulled into DIR (created if missing); with --sparse, only those under the paths given. Files DIR already holds are kept: a file without ids at a path where the remote has a document joins that document (the same content is simply that document; different content is merged field by field, fields that differ being a recorded conflict, exit 3); the others are recorded and sent by the next push or sync. A folder that is already a docsync tree is refused."
        )

        @OptionGroup var global: GlobalOptions

        @OptionGroup var replica: ReplicaNameOption

        @Argument(
            help:
                "The remote: a folder, or a git URL (bare repository path, file://, git://, ssh://, user@host:path, https://)."
        )
        var url: String

        @OptionGroup var remoteOptions: RemoteOptions

        @Argument(help: "The folder to clone into (created if missing; files in it are kept).")
        var directory: String

        @Flag(
            help:
                "Make a receive-only replica (sets sync.mode receive-only before the first pull): the remote's changes are applied, this tree's are recorded and never sent."
        )
        var receiveOnly = false

        @Option(
            help: ArgumentHelp(
                "Keep only this part of the remote (a folder, file or gitignore-style pattern; repeat for more; see `docsync sparse`): a sparse replica.",
                valueName: "PATH"))
        var sparse: [String] = []

        func run() throws {
            let view = ProgressView(global: global)
            defer { view.clear() }
            try global.withMadeWorkspace({ try clone(showing: view) }) { workspace, report in
                view.clear()
                let tree = TreeJSON(workspace, remote: RemoteJSON(workspace.config, created: nil))
                let remote = tree.remote.map { " from \($0.url) (\($0.description))" } ?? ""
                try SyncPrinter(global: global, streamed: view.streamed).finish(
                    report, verb: "Cloned", command: "clone",
                    extraLine: "into \(tree.root)\(remote) as replica \(tree.replicaName)"
                        + (receiveOnly ? ", receive-only" : "")
                        + (sparse.isEmpty ? "" : ", sparse (\(sparse.joined(separator: " ")))"),
                    extra: WithFields(base: tree, extra: ["documents": report.pulled.count]))
            }
        }

        private func clone(showing view: ProgressView) throws -> (Workspace, SyncReport) {
            let base = global.workingDirectory
            let address = try remoteOptions.address(url, from: base)
            return try TreeSetup.clone(
                url: address.url, into: directory.hasPrefix("/") ? directory : FileSystem.join(base, directory),
                kind: address.kind, branch: remoteOptions.branch, replicaName: replica.name,
                mode: receiveOnly ? .receiveOnly : .both, sparse: sparse.isEmpty ? nil : sparse,
                progress: view.handler)
        }
    }

    struct ResetBase: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset-base",
            abstract: "Recover from a lost or damaged sync state.",
            discussion:
                "Moves .docsync/state aside and starts from an empty base: every document in the tree is recorded as it is. The next sync adds what exists on one side only, takes identical versions as synced and keeps both versions where they differ (one in the conflict store). Nothing is deleted on either side."
        )

        @OptionGroup var global: GlobalOptions

        func run() throws {
            try global.withMadeWorkspace({ try TreeSetup.resetBase(at: global.workingDirectory) }) { _, report in
                try SyncPrinter(global: global).finish(
                    report, verb: "Reset the base", command: "reset-base",
                    extraLine: "(run `docsync sync` to reconcile with the remote)")
            }
        }
    }
}

/// What init and clone made or joined, as they report it.
struct TreeJSON: Encodable {
    var root: String
    var replicaId: String
    var replicaName: String
    var remote: RemoteJSON?

    init(_ workspace: Workspace, remote: RemoteJSON?) {
        root = workspace.layout.root
        replicaId = workspace.config.replicaId
        replicaName = workspace.config["core.replicaName"] ?? replicaId
        self.remote = remote
    }

    private enum Key: String, CodingKey { case root, replicaId, replicaName, remote }
    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(fields: [.root: root, .replicaId: replicaId, .replicaName: replicaName, .remote: remote])
    }
}
