import Foundation

@testable import DocSyncKit

#if canImport(Glibc)
    import Glibc
#endif

/// Sets every file of the tree at `root` an hour back, out of the index's racy window, so
/// a scan trusts its stat data. False if a file could not be touched.
@discardableResult
func ageEveryFile(_ root: String) -> Bool {
    let then = timespec(tv_sec: time(nil) - 3600, tv_nsec: 0)
    var aged = true
    for file in TreeWalker(root: root, ignore: IgnoreRules(text: "")).walk().files {
        var times = [then, then]
        if utimensat(AT_FDCWD, root + "/" + file.path, &times, 0) != 0 { aged = false }
    }
    return aged
}

/// A fresh folder under the system temp directory, removed when the test ends.
final class TempFolder {
    let path: String

    init(_ name: String = "docsync-test") {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func sub(_ relative: String) -> String { path + "/" + relative }

    func write(_ relative: String, _ text: String) {
        let full = sub(relative)
        try! FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try! Data(text.utf8).write(to: URL(fileURLWithPath: full))
    }

    func read(_ relative: String) -> String? {
        (try? Data(contentsOf: URL(fileURLWithPath: sub(relative)))).map { String(decoding: $0, as: UTF8.self) }
    }

    func exists(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: sub(relative)) }

    func remove(_ relative: String) { try? FileManager.default.removeItem(atPath: sub(relative)) }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// The top-level string value of `key` in a JSON document's text.
func field(_ text: String?, _ key: String) -> String? {
    guard let text, let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
        return nil
    }
    return object[key].map { "\($0)" }
}

/// Two or more replicas of one directory remote, driven through the engine API.
final class ReplicaSet {
    let folder = TempFolder("replicas")
    var remote: String { folder.sub("remote") }
    /// The layout the first replica gives the remote (format 1 for tests of its own files).
    let format: FolderRemoteFormat

    init(format: FolderRemoteFormat = .drive) { self.format = format }

    func make(_ name: String) throws -> String {
        let dir = folder.sub(name)
        if name == "a" || !DirectoryRemote.isRemote(remote) {
            let (ws, _) = try Workspace.initialize(at: dir, remoteURL: remote, replicaName: name, remoteFormat: format)
            ws.close()
        } else {
            let (ws, _) = try TreeSetup.clone(url: remote, into: dir, replicaName: name)
            ws.close()
        }
        return dir
    }

    @discardableResult
    func sync(_ dir: String, _ direction: SyncService.Direction = .both, force: Bool = false) throws -> SyncReport {
        let ws = try Workspace.open(at: dir, readOnly: false)
        defer { ws.close() }
        return try ws.sync.run(direction, options: SyncOptions(force: force))
    }

    func write(_ dir: String, _ relative: String, _ text: String) {
        try! FileManager.default.createDirectory(
            atPath: ((dir + "/" + relative) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try! Data(text.utf8).write(to: URL(fileURLWithPath: dir + "/" + relative))
    }

    func read(_ dir: String, _ relative: String) -> String? {
        (try? Data(contentsOf: URL(fileURLWithPath: dir + "/" + relative))).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Every document file of a tree (not .docsync/) with its bytes.
    func snapshot(_ dir: String) -> [String: String] {
        var result: [String: String] = [:]
        let files = TreeWalker(root: dir, ignore: IgnoreRules(text: "")).walk().files
        for f in files { result[f.path] = read(dir, f.path) }
        return result
    }
}

extension ReplicaSet {
    /// Replica "a" holding `files` (tree path → text), synced to the remote, and replica
    /// "b" made from the remote.
    func twoReplicas(_ files: [String: String]) throws -> (a: String, b: String) {
        let a = try make("a")
        for (path, text) in files { write(a, path, text) }
        try sync(a)
        return (a, try make("b"))
    }
}
