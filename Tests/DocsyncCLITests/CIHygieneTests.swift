// CI can never pass by running nothing: `.ci/run` sets CI=true, under which every missing
// prerequisite fails its tests instead of skipping them, and the install scripts put
// every program the tests drive on a fresh machine.

import Foundation
import Testing

@Suite("CI runs every test")
struct CIHygieneTests {
    static func source(_ path: String) throws -> String {
        try String(contentsOfFile: CLI.packageRoot + "/" + path, encoding: .utf8)
    }

    /// The test sources, by path relative to the package root.
    static func testSources() throws -> [String: String] {
        var sources: [String: String] = [:]
        let root = CLI.packageRoot + "/Tests"
        for path in FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []
        where path.hasSuffix(".swift") {
            sources["Tests/" + path] = try source("Tests/" + path)
        }
        return sources
    }

    @Test(".ci/run sets CI=true itself")
    func ciRunSetsCI() throws {
        let lines = try Self.source(".ci/run").split(separator: "\n")
        let export = lines.firstIndex { $0.trimmingCharacters(in: .whitespaces) == "export CI=true" }
        let test = lines.firstIndex { $0.contains("make test") || $0.contains("swift test") }
        #expect(export != nil && test != nil && export! < test!, "\(lines)")
    }

    @Test("no test skips on its own: a missing program or switch goes through Prerequisite (fails under CI=true)")
    func skipsGoThroughPrerequisite() throws {
        let allowed: Set<String> = [
            "Tests/DocsyncCLITests/TestServers.swift", "Tests/DocSyncKitTests/TestServers.swift",
            "Tests/DocsyncCLITests/ProgramPrerequisites.swift", "Tests/DocsyncCLITests/CIHygieneTests.swift"
        ]
        for (path, text) in try Self.testSources() where !allowed.contains(path) {
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let own =
                    line.contains("print(\"SKIPPED") || line.contains(".enabled(if: FileManager")
                    || line.contains("guard Self.wanted(")
                #expect(!own, "\(path):\(number + 1) skips by itself: \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
    }

    @Test("every program the tests drive is installed by scripts/install-deps.sh or install-test-servers.sh")
    func programsAreInstalled() throws {
        let scripts = try Self.source("scripts/install-deps.sh") + Self.source("scripts/install-test-servers.sh")
        for program in Prerequisite.programs {
            #expect(
                scripts.contains(" \(program.package) ") || scripts.contains(" \(program.package);"),
                "\(program.name) comes with the Debian package \(program.package), which no install script installs")
        }
        for name in ["less", "script", "timeout", "unshare", "systemd-analyze", "groff", "jq", "zsh", "fish", "bash"] {
            #expect(Prerequisite.programs.contains { $0.name == name }, "\(name) is not a Prerequisite program")
        }
    }
}
