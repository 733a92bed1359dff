/// Where things are in a drive-layout folder remote (`docsync-remote 2`; see
/// docs/REMOTE-LAYOUT.md). Every file has one writer: `format` its creator, `objects/`
/// nobody twice (content-addressed), and `replicas/<id>/` only replica `<id>`.
struct DriveLayout {
    let root: String
    /// Every file below `root`, never through a symlink.
    let files: RemotePerimeter

    init(root: String, files: RemotePerimeter? = nil) {
        self.root = root
        self.files = files ?? RemotePerimeter(root: root, url: root)
    }

    var meta: String { root + "/.docsync" }
    var format: String { meta + "/format" }
    var objects: String { meta + "/objects" }
    var replicas: String { meta + "/replicas" }
    /// Taken with flock(2) by a push, never written: it only keeps two pushes on one
    /// machine (or on an NFS share) from forking. Correctness never depends on it.
    var localLock: String { meta + "/push.lock" }

    func replicaFolder(_ replica: String) -> String { replicas + "/" + replica }
    func commits(_ replica: String) -> String { replicaFolder(replica) + "/commits" }
    func commitFile(_ replica: String, seq: Int) -> String { commits(replica) + "/\(seq).json" }
    func info(_ replica: String) -> String { replicaFolder(replica) + "/info.json" }
    /// The view copies a push of `replica` wrote before its commit (see
    /// `DriveFolderRemote.removeUncommittedView`); gone once the commit is written.
    func viewIntent(_ replica: String) -> String { replicaFolder(replica) + "/view-intent" }

    /// A replica id usable as a folder name: letters, digits, `-` and `_`.
    static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64
            && name.utf8.allSatisfy { c in
                (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 45 || c == 95
            }
    }

    /// The number a commit file's name starts with, and whether the name is exactly
    /// `<seq>.json` (anything else there is a sync service's copy, or a temporary file).
    static func commitName(_ name: String) -> (seq: Int, canonical: Bool)? {
        guard !name.hasPrefix(".") else { return nil }
        let digits = name.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, let seq = Int(digits), seq > 0 else { return nil }
        return (seq, name == "\(seq).json")
    }
}
