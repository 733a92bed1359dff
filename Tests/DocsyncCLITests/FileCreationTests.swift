// How many files a first push creates per document, counted independently of docsync:
// strace(1) records every open with O_CREAT (a temporary file later renamed counts once).
// The floor (issue 23): a document without ids is created once in the tree (the stamped
// copy: a temporary file and a rename) and, on a folder remote, once more as its readable
// copy; everything else (objects, journal, state, commit) is written in batches, so it does
// not grow with the number of documents. That holds above GitPackWriter.looseLimit (100)
// new objects: below it a git push writes each object as a loose file, in the tree's git
// cache and in the remote. A file that already carries ids is written once too: a
// changesetId the tree has not recorded cannot be trusted to name this content, so the
// create stamps a new one.

import Foundation
import Testing

extension Prerequisite {
    static let strace = programs("strace")
}

@Suite("File creations per document on a first push", .enabled(if: Prerequisite.strace.runsHere))
struct FileCreationTests {
    enum Kind: String, CaseIterable, Sendable { case dir, git }

    /// Files created during one run, by where: the tree's documents, the remote's
    /// documents (a folder remote's readable copies), and everything else.
    struct Creations: CustomStringConvertible {
        var treeDocuments = 0
        var remoteDocuments = 0
        var other: [String] = []
        var description: String {
            "tree \(treeDocuments), remote \(remoteDocuments), other \(other.count): \(other.prefix(8))"
        }
    }

    /// Writes `count` records in ten folders of `r`'s tree.
    static func writeRecords(_ r: Replica, count: Int) {
        for i in 0..<count {
            r.write("g\(i % 10)/r\(i).json", "{\n  \"name\": \"record \(i)\",\n  \"n\": \(i)\n}\n")
        }
    }

    /// Runs `docsync sync` in `r` under strace and sorts the files it created.
    static func tracedSync(_ r: Replica, remoteRoot: String?, box: Sandbox) throws -> Creations {
        try Prerequisite.strace.require()
        let trace = box.path("trace-\(UUID().uuidString)")
        let run = CLI.runTool(
            "/usr/bin/strace",
            ["-f", "-qq", "-y", "-e", "trace=open,openat,creat", "-o", trace, CLI.binary, "sync", "--quiet"],
            in: r.root)
        #expect(run.exit == 0, "\(run)")
        let text = try String(contentsOfFile: trace, encoding: .utf8)
        var found = Creations()
        for line in text.split(separator: "\n") where line.contains("O_CREAT") || line.contains("creat(") {
            guard line.range(of: "= -1") == nil, let open = line.firstIndex(of: "\""),
                let close = line[line.index(after: open)...].firstIndex(of: "\"")
            else { continue }
            var path = String(line[line.index(after: open)..<close])
            if !path.hasPrefix("/") {
                // `openat(3</the/folder>, "name", …)` (-y names a descriptor's file): a folder
                // remote opens below its root relative to each folder's descriptor.
                let head = line[..<open]
                if let lt = head.firstIndex(of: "<"), let gt = head[lt...].firstIndex(of: ">") {
                    path = String(head[head.index(after: lt)..<gt]) + "/" + path
                } else {
                    path = r.root + "/" + path
                }
            }
            if path.hasPrefix(r.root + "/") && !path.hasPrefix(r.root + "/.docsync/") {
                found.treeDocuments += 1
            } else if let remoteRoot, path.hasPrefix(remoteRoot + "/") && !path.hasPrefix(remoteRoot + "/.docsync/") {
                found.remoteDocuments += 1
            } else {
                found.other.append(path.replacingOccurrences(of: box.root, with: ""))
            }
        }
        return found
    }

    /// A first push of `count` records without ids to an empty remote of `kind`.
    static func firstPush(_ kind: Kind, count: Int) throws -> Creations {
        let box = Sandbox("creations-\(kind)-\(count)")
        let remote = Reliability.remote(box, git: kind == .git)
        let a = box.replica("A")
        writeRecords(a, count: count)
        #expect(CLI.run(["init", "--remote", remote, "--name", "A", "A"], in: box.root).exit == 0)
        return try tracedSync(a, remoteRoot: kind == .dir ? box.remote : nil, box: box)
    }

    @Test(
        "documents without ids: one creation each in the tree, one more on a folder remote, the rest batched",
        arguments: Kind.allCases)
    func floorWithoutIds(_ kind: Kind) throws {
        let small = try Self.firstPush(kind, count: 120)
        let large = try Self.firstPush(kind, count: 360)
        for (count, found) in [(120, small), (360, large)] {
            #expect(found.treeDocuments == count, "one stamped copy per document: \(found)")
            #expect(found.remoteDocuments == (kind == .dir ? count : 0), "the readable copies: \(found)")
        }
        // Three times the documents, the same batched writes (give or take a pack's
        // index or a loose object on either side of the pack threshold).
        #expect(
            large.other.count <= small.other.count + 4, "batched writes grow with the documents: \(small) / \(large)")
        Reliability.figure(
            "creations kind=\(kind.rawValue) docs=120 tree=\(small.treeDocuments) remote=\(small.remoteDocuments) "
                + "other=\(small.other.count) docs=360 tree=\(large.treeDocuments) remote=\(large.remoteDocuments) "
                + "other=\(large.other.count)")
    }
}
