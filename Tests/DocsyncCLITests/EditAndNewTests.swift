// `docsync edit` and `docsync new` through the built binary: editors are shell scripts
// (sed, printf), the terminal case runs under `script -qec`.

import Foundation
import Testing

@Suite("edit and new", .serialized)
struct EditAndNewTests {
    /// Writes an executable editor script into the sandbox and returns its path.
    static func editor(_ box: Sandbox, _ name: String, _ body: String) -> String {
        let path = box.path(name)
        try! Data(("#!/bin/sh\n" + body + "\n").utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o755)
        return path
    }

    @Test(
        "a valid edit replaces the record, is recorded with a new changesetId and pushed by the next sync"
    )
    func validEdit() {
        let box = Sandbox()
        let a = box.initReplica(
            "A", files: ["ada.json": "{\n  \"name\": \"Ada\",\n  \"phone\": \"555-0100\"\n}\n"])
        a.sync()
        let before = a.changesetId("ada.json")
        let ed = Self.editor(box, "ed.sh", #"sed -i 's/555-0100/555-0199/' "$1""#)
        let r = a.run(["edit", "ada.json"], env: ["VISUAL": "", "EDITOR": ed])
        #expect(r.exit == 0, r.comment)
        #expect(a.json("ada.json")?["phone"] as? String == "555-0199")
        #expect(a.changesetId("ada.json") != before, "an edit gets a new changesetId")
        #expect(a.run("log", "--pending").stdout.contains("ada.json"), "the edit is journaled")
        a.sync()
        #expect(
            Files.bytes(box.remote + "/ada.json").flatMap(JSONHelp.object)?["phone"] as? String
                == "555-0199")
        // VISUAL wins over EDITOR; an unchanged edit changes nothing; the record by refId.
        let journal = Files.bytes(a.journal)
        let noop = Self.editor(box, "noop.sh", "true")
        let same = a.run(["edit", a.refId("ada.json")!], env: ["VISUAL": noop, "EDITOR": ed])
        #expect(same.exit == 0 && same.stdout.contains("No changes"), same.comment)
        #expect(Files.bytes(a.journal) == journal, "an unchanged edit records nothing")
        let json = a.run(["edit", "ada.json", "--json"], env: ["VISUAL": noop])
        let object = JSONHelp.parse(json.stdout) as? [String: Any]
        #expect(
            object?["schemaVersion"] as? Int == 1 && object?["outcome"] as? String == "unchanged",
            json.comment)
    }

    @Test(
        "without a terminal, invalid JSON or a changed refId is refused: exit 1, record unchanged, text kept aside"
    )
    func invalidEditRefused() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["a.json": "{\"v\": 1}\n"])
        a.sync()
        let before = a.bytes("a.json")
        let broken = Self.editor(box, "broken.sh", #"printf '{\n  "v": 2,\n}\n' > "$1""#)
        let r = a.run(["edit", "a.json"], env: ["VISUAL": broken])
        #expect(r.exit == 1, r.comment)
        #expect(r.stderr.contains("a.json:3:1:"), "line:col of the problem: \(r.comment)")
        #expect(a.bytes("a.json") == before)
        let rejected = Files.list(a.path(".docsync/rejected"), skipMetadata: false)
        #expect(
            rejected.count == 1 && rejected[0].hasPrefix("a.") && rejected[0].hasSuffix(".json"),
            "\(rejected)")
        #expect(
            Files.bytes(a.path(".docsync/rejected/" + rejected[0])) == Array("{\n  \"v\": 2,\n}\n".utf8))
        #expect(r.stderr.contains(".docsync/rejected/"), r.comment)

        let refChange = Self.editor(
            box, "ref.sh", #"sed -i 's/"refId": *"[^"]*"/"refId": "changed"/' "$1""#)
        let ref = a.run(["edit", "a.json"], env: ["VISUAL": refChange])
        #expect(ref.exit == 1 && ref.stderr.contains("refId"), ref.comment)
        #expect(a.bytes("a.json") == before)
        let csChange = Self.editor(
            box, "cs.sh", #"sed -i 's/"changesetId": *"[^"]*"/"changesetId": "mine"/' "$1""#)
        let cs = a.run(["edit", "a.json"], env: ["VISUAL": csChange])
        #expect(cs.exit == 1 && cs.stderr.contains("changesetId"), cs.comment)
        #expect(a.bytes("a.json") == before)
        #expect(a.run("status").stdout.contains("Nothing to sync"))
        let missing = a.run(["edit", "nope.json"], env: ["VISUAL": broken])
        #expect(missing.exit == 1 && missing.stderr.contains("nope.json"), missing.comment)
    }

    /// An editor that breaks the JSON on its first run and, on its second (over the broken
    /// text), writes a valid edit of the original (`"v": 2`); `count` holds how often it ran.
    static func breaksThenFixes(_ box: Sandbox) -> (editor: String, count: String) {
        let count = box.path("count")
        let ed = editor(
            box, "twice.sh",
            """
            n=$(cat '\(count)' 2>/dev/null || echo 0); n=$((n+1)); echo $n > '\(count)'
            if [ $n -eq 1 ]; then cp "$1" '\(count).orig'; printf '{"v": ' > "$1"; else sed 's/"v": *1/"v": 2/' '\(count).orig' > "$1"; fi
            """)
        return (ed, count)
    }

    @Test("on a terminal a refused edit shows line:col and answering e re-opens the editor")
    func reopenOnTerminal() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["a.json": "{\"v\": 1}\n"])
        a.sync()
        let (ed, count) = Self.breaksThenFixes(box)
        let r = PTY.run(["edit", "a.json"], in: a.root, env: ["VISUAL": ed], input: "e\n")
        #expect(r.exit == 0, r.comment)
        #expect(r.stdout.contains("(e)dit again"), r.comment)
        #expect(r.stdout.contains("a.json:1:7:"), r.comment)
        #expect(
            (try? String(contentsOfFile: count, encoding: .utf8))?.trimmingCharacters(
                in: .whitespacesAndNewlines) == "2")
        #expect(a.json("a.json")?["v"] as? Int == 2, r.comment)
    }

    @Test("on a terminal the refusal prompt asks again on an answer that is neither e nor k")
    func promptAsksAgain() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["a.json": "{\"v\": 1}\n"])
        a.sync()
        let (ed, _) = Self.breaksThenFixes(box)
        // A stray "y" used to be taken as "keep", throwing the edit away.
        let r = PTY.run(["edit", "a.json"], in: a.root, env: ["VISUAL": ed], input: "y\ne\n")
        #expect(r.exit == 0, r.comment)
        #expect(r.stdout.contains("Please answer e (edit again) or k"), r.comment)
        #expect(a.json("a.json")?["v"] as? Int == 2, "the second answer re-opened the editor: \(r)")
    }

    @Test("an editor that reads the keyboard runs in the terminal's foreground and is not stopped")
    func editorReadsTheTerminal() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["a.json": "{\"v\": 1}\n"])
        a.sync()
        // Like vi: the editor reads the terminal. Started in a process group of its own it
        // would be stopped by SIGTTIN and `edit` would never return (timeout: exit 124).
        let ed = Self.editor(
            box, "reads-tty.sh",
            """
            read answer < /dev/tty
            sed "s/\\"v\\": *1/\\"v\\": \\"$answer\\"/" "$1" > "$1.new" && mv "$1.new" "$1"
            """)
        let command = ([CLI.binary, "edit", "a.json"]).map(PTY.quote).joined(separator: " ")
        let shell = "printf 'typed\\n' | timeout 60 script -qec \(PTY.quote(command)) /dev/null"
        let r = CLI.runTool("/bin/sh", ["-c", shell], in: a.root, env: ["VISUAL": ed])
        #expect(r.exit == 0, "exit 124 means the editor was stopped waiting for the terminal: \(r.comment)")
        #expect(a.json("a.json")?["v"] as? String == "typed", r.comment)
    }

    @Test("the copy left by a killed edit is kept in .docsync/rejected/ by the next edit, never deleted")
    func leftoverCopyOfAKilledEditIsKept() throws {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["a.json": "{\"v\": 1}\n"])
        a.sync()
        // What a killed `edit` leaves: its copy, named with a process id that no longer runs.
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        let tmp = a.root + "/.docsync/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        let saved = "{\"v\": \"typed before the kill\"}"
        try Data(saved.utf8).write(to: URL(fileURLWithPath: tmp + "/a.\(gone.processIdentifier).json"))
        // And a copy of an edit still running (this test's own process): left alone.
        let live = tmp + "/a.\(getpid()).json"
        try Data("{}".utf8).write(to: URL(fileURLWithPath: live))

        let ed = Self.editor(box, "noop.sh", "true")
        let r = a.run(["edit", "a.json"], env: ["VISUAL": ed])
        #expect(r.exit == 0, r.comment)
        #expect(r.stderr.contains("did not finish; its text is kept in"), r.comment)
        let rejected = try FileManager.default.contentsOfDirectory(atPath: a.root + "/.docsync/rejected")
        #expect(rejected.count == 1, "\(rejected)")
        let keptText = try String(contentsOfFile: a.root + "/.docsync/rejected/" + rejected[0], encoding: .utf8)
        #expect(keptText == saved)
        #expect(FileManager.default.fileExists(atPath: live), "a running edit's copy stays")
    }

    @Test(
        "refused texts never overwrite each other: two killed edits' copies and three refused edits in one second are five files"
    )
    func rejectedTextsAreNeverOverwritten() throws {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["a.json": "{\"v\": 1}\n"])
        a.sync()
        // Two copies of killed edits of the same record: kept by one run, in the same instant.
        let tmp = a.root + "/.docsync/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        var texts: Set<String> = []
        for n in 1...2 {
            let gone = Process()
            gone.executableURL = URL(fileURLWithPath: "/bin/true")
            try gone.run()
            gone.waitUntilExit()
            let text = "{\"v\": \"killed copy \(n)\"}"
            try Data(text.utf8).write(to: URL(fileURLWithPath: tmp + "/a.\(gone.processIdentifier).json"))
            texts.insert(text)
        }
        // Three refused edits in a row (well within one second).
        for n in 1...3 {
            let text = "{\"v\": \(n),}"
            let broken = Self.editor(box, "broken\(n).sh", "printf '%s' '\(text)' > \"$1\"")
            let r = a.run(["edit", "a.json"], env: ["VISUAL": broken])
            #expect(r.exit == 1, r.comment)
            texts.insert(text)
        }
        let folder = a.root + "/.docsync/rejected/"
        let kept = try FileManager.default.contentsOfDirectory(atPath: folder)
        #expect(kept.count == 5, "\(kept)")
        #expect(kept.allSatisfy { $0.hasPrefix("a.") && $0.hasSuffix(".json") }, "\(kept)")
        let keptTexts = Set(kept.compactMap { try? String(contentsOfFile: folder + $0, encoding: .utf8) })
        #expect(keptTexts == texts, "every refused text is kept: \(keptTexts)")
    }

    @Test("new creates a stamped record (empty or from a template) and refuses bad paths")
    func newRecord() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["a.json": "{\"v\": 1}\n"])
        a.sync()
        let r = a.run("new", "contacts/ada.json")
        #expect(r.exit == 0, r.comment)
        let made = a.json("contacts/ada.json")
        #expect(
            made?.count == 2 && (made?["refId"] as? String)?.isEmpty == false
                && made?["changesetId"] != nil, r.comment)

        let template = box.path("template.json")
        try! Data(#"{"refId": "old-ref", "changesetId": "old", "name": "", "tags": []}"#.utf8).write(
            to: URL(fileURLWithPath: template))
        let t = a.run("new", "bob.json", "--from", template, "--json")
        #expect(t.exit == 0, t.comment)
        let bob = a.json("bob.json")
        #expect(
            bob?["name"] as? String == "" && bob?["refId"] as? String != "old-ref"
                && bob?["changesetId"] as? String != "old")
        let report = JSONHelp.parse(t.stdout) as? [String: Any]
        #expect(
            report?["schemaVersion"] as? Int == 1
                && report?["refId"] as? String == bob?["refId"] as? String, t.comment)

        let before = a.documents()
        #expect(a.run("new", "a.json").exit == 1, "never overwrites")
        #expect(a.run("new", "../outside.json").exit == 1)
        #expect(a.run("new", ".docsync/x.json").exit == 1)
        #expect(a.run("new", "notes.txt").exit == 1)
        try! Data("[1]".utf8).write(to: URL(fileURLWithPath: template))
        let bad = a.run("new", "c.json", "--from", template)
        #expect(bad.exit == 1 && bad.stderr.contains("template.json"), bad.comment)
        #expect(a.documents() == before, "refused runs write nothing")

        let sync = a.sync()
        #expect(
            sync.stdout.contains("push    create  contacts/ada.json")
                && sync.stdout.contains("push    create  bob.json"), sync.comment)
        #expect(Files.bytes(box.remote + "/bob.json") == a.bytes("bob.json"))
    }
}
