import Foundation
import Testing

@testable import DocSyncKit

/// Temporary files' names carry their writer's machine, so a folder remote on a shared
/// mount never loses another machine's file under way to a pid check made here.
@Suite struct TemporaryNameTests {
    static let now = FileSystem.currentTimeNanos
    static let day: Int64 = 86_400 * 1_000_000_000
    /// A pid no process has here (above the kernel's pid_max of 4,194,304).
    static let deadPid: Int32 = 99_999_999

    @Test func madeNamesParseBackToThisProcessAndMachine() throws {
        let name = TemporaryName.make(7, for: "pack-1.pack")
        #expect(name.hasPrefix(".docsync-tmp-\(getpid())@"))
        #expect(name.hasSuffix("-7-pack-1.pack"))
        let parsed = try #require(TemporaryName(name))
        #expect(parsed.pid == getpid())
        #expect(parsed.machine == TemporaryName.thisMachine)
        #expect(TemporaryName.thisMachine.count == 8)
        #expect(!parsed.isStale(modifiedNanos: Self.now), "this process's own file")
    }

    @Test func aDeadWriterOfThisMachineIsALeftoverAtOnce() {
        let ours = TemporaryName(".docsync-tmp-\(Self.deadPid)@\(TemporaryName.thisMachine)-1-x.json")
        #expect(ours?.isStale(modifiedNanos: Self.now) == true)
        // Names from before the machine was in them count as this machine's.
        #expect(TemporaryName(".docsync-tmp-\(Self.deadPid)-1-x.json")?.isStale(modifiedNanos: Self.now) == true)
        // A live writer (pid 1 is always there) is not, unless its file is old.
        let live = TemporaryName(".docsync-tmp-1@\(TemporaryName.thisMachine)-1-x.json")
        #expect(live?.isStale(modifiedNanos: Self.now) == false)
        #expect(live?.isStale(modifiedNanos: Self.now - 2 * 3_600_000_000_000) == true)
    }

    @Test func anotherMachinesFileIsJudgedByAgeOnlyWithRoomForClockSkew() {
        let other = TemporaryName.thisMachine == "00000000" ? "11111111" : "00000000"
        let theirs = TemporaryName(".docsync-tmp-\(Self.deadPid)@\(other)-1-pack.pack")
        #expect(theirs?.machine == other)
        #expect(theirs?.isStale(modifiedNanos: Self.now) == false, "its pid means nothing here")
        #expect(theirs?.isStale(modifiedNanos: Self.now - Self.day) == false, "a clock a day ahead")
        #expect(theirs?.isStale(modifiedNanos: Self.now - 3 * Self.day) == true)
        #expect(theirs?.isStale(modifiedNanos: nil) == false, "no age known: kept")
    }

    @Test func otherNamesAreNotTemporaryFiles() {
        #expect(TemporaryName("x.json") == nil)
        #expect(TemporaryName(".docsync-tmp-abc-1-x.json") == nil)
        #expect(TemporaryName(".docsync-tmp--1-x.json") == nil)
    }
}
