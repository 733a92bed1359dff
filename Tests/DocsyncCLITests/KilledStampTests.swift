// A run killed after it stamped a file, before it saved its clock: the id in the file is
// one it issued, and no later run may issue it again for other content (one changesetId
// names one content, everywhere). Found by the model check (folder seed 36113, step 299:
// a `resolve` SIGKILLed while recording, on a replica whose clock was hours behind).

import Foundation
import Testing

@Suite("A killed run's stamp is never issued again")
struct KilledStampTests {
    @Test(
        "an edit dated in the clock's past, stamped by a killed run, keeps its id alone: the next such edit gets another"
    )
    func killedStampNotReissued() throws {
        let box = Sandbox()
        // Two documents made with one save time: their versions share a millisecond.
        let old = Int(Date().timeIntervalSince1970) - 3_600
        let doc = { (v: String) in "{\n  \"v\": \"\(v)\"\n}\n" }
        let a = box.replica("A")
        a.write("d.json", doc("d0"))
        a.write("e.json", doc("e0"))
        setSaveTime(a.path("d.json"), old)
        setSaveTime(a.path("e.json"), old)
        #expect(CLI.run(["init", "--remote", box.remote, "--name", "A", "A"], in: box.root).exit == 0)
        #expect(a.run("sync").exit == 0)
        // A later version moves the clock on, so edits dated an hour ago are in its past.
        a.write("f.json", doc("f0"))
        #expect(a.run("sync").exit == 0)
        // d edited, dated before its version: the id takes the past sequence. The run dies
        // once it has written the id into the file.
        a.write("d.json", a.read("d.json")!.replacingOccurrences(of: "d0", with: "d1"))
        setSaveTime(a.path("d.json"), old - 100)
        let killed = a.run(["sync"], env: ["DOCSYNC_CRASH_AT": "record.after-stamp"])
        #expect(killed.exit == 137, "killed after the stamp: \(killed.comment)")
        let stamped = a.json("d.json")?["changesetId"] as? String
        #expect(a.run("sync").exit == 0, "the recovery sync records d as stamped")
        #expect(a.json("d.json")?["changesetId"] as? String == stamped, "d keeps the id in its file")
        // e edited the same way: dated in the same millisecond as d's edit.
        a.write("e.json", a.read("e.json")!.replacingOccurrences(of: "e0", with: "e1"))
        setSaveTime(a.path("e.json"), old - 100)
        #expect(a.run("sync").exit == 0)
        let e = a.json("e.json")?["changesetId"] as? String
        #expect(stamped != nil && e != nil)
        #expect(e != stamped, "one changesetId, two contents: d \(stamped ?? "?"), e \(e ?? "?")")
        let verify = a.run("verify")
        #expect(verify.exit == 0, verify.comment)
    }
}
