// The perimeter of a folder remote (issue 42, defect 2): nothing under the remote's root
// is read or written through a symbolic link (or through a file where a folder belongs).
// Someone with write access to the share replaces a folder or a file of the remote's own
// `.docsync/` (or a document folder) with a symlink to a folder outside; a copy of what
// was there is put in that folder, so a run that followed the link would work, and write
// there. For every such path, in the drive layout and in format 1: push, pull and sync
// stop with exit 1 naming the path, the folder outside is byte for byte as it was with
// nothing created in it, and `verify` reports the symlink.

import DocSyncKit
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Reliability: a folder remote's perimeter (symlinks under its root are never followed)")
struct RemoteSymlinkTests {
    enum Layout: String, CaseIterable, Sendable { case drive, format1 }

    /// What is replaced by a symlink. `replicaA` is replica A's record or folder.
    enum Place: String, CaseIterable, Sendable {
        /// `.docsync` itself: the metadata folder, where the lock is taken.
        case metadata
        /// Every `.docsync/objects/<xx>` (all 256, so the next object written meets one).
        case objectPrefixes
        /// `.docsync/replicas`.
        case replicasFolder
        /// Drive: `replicas/<A>` (A's own folder); format 1: `replicas/<A>.json`.
        case replicaA
        /// Drive: `replicas/<A>/commits`; format 1: `feed`.
        case commits
        /// Drive: `replicas/<A>/info.json`; format 1: `generation`.
        case info
        /// A document folder of the remote's readable view.
        case documentFolder

        var isDocument: Bool { self == .documentFolder }
    }

    struct Setup {
        let box: Sandbox
        let a: Replica
        let b: Replica
        let idA: String
        var canary: String { box.path("canary") }
    }

    static func setUp(_ layout: Layout, _ name: String) -> Setup {
        let box = Sandbox(name)
        box.remoteFormat1 = layout == .format1
        let a = box.initReplica(
            "A",
            files: ["docs/one.json": "{\"v\": \"one\"}\n", "docs/two.json": "{\"v\": \"two\"}\n", "top.json": "{}\n"]
        )
        a.sync()
        let replicas = box.remote + "/.docsync/replicas"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: replicas)) ?? []
        #expect(names.count == 1, "A's record alone: \(names)")
        let idA = names.first.map { $0.hasSuffix(".json") ? String($0.dropLast(5)) : $0 } ?? "?"
        let b = box.clone("B")
        try! FileManager.default.createDirectory(atPath: box.path("canary"), withIntermediateDirectories: true)
        return Setup(box: box, a: a, b: b, idA: idA)
    }

    /// The remote-relative paths `place` stands for in `layout`.
    static func paths(_ place: Place, _ layout: Layout, idA: String) -> [String] {
        switch place {
        case .metadata: return [".docsync"]
        case .objectPrefixes: return (0..<256).map { ".docsync/objects/" + String(format: "%02x", $0) }
        case .replicasFolder: return [".docsync/replicas"]
        case .replicaA: return layout == .drive ? [".docsync/replicas/\(idA)"] : [".docsync/replicas/\(idA).json"]
        case .commits: return layout == .drive ? [".docsync/replicas/\(idA)/commits"] : [".docsync/feed"]
        case .info: return layout == .drive ? [".docsync/replicas/\(idA)/info.json"] : [".docsync/generation"]
        case .documentFolder: return ["docs"]
        }
    }

    /// Moves what is at `relative` in the remote (a folder made empty if nothing is) into
    /// the canary folder and puts a symlink to it in its place.
    static func plant(_ relative: String, remote: String, canary: String) {
        let path = remote + "/" + relative
        let target = canary + "/" + relative.replacingOccurrences(of: "/", with: "_")
        if FileManager.default.fileExists(atPath: path) {
            try! FileManager.default.moveItem(atPath: path, toPath: target)
        } else {
            try! FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        }
        try! FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
    }

    static func expectRefused(
        _ r: RunResult, naming path: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(r.exit == 1, "\(what): exit 1: \(r)", sourceLocation: sourceLocation)
        #expect(r.stderr.contains(path), "\(what): the error names \(path): \(r)", sourceLocation: sourceLocation)
        #expect(r.stderr.contains("symbolic link"), "\(what): says why: \(r)", sourceLocation: sourceLocation)
    }

    @Test(
        "a symlink replacing a metadata path or a document folder of the remote: push, pull and sync stop naming it, nothing outside is touched, verify reports it",
        arguments: Layout.allCases, Place.allCases)
    func symlinkedPath(_ layout: Layout, _ place: Place) throws {
        let s = Self.setUp(layout, "symlink-\(layout)-\(place)")
        let planted = Self.paths(place, layout, idA: s.idA)
        for path in planted { Self.plant(path, remote: s.box.remote, canary: s.canary) }
        let before = Files.tree(s.canary, skipMetadata: false)
        let listingBefore = Files.listing(s.canary)
        // What the path is named by in an error (all 256 prefixes: any of them).
        let named = place == .objectPrefixes ? ".docsync/objects/" : planted[0]

        // A push with a changed and a new document in the linked folder: objects, a
        // commit (or feed line), the view and the replica's record would all be written.
        s.a.write("docs/one.json", s.a.read("docs/one.json")!.replacing("\"one\"", with: "\"one-2\""))
        s.a.write("docs/three.json", "{\"v\": \"three\"}\n")
        Self.expectRefused(s.a.run("push"), naming: named, "push")
        if !place.isDocument {
            // A pull reads the metadata: it stops before reading anything through the link.
            Self.expectRefused(s.b.run("pull"), naming: named, "pull")
        }
        s.b.write("docs/two.json", s.b.read("docs/two.json")!.replacing("\"two\"", with: "\"two-2\""))
        Self.expectRefused(s.b.run("sync"), naming: named, "sync")

        #expect(
            Self.changed(before, Files.tree(s.canary, skipMetadata: false)) == [],
            "the folder outside is byte for byte as it was")
        #expect(
            Set(Files.listing(s.canary)).subtracting(listingBefore).sorted() == [],
            "nothing was created in the folder outside")

        let verify = s.a.run("verify")
        #expect(verify.exit != 0, "verify reports the symlink: \(verify)")
        #expect((verify.stdout + verify.stderr).contains(named), "verify names \(named): \(verify)")
        #expect(Self.changed(before, Files.tree(s.canary, skipMetadata: false)) == [])
    }

    /// The paths whose bytes differ between two trees (added, removed or changed).
    static func changed(_ a: [String: [UInt8]], _ b: [String: [UInt8]]) -> [String] {
        Set(a.keys).union(b.keys).filter { a[$0] != b[$0] }.sorted()
    }

    @Test(
        "verify reports a symlink anywhere under the remote's root, even one no run reads", arguments: Layout.allCases)
    func verifyReportsAnySymlink(_ layout: Layout) throws {
        let s = Self.setUp(layout, "symlink-verify-\(layout)")
        #expect(s.a.run("verify").exit == 0)
        try FileManager.default.createSymbolicLink(
            atPath: s.box.remote + "/docs/elsewhere", withDestinationPath: s.canary)
        let verify = s.a.run("verify")
        #expect(verify.exit == 1, "\(verify)")
        #expect((verify.stdout + verify.stderr).contains("docs/elsewhere"), "\(verify)")
    }
}
