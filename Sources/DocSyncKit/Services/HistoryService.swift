import DocSyncJSON
import Foundation

public struct DocumentHistory: Codable, Sendable {
    public var refId: String
    public var path: String?
    /// This replica's journal entries about the document, oldest first.
    public var local: [LogEntry]
    /// The remote's versions, newest first.
    public var remote: [RemoteVersionInfo]
    /// Why the remote's history could not be read, if it could not.
    public var remoteError: String?
}

/// `docsync log`, `history`, `restore`, `blame` and `diff`: what a document was.
public struct HistoryService: WorkspaceService {
    public let workspace: Workspace

    public init(workspace: Workspace) { self.workspace = workspace }

    // MARK: log

    /// Every journal entry, oldest first, with whether local actions are still pending.
    public func log() throws -> [LogEntry] {
        let entries = try Journal(path: layout.journal).read(from: 0, repair: false)
        let pendingSeqs = Set(state.pending.map(\.seq))
        return entries.map { LogEntry(entry: $0, pending: pendingSeqs.contains($0.seq)) }
    }

    public func document(_ doc: String, relativeTo cwd: String) throws -> DocumentHistory {
        let (refId, path) = try resolveDocument(doc, relativeTo: cwd)
        let local = try log().filter { $0.entry.refId == refId }
        var remoteVersions: [RemoteVersionInfo] = []
        var remoteError: String? = nil
        do {
            remoteVersions = try makeRemote().history(of: refId, path: path)
        } catch {
            remoteError = (error as? LocalizedError)?.errorDescription ?? "\(error)"
        }
        return DocumentHistory(refId: refId, path: path, local: local, remote: remoteVersions, remoteError: remoteError)
    }
}
