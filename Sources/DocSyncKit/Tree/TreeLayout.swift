import Foundation

/// Where everything lives inside a working tree's `.docsync/` folder.
public struct TreeLayout: Sendable {
    public let root: String

    public init(root: String) { self.root = root }

    public var metadata: String { root + "/.docsync" }
    public var config: String { metadata + "/config" }
    public var state: String { metadata + "/state" }
    public var index: String { metadata + "/index" }
    public var journal: String { metadata + "/journal" }
    public var clock: String { metadata + "/clock" }
    public var lock: String { metadata + "/lock" }
    public var objects: String { metadata + "/objects" }
    public var conflicts: String { metadata + "/conflicts" }
    public var ignoreFile: String { root + "/.docsyncignore" }
    /// The parts of the remote a sparse replica keeps (see `SparseSelection`).
    public var sparseFile: String { metadata + "/sparse" }
    /// Present while a widened selection waits for the full listing that brings its new
    /// part (see `SparseService`).
    public var sparseWidenFile: String { metadata + "/sparse-widen" }

    public func absolute(_ relativePath: String) -> String { root + "/" + relativePath }

    /// A path a user gave on the command line (absolute, or relative to `cwd`), made absolute.
    public static func userPath(_ path: String, from cwd: String) -> String {
        FileSystem.absolute(path.hasPrefix("/") ? path : FileSystem.join(cwd, path))
    }

    /// An absolute path relative to the root, if it is inside the tree (nil for the root
    /// itself and for paths outside).
    public func relative(_ absolute: String) -> String? {
        absolute.hasPrefix(root + "/") ? String(absolute.dropFirst(root.count + 1)) : nil
    }

    /// Finds the tree containing `directory`, walking up like git does.
    public static func find(from directory: String) -> TreeLayout? {
        var current = FileSystem.absolute(directory)
        while true {
            if FileSystem.isDirectory(current + "/.docsync"), FileSystem.exists(current + "/.docsync/config") {
                return TreeLayout(root: current)
            }
            // A tree whose config was lost still has its state: it is this tree (so
            // loading the config says what is missing), not "not a docsync tree", and
            // never a tree further up. Why: a deleted config made docsync look for (and
            // possibly use) a parent tree.
            if FileSystem.isDirectory(current + "/.docsync"), FileSystem.exists(current + "/.docsync/state") {
                return TreeLayout(root: current)
            }
            if current == "/" || current.isEmpty { return nil }
            current = (current as NSString).deletingLastPathComponent
        }
    }
}
