import Foundation

/// `remote.maxDocumentBytes`: the largest remote document a pull reads. Each remote checks
/// a document's size before it reads it (a git blob's object header, a folder remote
/// object's stat or pack index); a larger one is left out of the changes and reported by
/// name (the run exits 1), and the rest of the pull goes on.
///
/// Where a skipped document leaves the cursor: the cursor moves on (the other documents
/// are pulled and a push is not blocked), so the remote remembers what it skipped in
/// `.docsync/remote-skipped.json` and looks at those documents again on every run: still
/// too large, reported again; within the ceiling now (raised, or shrunk on the remote), pulled
/// then; changed or gone on the remote, forgotten (the change is pulled as any other).
/// A skipped document is never read as deleted, and a push that would overwrite or delete
/// it unseen is refused (exit 1) until it is pulled.
public struct RemoteDocumentCeiling: Sendable {
    public static let defaultBytes: Int64 = 64 << 20

    public var maxBytes: Int64
    /// Where the documents skipped are remembered between runs (nil: not remembered).
    public var memoryPath: String?
    /// False for a read-only run (status, diff, log): it reads what is remembered and
    /// changes nothing, since it runs without the tree's lock.
    public var mayWrite = true

    public init(maxBytes: Int64 = Self.defaultBytes, memoryPath: String? = nil, mayWrite: Bool = true) {
        self.maxBytes = maxBytes
        self.memoryPath = memoryPath
        self.mayWrite = mayWrite
    }

    /// What the run says about a document it did not read.
    func tooLarge(_ path: String, size: Int64, url: String) -> String {
        "\(url): \(path): \(size) bytes, larger than remote.maxDocumentBytes (\(maxBytes)); not pulled, and not read. "
            + "Raise the ceiling (`docsync config remote.maxDocumentBytes BYTES`) or shrink it on the remote; "
            + "it is reported on every run until then"
    }

    /// Why a push is refused: it would replace or delete a version this tree never read.
    func pushRefused(_ path: String, size: Int64) -> String {
        "\(path): the remote holds a version of it larger than remote.maxDocumentBytes (\(size) bytes) that this "
            + "tree has not pulled; not pushed, so that it is not overwritten unseen. Raise the ceiling "
            + "(`docsync config remote.maxDocumentBytes BYTES`) and sync, or change it on the remote"
    }

    // MARK: Memory

    /// One remote document a pull skipped for its size.
    struct Skipped: Codable, Equatable {
        var path: String
        var size: Int64
        /// git: the blob; a folder remote: the version's content hash.
        var key: String
        /// Folder remotes: the remote's entry, pulled as it is once it fits.
        var entry: RemoteEntry?
        /// git: what reading the blob as a version takes (see `GitRemote.entry`).
        var previousBlob: String?
        var commitTime: Int64?
        var introducedAt: Int64?
        var replacedChangesetId: String?
        var replacedRefId: String?
        var historyRead: Bool?
    }

    private struct Memory: Codable {
        var url: String
        var documents: [Skipped]
    }

    /// The documents earlier runs skipped on the remote at `url` (none after the remote
    /// URL changed).
    func remembered(url: String) -> [Skipped] {
        guard let memoryPath, let bytes = try? FileSystem.readFile(memoryPath),
            let memory = try? JSONDecoder().decode(Memory.self, from: Data(bytes)), memory.url == url
        else { return [] }
        return memory.documents
    }

    /// Remembers `documents` (by path, sorted), unless they are what is remembered already.
    func remember(_ documents: [Skipped], url: String) {
        guard let memoryPath, mayWrite else { return }
        var byPath: [String: Skipped] = [:]
        for document in documents { byPath[document.path] = document }
        let sorted = byPath.values.sorted { $0.path < $1.path }
        if sorted == remembered(url: url) { return }
        if sorted.isEmpty {
            try? FileSystem.removeFile(memoryPath)
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? encoder.encode(Memory(url: url, documents: sorted)) else { return }
        try? FileSystem.writeAtomically(memoryPath, Array(data) + [10])
    }
}
