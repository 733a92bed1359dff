import DocSyncKit

/// How every command that works on a tree starts and ends: output set up from the global
/// options, the workspace found from the working directory (`-C`) and opened, and closed
/// again however `body` ends (its lock released, its files flushed). The command's own
/// part, JSON or text, is `body`.
extension GlobalOptions {
    func withWorkspace<Result>(readOnly: Bool, _ body: (Workspace) throws -> Result) throws -> Result {
        Output.configure(self)
        let workspace = try Workspace.open(at: workingDirectory, readOnly: readOnly)
        defer { workspace.close() }
        return try body(workspace)
    }
}
