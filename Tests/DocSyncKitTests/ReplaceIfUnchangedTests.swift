import Foundation
import Testing

@testable import DocSyncKit

/// `FileSystem.replaceIfUnchanged`, the stamp's compare-and-swap against an editor, on
/// real files: a save made in the instant between the check and the swap survives.
@Suite struct ReplaceIfUnchangedTests {
    /// How the user's editor saves.
    enum Save: CaseIterable, Sendable { case inPlace, byRename }

    static func save(_ dir: TempFolder, _ name: String, _ text: String, _ how: Save) {
        switch how {
        case .inPlace: dir.write(name, text)
        case .byRename:
            dir.write(name + ".swp", text)
            #expect(rename(dir.sub(name + ".swp"), dir.sub(name)) == 0)
        }
    }

    /// Every name in the folder (the temporary files included).
    static func names(_ dir: TempFolder) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).sorted()
    }

    @Test func unchangedFileIsReplacedKeepingItsMode() throws {
        let dir = TempFolder("replace")
        dir.write("a.json", "{\"n\": 1}")
        #expect(chmod(dir.sub("a.json"), 0o600) == 0)
        let read = try FileSystem.linkStatus(dir.sub("a.json"))
        let outcome = try FileSystem.replaceIfUnchanged(
            dir.sub("a.json"), with: Array("{\"n\": 1, \"id\": 2}".utf8), mode: 0o600, expected: read,
            expectedBytes: nil)
        #expect(outcome == .replaced)
        #expect(dir.read("a.json") == "{\"n\": 1, \"id\": 2}")
        #expect(try FileSystem.linkStatus(dir.sub("a.json")).mode & 0o777 == 0o600)
        #expect(Self.names(dir) == ["a.json"], "nothing left beside it")
    }

    @Test("a file saved before the check is left alone", arguments: Save.allCases)
    func savedBeforeTheCheck(how: Save) throws {
        let dir = TempFolder("replace")
        dir.write("a.json", "{\"n\": 1}")
        let read = try FileSystem.linkStatus(dir.sub("a.json"))
        usleep(20_000)  // a later mtime, whatever the clock's granularity
        Self.save(dir, "a.json", "{\"n\": 2}", how)
        let outcome = try FileSystem.replaceIfUnchanged(
            dir.sub("a.json"), with: Array("{\"n\": 1, \"id\": 2}".utf8), mode: 0o644, expected: read,
            expectedBytes: nil)
        #expect(outcome == .changedMeanwhile)
        #expect(dir.read("a.json") == "{\"n\": 2}")
        #expect(Self.names(dir) == ["a.json"])
    }

    @Test(
        "a save made between the check and the swap survives, and nothing is left beside it",
        arguments: Save.allCases)
    func savedBetweenCheckAndSwap(how: Save) throws {
        let dir = TempFolder("replace")
        dir.write("a.json", "{\"n\": 1}")
        let read = try FileSystem.linkStatus(dir.sub("a.json"))
        var checked = false
        let outcome = try FileSystem.replaceIfUnchanged(
            dir.sub("a.json"), with: Array("{\"n\": 1, \"id\": 2}".utf8), mode: 0o644, expected: read,
            expectedBytes: nil,
            beforeSwap: {
                checked = true
                usleep(20_000)
                Self.save(dir, "a.json", "{\"n\": 3}", how)
            })
        #expect(checked, "the window was reached")
        #expect(outcome == .changedMeanwhile)
        #expect(dir.read("a.json") == "{\"n\": 3}", "the save is where the user put it")
        #expect(Self.names(dir) == ["a.json"])
    }

    @Test("a file deleted between the check and the swap stays deleted")
    func deletedBetweenCheckAndSwap() throws {
        let dir = TempFolder("replace")
        dir.write("a.json", "{\"n\": 1}")
        let read = try FileSystem.linkStatus(dir.sub("a.json"))
        let outcome = try FileSystem.replaceIfUnchanged(
            dir.sub("a.json"), with: Array("{}".utf8), mode: 0o644, expected: read, expectedBytes: nil,
            beforeSwap: { dir.remove("a.json") })
        #expect(outcome == .changedMeanwhile)
        #expect(Self.names(dir).isEmpty)
    }

    @Test("with the bytes read, a touched file of the same content is still replaced")
    func sameContentOtherStat() throws {
        let dir = TempFolder("replace")
        dir.write("a.json", "{\"n\": 1}")
        let read = try FileSystem.linkStatus(dir.sub("a.json"))
        usleep(20_000)
        dir.write("a.json", "{\"n\": 1}")
        let outcome = try FileSystem.replaceIfUnchanged(
            dir.sub("a.json"), with: Array("{\"n\": 1, \"id\": 2}".utf8), mode: 0o644, expected: read,
            expectedBytes: Array("{\"n\": 1}".utf8))
        #expect(outcome == .replaced)
        #expect(dir.read("a.json") == "{\"n\": 1, \"id\": 2}")
    }
}
