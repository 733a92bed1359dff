import DocSyncKit

/// How every command that works on a tree starts and ends: output set up from the global
/// options, the workspace found from the working directory (`-C`) and opened, and closed
/// again however `body` ends (its lock released, its files flushed). The command's own
/// part, JSON or text, is `body`.
extension GlobalOptions {
    /// `baseOnDemand`: for status and the syncs (see `Workspace.open`).
    func withWorkspace<Result>(readOnly: Bool, baseOnDemand: Bool = false, _ body: (Workspace) throws -> Result)
        throws -> Result
    {
        Output.configure(self)
        return try Workspace.using(at: workingDirectory, readOnly: readOnly, baseOnDemand: baseOnDemand, body)
    }

    /// The same for the commands that make their workspace (init, clone, reset-base):
    /// `make` runs once output is set up and gives the workspace with what making it
    /// reported; the workspace is closed however `body` ends.
    func withMadeWorkspace<Made, Result>(
        _ make: () throws -> (Workspace, Made), _ body: (Workspace, Made) throws -> Result
    ) throws -> Result {
        Output.configure(self)
        let (workspace, made) = try make()
        defer { workspace.close() }
        return try body(workspace, made)
    }

    /// Prints a command's result: with --json `object` as its one JSON object
    /// (docs/JSON.md), else the text `text` prints.
    func printResult<Object: Encodable>(
        command: String, _ object: @autoclosure () throws -> Object, text: () throws -> Void
    ) throws {
        if json { try Output.json(object(), command: command) } else { try text() }
    }
}

extension Workspace {
    /// Opens the tree at `path` for `body` and closes it however `body` ends; for a run
    /// that opens it again and again (`watch`, one sync at a time).
    static func using<Result>(
        at path: String, readOnly: Bool, baseOnDemand: Bool = false, _ body: (Workspace) throws -> Result
    ) throws -> Result {
        let workspace = try Workspace.open(at: path, readOnly: readOnly, baseOnDemand: baseOnDemand)
        defer { workspace.close() }
        return try body(workspace)
    }
}
