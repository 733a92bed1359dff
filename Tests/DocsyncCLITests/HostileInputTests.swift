// Hostile and broken documents, generated at test time (nothing big is committed): deep
// nesting, a 50 MB document, duplicate keys, bad UTF-8, a BOM, CRLF, NUL bytes, numbers no
// double can hold, empty and binary files named .json. Each must get a clear
// `path:line:col: error:` (exit 1) or sync byte for byte; nothing is lost, and every other
// document still syncs. Run on both remote kinds.

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Reliability: hostile and broken documents")
struct HostileInputTests {
    enum Kind: String, CaseIterable, Sendable { case dir, git }

    /// A file that is a valid document: it must sync with only the ids added.
    static let valid: [String: [UInt8]] = [
        "deep/arrays.json": Array(
            ("{\"deep\": " + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
                + ", \"v\": \"deep\"}\n").utf8),
        "deep/objects.json": Array(
            ("{\"v\": \"deep-objects\", \"o\": " + String(repeating: "{\"a\":", count: 100_000) + "1"
                + String(repeating: "}", count: 100_000) + "}\n").utf8),
        "same-names-apart.json": Array("{\"a\": {\"a\": 1}, \"v\": \"apart\", \"b\": [{\"a\": 2}, {\"a\": 3}]}\n".utf8),
        "bom.json": [0xEF, 0xBB, 0xBF] + Array("{\n  \"v\": \"bom\"\n}\n".utf8),
        "crlf.json": Array("{\r\n  \"v\": \"crlf\",\r\n  \"list\": [1,\r\n    2]\r\n}\r\n".utf8),
        "crlf-tabs.json": Array("{\r\n\t\"refId\" : \"crlf-own-id\",\r\n\t\"v\" : \"crlf-tabs\"\r\n}".utf8),
        "numbers.json": Array(
            "{\n  \"big\": 1e400,\n  \"precise\": 12345678901234567890.1234567890,\n  \"negzero\": -0,\n  \"tiny\": 1E-400,\n  \"long\": 123456789012345678901234567890,\n  \"v\": \"numbers\"\n}\n"
                .utf8),
        "escapes.json": Array(
            #"{"v": "escapes", "nul": "a\u0000b", "surrogate": "\ud83d\ude00 \udead", "ctl": "\t\n\"\\\/"}"#.utf8) + [
                0x0A
            ],
        "unicode/ключ 🗝.json": Array(
            "{\"v\": \"unicode\", \"rtl\": \"שלום\", \"emoji\": \"👩‍👩‍👧\", \"combining\": \"e\u{301}\"}".utf8),
        "empty-object.json": Array("{}".utf8),
        "whitespace-around.json": Array("\n\n   {\"v\": \"ws\"}   \n\n".utf8)
    ]

    struct Invalid {
        var bytes: [UInt8]
        /// What stderr must say about the file: `path:line:col: error: reason…`.
        var message: String
    }

    /// Files that are not valid documents: reported, left untouched, not synced.
    static let invalid: [String: Invalid] = {
        var random = [UInt8](repeating: 0, count: 4096)
        var seed: UInt64 = 0x5EED
        for i in random.indices {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            random[i] = UInt8(truncatingIfNeeded: seed >> 56)
        }
        return [
            "deep-unclosed.json": Invalid(
                bytes: Array(("{\"deep\": " + String(repeating: "[", count: 100_000) + "\n").utf8),
                message: "deep-unclosed.json:2:1: error: unexpected end of file"),
            "deep-unclosed-objects.json": Invalid(
                bytes: Array(String(repeating: "{\"a\":", count: 100_000).utf8),
                message: "deep-unclosed-objects.json:1:500001: error: unexpected end of file"),
            "dup-refid.json": Invalid(
                bytes: Array("{\"refId\": \"x1\", \"refId\": \"x2\"}".utf8),
                message: "dup-refid.json:1:17: error: duplicate member name \"refId\""),
            "dup-changesetid.json": Invalid(
                bytes: Array("{\n\"changesetId\": \"a\",\n\"changesetId\": \"b\"\n}".utf8),
                message: "dup-changesetid.json:3:1: error: duplicate member name \"changesetId\""),
            // I-JSON (RFC 7493): a member name repeated in one object, at any depth; a merge
            // would silently keep one of them.
            "dupkeys.json": Invalid(
                bytes: Array("{\"a\": 1, \"a\": 2, \"v\": \"dup\"}\n".utf8),
                message: "dupkeys.json:1:10: error: duplicate member name \"a\""),
            "dupkeys-nested.json": Invalid(
                bytes: Array("{\"v\": \"nested\",\n \"o\": {\"b\": [{\"d\": 0, \"e\": 1, \"\\u0064\": 2}]}}\n".utf8),
                message: "dupkeys-nested.json:2:31: error: duplicate member name \"d\""),
            "bad-utf8.json": Invalid(
                bytes: Array("{\n  \"v\": \"bad".utf8) + [0xFF, 0xFE] + Array("\"\n}\n".utf8),
                message: "bad-utf8.json:2:12: error: invalid UTF-8"),
            "overlong-utf8.json": Invalid(
                bytes: Array("{\"v\": \"".utf8) + [0xC0, 0xAF] + Array("\"}".utf8),
                message: "overlong-utf8.json:1:8: error: invalid UTF-8"),
            "surrogate-utf8.json": Invalid(
                bytes: Array("{\"v\": \"".utf8) + [0xED, 0xA0, 0x80] + Array("\"}".utf8),
                message: "surrogate-utf8.json:1:8: error: invalid UTF-8"),
            "cut-utf8.json": Invalid(
                bytes: Array("{\"v\": \"é".utf8).dropLast(),
                message: "cut-utf8.json:1:8: error: invalid UTF-8"),
            "bom-only.json": Invalid(bytes: [0xEF, 0xBB, 0xBF], message: "bom-only.json:1:1: error: empty file"),
            "nul-after.json": Invalid(
                bytes: Array("{\"v\": 1}".utf8) + [0, 0x0A], message: "nul-after.json:1:9: error: unexpected NUL byte"),
            "nul-inside.json": Invalid(
                bytes: Array("{\"v\": \"a".utf8) + [0] + Array("b\"}".utf8),
                message: "nul-inside.json:1:9: error: control character in string"),
            "empty.json": Invalid(bytes: [], message: "empty.json:1:1: error: empty file"),
            "blank.json": Invalid(
                bytes: Array(" \r\n\t\n".utf8), message: "blank.json:3:1: error: file contains only whitespace"),
            "binary-png.json": Invalid(
                bytes: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + random,
                message: "binary-png.json:1:1: error:"),
            "binary-zeros.json": Invalid(
                bytes: [UInt8](repeating: 0, count: 1024), message: "binary-zeros.json:1:1: error: unexpected NUL byte"),
            "crlf-broken.json": Invalid(
                bytes: Array("{\r\n  \"a\": 1,\r\n  \"b\": ,\r\n}\r\n".utf8), message: "crlf-broken.json:3:8: error:"),
            "huge-number-array.json": Invalid(
                bytes: Array("[1e400]".utf8), message: "huge-number-array.json:1:1: error: top-level value is an array"),
            "not-a-number.json": Invalid(bytes: Array("{\"n\": NaN}".utf8), message: "not-a-number.json:1:7: error:")
        ]
    }()

    @Test(
        "every hostile file next to a good one: invalid ones reported path:line:col and untouched (exit 1), valid ones synced byte for byte",
        arguments: Kind.allCases)
    func hostileFiles(_ kind: Kind) {
        let box = Sandbox("hostile-\(kind)")
        let remote = Reliability.remote(box, git: kind == .git)
        let a = box.replica("A")
        a.write("good.json", "{\"v\": \"good\"}\n")
        a.write("victim.json", "{\n  \"v\": \"victim\"\n}\n")
        #expect(CLI.run(["init", "--remote", remote, "--name", "A", "A"], in: box.root).exit == 0)
        a.sync()
        let victimSynced = a.bytes("victim.json")!
        let b = box.replica("B")
        #expect(CLI.run(["clone", "--name", "B", remote, "B"], in: box.root).exit == 0)

        for (path, bytes) in Self.valid { a.writeBytes(path, bytes) }
        for (path, bad) in Self.invalid { a.writeBytes(path, bad.bytes) }
        // A synced document emptied by a crashed editor is not a deletion.
        a.writeBytes("victim.json", [])
        a.write("good.json", "{\"v\": \"good-2\"}\n")

        let r = a.run("sync")
        #expect(r.exit == 1, r.comment)
        for (path, bad) in Self.invalid.sorted(by: { $0.key < $1.key }) {
            #expect(r.stderr.contains(bad.message), "expected '\(bad.message)' on stderr: \(r.stderr)")
            #expect(a.bytes(path) == bad.bytes, "\(path) must be left byte for byte as it was")
        }
        #expect(r.stderr.contains("victim.json:1:1: error: empty file"), r.comment)
        #expect(r.stderr.contains("\(Self.invalid.count + 1) files are not valid documents"), r.comment)
        for (path, original) in Self.valid {
            let stamped = a.bytes(path) ?? []
            let ids = Reliability.ids(stamped)
            #expect(ids != nil, "\(path) was not stamped")
            if let ids, path != "crlf-tabs.json" {
                #expect(
                    Stamping.onlyIdsInserted(
                        original: original, stamped: stamped, refId: ids.refId, changesetId: ids.changesetId),
                    "\(path): only the ids may be added")
            }
        }
        // Own refId kept, changesetId inserted after it with the file's CRLF and tab layout.
        #expect(
            String(decoding: a.bytes("crlf-tabs.json")!, as: UTF8.self).hasPrefix(
                "{\r\n\t\"refId\" : \"crlf-own-id\",\r\n\t\"changesetId\" : \""))
        #expect(a.bytes("bom.json")!.starts(with: [0xEF, 0xBB, 0xBF]))

        // The other side receives exactly the valid documents, byte for byte, and keeps
        // the emptied one as it was.
        let pulled = b.run("sync")
        #expect(pulled.exit == 0, pulled.comment)
        var expected = Set(Self.valid.keys)
        expected.formUnion(["good.json", "victim.json"])
        #expect(Set(b.documents().keys) == expected)
        for path in Self.valid.keys { #expect(b.bytes(path) == a.bytes(path), "\(path) differs on B") }
        #expect(b.bytes("victim.json") == victimSynced, "an emptied file is not a deletion and not an update")
        #expect(b.json("good.json")?["v"] as? String == "good-2")
        if kind == .dir {
            for path in Self.invalid.keys { #expect(!FileManager.default.fileExists(atPath: box.remote + "/" + path)) }
        } else {
            Reliability.fsck(remote)
        }

        // status and verify name the files and change nothing.
        let status = a.run("status")
        #expect(status.exit == 1 && status.stdout.contains("deep-unclosed.json:2:1:"), status.comment)
        let verify = a.run("verify")
        #expect(verify.exit == 1 && (verify.stdout + verify.stderr).contains("bad-utf8.json"), verify.comment)
        for (path, bad) in Self.invalid { #expect(a.bytes(path) == bad.bytes, "\(path) changed by status/verify") }

        // Fixed: everything syncs, the restored victim too.
        for path in Self.invalid.keys { a.write(path, "{\"v\": \"fixed \(path)\"}\n") }
        a.writeBytes("victim.json", victimSynced)
        let fixed = a.run("sync")
        #expect(fixed.exit == 0, fixed.comment)
        #expect(b.run("sync").exit == 0)
        #expect(b.documents() == a.documents())
        #expect(b.json("victim.json")?["v"] as? String == "victim")
        for r in [a, b] {
            let v = r.run("verify")
            #expect(v.exit == 0, v.comment)
        }
        Reliability.figure("hostile kind=\(kind.rawValue) invalid=\(Self.invalid.count + 1) valid=\(Self.valid.count)")
    }

    @Test(
        "exact numbers, CRLF and a BOM survive a field merge of edits to different fields on two replicas",
        arguments: Kind.allCases)
    func exactThroughMerge(_ kind: Kind) {
        let box = Sandbox("exact-merge-\(kind)")
        let remote = Reliability.remote(box, git: kind == .git)
        let a = box.replica("A")
        let numbers =
            "{\n  \"big\": 1e400,\n  \"precise\": 12345678901234567890.1234567890,\n  \"negzero\": -0,\n  \"tiny\": 1E-400,\n  \"v\": \"n0\",\n  \"w\": \"n0\"\n}\n"
        a.write("numbers.json", numbers)
        a.writeBytes("crlf.json", Array("{\r\n  \"v\": \"c0\",\r\n  \"w\": \"c0\",\r\n  \"n\": 1.000\r\n}\r\n".utf8))
        a.writeBytes("bom.json", [0xEF, 0xBB, 0xBF] + Array("{\n  \"v\": \"b0\",\n  \"w\": \"b0\"\n}\n".utf8))
        #expect(CLI.run(["init", "--remote", remote, "--name", "A", "A"], in: box.root).exit == 0)
        a.sync()
        #expect(CLI.run(["clone", "--name", "B", remote, "B"], in: box.root).exit == 0)
        let b = box.replica("B")
        for (file, tag) in [("numbers.json", "n"), ("crlf.json", "c"), ("bom.json", "b")] {
            a.writeBytes(file, Array(a.read(file)!.replacing("\"v\": \"\(tag)0\"", with: "\"v\": \"\(tag)-A\"").utf8))
            b.writeBytes(file, Array(b.read(file)!.replacing("\"w\": \"\(tag)0\"", with: "\"w\": \"\(tag)-B\"").utf8))
        }
        a.sync()
        let merged = b.run("sync")
        #expect(merged.exit == 0, merged.comment)
        a.sync()
        #expect(a.documents() == b.documents())
        for r in [a, b] { #expect(r.conflictCopies().isEmpty, "different fields: no conflict in \(r.root)") }

        let text = b.read("numbers.json") ?? ""
        for literal in [
            "\"big\": 1e400", "\"precise\": 12345678901234567890.1234567890", "\"negzero\": -0", "\"tiny\": 1E-400",
            "\"v\": \"n-A\"", "\"w\": \"n-B\""
        ] {
            #expect(text.contains(literal), "\(literal) must survive the merge exactly: \(text)")
        }
        let crlf = b.bytes("crlf.json") ?? []
        let crlfText = String(decoding: crlf, as: UTF8.self)
        #expect(
            crlfText.contains("\"v\": \"c-A\"") && crlfText.contains("\"w\": \"c-B\"")
                && crlfText.contains("\"n\": 1.000"), "\(crlfText)")
        let bareLF = zip([0] + crlf, crlf).filter { $0.1 == 0x0A && $0.0 != 0x0D }.count
        #expect(
            bareLF == 0 && crlf.contains(0x0D),
            "a merged CRLF document keeps CRLF line endings: \(crlfText.debugDescription)")
        let bom = b.bytes("bom.json") ?? []
        #expect(bom.starts(with: [0xEF, 0xBB, 0xBF]), "a merged document keeps its byte order mark")
        let bomText = String(decoding: bom, as: UTF8.self)
        #expect(bomText.contains("\"v\": \"b-A\"") && bomText.contains("\"w\": \"b-B\""), "\(bomText)")
        for r in [a, b] {
            let v = r.run("verify")
            #expect(v.exit == 0, v.comment)
        }
    }

    @Test(
        "a 100,000-deep document changed on both sides: too deep to merge field by field, so the later version wins whole and the other is kept",
        arguments: Kind.allCases)
    func deepDocumentChangedOnBothSides(_ kind: Kind) {
        let box = Sandbox("deep-both-\(kind)")
        let remote = Reliability.remote(box, git: kind == .git)
        let a = box.replica("A")
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        a.write("deep.json", "{\"v\": \"v0\", \"w\": \"w0\", \"deep\": \(deep)}\n")
        #expect(CLI.run(["init", "--remote", remote, "--name", "A", "A"], in: box.root).exit == 0)
        a.sync()
        #expect(CLI.run(["clone", "--name", "B", remote, "B"], in: box.root).exit == 0)
        let b = box.replica("B")
        a.write("deep.json", a.read("deep.json")!.replacing("\"v\": \"v0\"", with: "\"v\": \"v-A\""))
        SaveClock.shared.stamp(a.path("deep.json"))
        b.write("deep.json", b.read("deep.json")!.replacing("\"w\": \"w0\"", with: "\"w\": \"w-B\""))
        SaveClock.shared.stamp(b.path("deep.json"))  // B saves later: B's version wins whole
        a.sync()
        let r = b.run("sync")
        #expect(r.exit == 3, "a conflict, not a crash: \(r)")
        #expect(r.stdout.contains("too deep to merge"), r.comment)
        let conflicts = b.run("conflicts")
        #expect(conflicts.exit == 0 && conflicts.stdout.contains("deep.json"), conflicts.comment)
        #expect(a.run("sync").exit == 3, "A's version lost at B: A hears of it")
        #expect(a.documents() == b.documents())
        // Nothing lost: one side's edit is live, the other's is in B's conflict store.
        let kept =
            (b.read("deep.json") ?? "") + b.conflictCopies().values.map { String(decoding: $0, as: UTF8.self) }.joined()
        #expect(kept.contains("\"v\": \"v-A\"") && kept.contains("\"w\": \"w-B\""))
        #expect(b.run("verify").exit == 0)
    }

    /// Runs docsync under a tiny python wrapper that reports the child's peak RSS.
    static func measured(_ args: [String], in dir: String) -> (RunResult, megabytes: Double) {
        let script =
            "import resource,subprocess,sys\nr=subprocess.run(sys.argv[1:])\nprint('MAXRSS_KB', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, flush=True)\nsys.exit(r.returncode)"
        let r = CLI.runTool("/usr/bin/python3", ["-c", script, CLI.binary] + args, in: dir)
        let kb =
            r.stdout.split(separator: "\n").last { $0.hasPrefix("MAXRSS_KB ") }.flatMap { Double($0.dropFirst(10)) }
            ?? -1
        return (r, kb / 1024)
    }

    @Test("a 50 MB document syncs with sane memory, next to small ones", arguments: Kind.allCases)
    func fiftyMegabytes(_ kind: Kind) {
        let box = Sandbox("big-\(kind)")
        let remote = Reliability.remote(box, git: kind == .git)
        let a = box.replica("A")
        var text = "{\n  \"v\": \"big-0\",\n  \"w\": \"big-0\",\n  \"items\": [\n"
        text.reserveCapacity(52_000_000)
        let filler = String(repeating: "x", count: 200)
        var i = 0
        while text.utf8.count < 50 * 1024 * 1024 {
            text += "    {\"id\": \(i), \"name\": \"item \(i)\", \"price\": 1\(i).10, \"text\": \"\(filler)\"},\n"
            i += 1
        }
        text += "    {\"id\": -1}\n  ]\n}\n"
        a.write("big.json", text)
        a.write("small.json", "{\"v\": \"small\"}\n")
        #expect(CLI.run(["init", "--remote", remote, "--name", "A", "A"], in: box.root).exit == 0)
        let started = Date()
        let (push, pushMB) = Self.measured(["sync"], in: a.root)
        let seconds = Date().timeIntervalSince(started)
        #expect(push.exit == 0, push.comment)
        #expect(pushMB > 0 && pushMB < 512, "peak memory of a 50 MB sync: \(pushMB) MB")
        let ids = Reliability.ids(a.bytes("big.json")!)
        #expect(
            ids != nil
                && Stamping.onlyIdsInserted(
                    original: Array(text.utf8), stamped: a.bytes("big.json")!,
                    refId: ids!.refId, changesetId: ids!.changesetId)
        )
        let (clone, cloneMB) = Self.measured(["clone", "--name", "B", remote, box.path("B")], in: box.root)
        #expect(clone.exit == 0, clone.comment)
        #expect(cloneMB > 0 && cloneMB < 512, "peak memory of a 50 MB clone: \(cloneMB) MB")
        let b = box.replica("B")
        #expect(b.bytes("big.json") == a.bytes("big.json"))
        #expect(b.bytes("small.json") == a.bytes("small.json"))
        var mergeFigure = ""
        if Reliability.long {
            // Both sides edit a different field of the 50 MB document: a field merge.
            a.write("big.json", a.read("big.json")!.replacing("\"v\": \"big-0\"", with: "\"v\": \"big-A\""))
            b.write("big.json", b.read("big.json")!.replacing("\"w\": \"big-0\"", with: "\"w\": \"big-B\""))
            a.sync()
            let (merge, mergeMB) = Self.measured(["sync"], in: b.root)
            #expect(merge.exit == 0, merge.comment)
            #expect(mergeMB > 0 && mergeMB < 2048, "peak memory of a 50 MB field merge: \(mergeMB) MB")
            a.sync()
            #expect(a.bytes("big.json") == b.bytes("big.json"))
            #expect(
                b.json("big.json").map { ($0["v"] as? String, $0["w"] as? String) }.map { $0 == ("big-A", "big-B") }
                    ?? false)
            mergeFigure = " merge_rss_mb=\(Int(mergeMB))"
        }
        let verify = b.run("verify")
        #expect(verify.exit == 0, verify.comment)
        Reliability.figure(
            "hostile-big kind=\(kind.rawValue) bytes=\(text.utf8.count) sync_seconds=\(String(format: "%.1f", seconds)) sync_rss_mb=\(Int(pushMB)) clone_rss_mb=\(Int(cloneMB))\(mergeFigure)"
        )
    }

    @Test(
        "hostile files committed to the git remote with plain git are reported by name and skipped; the rest is pulled")
    func hostileFilesFromPlainGit() throws {
        let box = Sandbox("hostile-plain-git")
        let remote = Reliability.remote(box, git: true)
        let a = box.replica("A")
        a.write("good.json", "{\"v\": \"good\"}\n")
        #expect(CLI.run(["init", "--remote", remote, "--name", "A", "A"], in: box.root).exit == 0)
        a.sync()
        let work = box.path("plain")
        let env = Reliability.gitEnv.merging([
            "GIT_AUTHOR_NAME": "P", "GIT_AUTHOR_EMAIL": "p@example.com",
            "GIT_COMMITTER_NAME": "P", "GIT_COMMITTER_EMAIL": "p@example.com"
        ]) { $1 }
        #expect(CLI.runTool("/usr/bin/git", ["clone", "-q", remote, work], in: box.root, env: env).exit == 0)
        let plain = Replica(root: work)
        plain.writeBytes("binary.json", [0x89, 0x50, 0x4E, 0x47, 0x00, 0x01])
        plain.writeBytes("empty.json", [])
        plain.writeBytes(
            "deep.json",
            Array(
                ("{\"v\": \"deep\", \"d\": " + String(repeating: "[", count: 100_000)
                    + String(repeating: "]", count: 100_000) + "}").utf8))
        plain.write("new.json", "{\"v\": \"plain\"}\n")
        for args in [["add", "-A"], ["commit", "-q", "-m", "hostile"], ["push", "-q", "origin", "main"]] {
            let r = CLI.runTool("/usr/bin/git", args, in: work, env: env)
            #expect(r.exit == 0, r.comment)
        }
        let r = a.run("sync")
        #expect(r.exit == 1, r.comment)
        #expect(r.stderr.contains("binary.json:1:1:"), "the remote's invalid files are named: \(r)")
        #expect(r.stderr.contains("empty.json:1:1:"), r.comment)
        #expect(a.json("new.json")?["v"] as? String == "plain", "the valid new document is pulled")
        // (JSONSerialization cannot read 100,000 levels: look at the text.)
        #expect(
            a.read("deep.json")?.contains("\"v\": \"deep\"") == true
                && Reliability.ids(a.bytes("deep.json") ?? []) != nil,
            "a deep but valid document is pulled and adopted")
        #expect(!a.exists("binary.json") && !a.exists("empty.json"))
        #expect(a.json("good.json")?["v"] as? String == "good")
        let again = a.run("sync")
        #expect(again.exit == 0, again.comment)
        Reliability.fsck(remote)
    }
}

extension Reliability {
    /// The refId and changesetId a document carries.
    static func ids(_ bytes: [UInt8]) -> (refId: String, changesetId: String)? {
        var body = bytes
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body.removeFirst(3) }
        // JSONSerialization cannot read 100,000 levels; the ids are top-level members
        // near the start of the file in every case here.
        guard let ref = firstString(after: "\"refId\"", in: body),
            let cs = firstString(after: "\"changesetId\"", in: body)
        else { return nil }
        return (ref, cs)
    }

    private static func firstString(after key: String, in bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes.prefix(4096), as: UTF8.self)
        guard let keyRange = text.range(of: key) else { return nil }
        let rest = text[keyRange.upperBound...].drop {
            $0 == " " || $0 == ":" || $0 == "\t" || $0 == "\r" || $0 == "\n"
        }
        guard rest.first == "\"" else { return nil }
        return String(rest.dropFirst().prefix { $0 != "\"" })
    }
}
