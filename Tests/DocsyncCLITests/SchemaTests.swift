import Foundation
import Testing

/// Records that must satisfy a JSON Schema (`schema.<glob>`, a `"$schema"` member, `docsync
/// check`), driven through the built binary on both remote kinds. The rule under test
/// (docs/SCHEMA.md#in-sync): a new version that fails its schema is treated like invalid
/// JSON — reported with every error, exit 1, never pushed, never overwritten by a pull —
/// and a pulled version that fails is written and reported.
@Suite("JSON Schema: records that fail are held, reported and checked")
struct SchemaTests {
    enum Kind: String, CaseIterable, Sendable { case dir, git }

    static let contactSchema = """
        {
          "$schema": "https://json-schema.org/draft/2020-12/schema",
          "type": "object",
          "required": ["name"],
          "properties": {
            "name": {"type": "string"},
            "phone": {"type": "string", "pattern": "^[0-9 +]+$"},
            "email": {"type": "string", "format": "email"}
          }
        }

        """

    /// A with contacts/** bound to schemas/contact.json (the schema travels with the tree).
    func setUp(_ box: Sandbox, _ kind: Kind, files: [String: String]) -> (remote: String, a: Replica) {
        let remote = Reliability.remote(box, git: kind == .git)
        let a = box.replica("A")
        a.write("schemas/contact.json", Self.contactSchema)
        for (path, text) in files { a.write(path, text) }
        #expect(CLI.run(["init", "--remote", remote, "--name", "A", "A"], in: box.root).exit == 0)
        a.ok("config", "schema.contacts/**", "schemas/contact.json")
        return (remote, a)
    }

    func clone(_ box: Sandbox, _ remote: String, _ name: String) -> Replica {
        let r = CLI.run(["clone", "--name", name, remote, name], in: box.root)
        #expect(r.exit == 0, r.comment)
        return box.replica(name)
    }

    /// The documents on the remote, by path (read through a fresh clone, so it holds for both kinds).
    func remoteDocuments(_ box: Sandbox, _ remote: String) -> [String: [UInt8]] {
        let probe = clone(box, remote, "probe-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(atPath: probe.root) }
        return probe.documents()
    }

    @Test(
        "a record that fails its schema: every error as path: /pointer: reason, exit 1, untouched, not pushed; the rest syncs; the fix syncs",
        arguments: Kind.allCases)
    func failingRecordIsHeld(_ kind: Kind) {
        let box = Sandbox("schema-held-\(kind)")
        let bad = "{\"name\": 5, \"phone\": \"call me\", \"email\": \"nope\"}\n"
        let (remote, a) = setUp(
            box, kind,
            files: [
                "contacts/bob.json": bad, "contacts/ann.json": "{\"name\": \"Ann\"}\n", "notes/n.json": "{\"x\": 1}\n"
            ])
        let r = a.run("sync")
        #expect(r.exit == 1, r.comment)
        for line in [
            "contacts/bob.json: error: /name: expected string, found integer",
            "contacts/bob.json: error: /phone: does not match the pattern ^[0-9 +]+$",
            "contacts/bob.json: error: /email: not a valid email"
        ] {
            #expect(r.stderr.contains(line), "every error, not the first: \(line)\n\(r)")
        }
        #expect(r.stderr.contains("1 file is not a valid document"), "one file, three errors: \(r)")
        #expect(a.read("contacts/bob.json") == bad, "the failing record is left byte for byte (not even stamped)")
        #expect(a.refId("contacts/ann.json") != nil)
        let onRemote = remoteDocuments(box, remote)
        #expect(
            Set(onRemote.keys) == ["contacts/ann.json", "notes/n.json", "schemas/contact.json"],
            "everything else syncs: \(onRemote.keys.sorted())")

        let status = a.run("status")
        #expect(status.exit == 1, status.comment)
        #expect(status.stdout.contains("contacts/bob.json: /email: not a valid email"), status.comment)

        a.write("contacts/bob.json", "{\"name\": \"Bob\", \"phone\": \"+44 1\"}\n")
        let fixed = a.run("sync")
        #expect(fixed.exit == 0, fixed.comment)
        let b = clone(box, remote, "B")
        #expect(b.json("contacts/bob.json")?["name"] as? String == "Bob")
    }

    @Test(
        "a tracked record saved failing its schema is never overwritten by a pull: the remote edit waits and merges with the fix, no edit lost",
        arguments: Kind.allCases)
    func remoteEditWaitsForTheFix(_ kind: Kind) {
        let box = Sandbox("schema-wait-\(kind)")
        let (remote, a) = setUp(
            box, kind, files: ["contacts/ann.json": "{\n  \"name\": \"Ann\",\n  \"phone\": \"1\"\n}\n"])
        a.ok("sync")
        let b = clone(box, remote, "B")
        b.write("contacts/ann.json", b.read("contacts/ann.json")!.replacing("\"Ann\"", with: "\"Annie\""))
        b.ok("sync")

        let failing = a.read("contacts/ann.json")!.replacing("\"phone\": \"1\"", with: "\"phone\": \"one\"")
        a.write("contacts/ann.json", failing)
        let held = a.run("sync")
        #expect(held.exit == 1, held.comment)
        #expect(held.stderr.contains("contacts/ann.json: error: /phone: does not match the pattern"), held.comment)
        #expect(held.stdout.contains("waiting"), "the remote version waits aside: \(held)")
        #expect(a.read("contacts/ann.json") == failing, "the pull must not overwrite the user's unfinished edit")
        #expect(b.ok("sync").exit == 0)
        #expect(b.json("contacts/ann.json")?["phone"] as? String == "1", "the failing version never reached the remote")

        a.write("contacts/ann.json", failing.replacing("\"phone\": \"one\"", with: "\"phone\": \"2\""))
        let merged = a.run("sync")
        #expect(merged.exit == 0, merged.comment)
        #expect(
            a.json("contacts/ann.json")?["name"] as? String == "Annie",
            "B's edit is merged in, not lost: \(a.read("contacts/ann.json") ?? "")")
        #expect(a.json("contacts/ann.json")?["phone"] as? String == "2", "A's fix is kept")
        b.ok("sync")
        #expect(b.documents() == a.documents())
    }

    @Test(
        "a pulled record that fails this replica's schema is written and reported (exit 0); only a new local edit of it is held",
        arguments: Kind.allCases)
    func pulledFailureIsAppliedAndReported(_ kind: Kind) {
        let box = Sandbox("schema-pulled-\(kind)")
        let remote = Reliability.remote(box, git: kind == .git)
        let a = box.replica("A")
        a.write("contacts/cy.json", "{\"name\": \"Cy\"}\n")
        #expect(CLI.run(["init", "--remote", remote, "--name", "A", "A"], in: box.root).exit == 0)
        a.ok("sync")
        // B checks against a stricter schema than A: every contact needs an email.
        let b = clone(box, remote, "B")
        b.write("strict.json", "{\"type\": \"object\", \"required\": [\"name\", \"email\"]}\n")
        b.ok("config", "schema.contacts/**", "strict.json")
        a.write("contacts/cy.json", a.read("contacts/cy.json")!.replacing("\"Cy\"", with: "\"Cyril\""))
        a.ok("sync")
        let pulled = b.run("sync")
        #expect(pulled.exit == 0, pulled.comment)
        #expect(b.json("contacts/cy.json")?["name"] as? String == "Cyril", "applied all the same")
        #expect(
            pulled.stderr.contains("warning: pulled contacts/cy.json: (root): missing required property email"),
            pulled.comment)
        let again = b.run("sync")
        #expect(again.exit == 0, "an unchanged pulled version is not held on the next run: \(again)")

        // B's own edit that still fails is a new version: held.
        b.write("contacts/cy.json", b.read("contacts/cy.json")!.replacing("\"Cyril\"", with: "\"Cyrus\""))
        let edited = b.run("sync")
        #expect(edited.exit == 1, edited.comment)
        #expect(
            edited.stderr.contains("contacts/cy.json: error: (root): missing required property email"), edited.comment)
        a.ok("sync")
        #expect(a.json("contacts/cy.json")?["name"] as? String == "Cyril")
    }

    @Test(
        "a record's own \"$schema\" names a file relative to it, and wins over schema.<glob>; one outside the tree is refused; a URL is not fetched"
    )
    func schemaMember() {
        let box = Sandbox()
        let (_, a) = setUp(box, .dir, files: [:])
        a.write("schemas/loose.json", "{\"type\": \"object\"}\n")
        a.write(
            "schemas/priced.json",
            "{\"type\": \"object\", \"properties\": {\"price\": {\"$ref\": \"defs.json#/$defs/money\"}}}\n")
        a.write("schemas/defs.json", "{\"$defs\": {\"money\": {\"type\": \"number\", \"minimum\": 0}}}\n")
        // No name, but its own schema is the loose one: valid.
        a.write("contacts/x.json", "{\"$schema\": \"../schemas/loose.json\", \"phone\": \"?\"}\n")
        a.write("items/cheap.json", "{\"$schema\": \"../schemas/priced.json\", \"price\": -1}\n")
        a.write("items/away.json", "{\"$schema\": \"../../elsewhere.json\"}\n")
        a.write("items/url.json", "{\"$schema\": \"https://example.com/item.json\", \"price\": -1}\n")
        let r = a.run("sync")
        #expect(r.exit == 1, r.comment)
        #expect(!r.stderr.contains("contacts/x.json"), "its own $schema wins over schema.contacts/**: \(r)")
        #expect(a.refId("contacts/x.json") != nil)
        #expect(
            r.stderr.contains("items/cheap.json: error: /price: less than the minimum 0")
                || r.stderr.contains("items/cheap.json: error: /price:"),
            "a $ref to a file beside the schema is followed: \(r)")
        #expect(
            r.stderr.contains("items/away.json: error: its \"$schema\" ../../elsewhere.json is outside the tree"),
            r.comment)
        #expect(a.refId("items/url.json") != nil, "a URL $schema names no schema here, so the record syncs")
        let check = a.run("check", "items")
        #expect(check.exit == 1, check.comment)
        #expect(
            check.stderr.contains("items/url.json: its \"$schema\" is a URL, which docsync does not fetch"),
            check.comment)
    }

    @Test("config refuses a schema that is missing, not JSON, or of another draft, and keeps the config as it was")
    func configChecksTheSchema() {
        let box = Sandbox()
        let (_, a) = setUp(box, .dir, files: [:])
        a.write("broken.json", "{\"type\": \n")
        a.write("draft4.json", "{\"$schema\": \"http://json-schema.org/draft-04/schema#\"}\n")
        a.write("badref.json", "{\"$ref\": \"missing.json\"}\n")
        let cases: [(String, String)] = [
            ("nope.json", "no such file"), ("broken.json", "broken.json:2:1:"),
            ("draft4.json", "unsupported $schema http://json-schema.org/draft-04/schema#"),
            ("badref.json", "missing.json")
        ]
        for (file, message) in cases {
            let r = a.run("config", "schema.x/**", file)
            #expect(r.exit == 1, r.comment)
            #expect(r.stderr.contains("schema.x/**") && r.stderr.contains(message), "\(file): \(r)")
        }
        let list = a.ok("config", "--list")
        #expect(!list.stdout.contains("schema.x/**"), list.comment)
        #expect(list.stdout.contains("schema.contacts/**"), list.comment)
    }

    @Test("a schema set after a record synced does not hold the unchanged record; check still finds it")
    func schemaAddedLater() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["contacts/old.json": "{\"nom\": \"x\"}\n"])
        a.ok("sync")
        a.write("schemas/contact.json", Self.contactSchema)
        a.ok("config", "schema.contacts/**", "schemas/contact.json")
        let r = a.run("sync")
        #expect(r.exit == 0, "an unchanged synced version is not this replica's new edit: \(r)")
        let check = a.run("check")
        #expect(check.exit == 1, check.comment)
        #expect(
            check.stderr.contains("contacts/old.json: error: (root): missing required property name"), check.comment)
    }

    @Test(
        "docsync edit refuses an edit that fails the record's schema, at the failing member, with every error; the record is unchanged"
    )
    func editChecksTheSchema() {
        let box = Sandbox()
        let original = "{\n  \"name\": \"Ann\",\n  \"phone\": \"1\"\n}\n"
        let (_, a) = setUp(box, .dir, files: ["contacts/ann.json": original])
        a.ok("sync")
        let before = a.read("contacts/ann.json")
        let editor = EditAndNewTests.editor(box, "ed.sh", #"sed -i -e 's/"Ann"/5/' -e 's/"1"/"one"/' "$1""#)
        let r = a.run(["edit", "contacts/ann.json"], env: ["VISUAL": editor])
        #expect(r.exit == 1, r.comment)
        #expect(
            r.stderr.contains(
                "contacts/ann.json:4:11: error: fails its schema: /name: expected string, found integer; /phone: does not match the pattern"
            )
                || r.stderr.contains(
                    "fails its schema: /name: expected string, found integer; /phone: does not match the pattern"),
            r.comment)
        #expect(a.read("contacts/ann.json") == before, "a refused edit leaves the record as it was")
        #expect(r.stderr.contains(".docsync/rejected/"), "the refused text is kept: \(r)")
    }
}
