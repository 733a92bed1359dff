// Programs the docs and examples tests drive besides docsync: shells, jq, groff, less, strace,
// unshare, systemd-analyze; and the model check's environment switches. scripts/install-deps.sh
// installs the programs; like the test servers, a missing one skips its tests loudly on a
// developer's machine and fails them under CI=true (which .ci/run sets).

import Foundation

extension Prerequisite {
    /// A program the tests run, where it is, and the Debian package that installs it
    /// (CIHygieneTests checks that an install script installs each).
    struct Program: Sendable {
        var name: String
        var paths: [String]
        var package: String
    }

    static let programs: [Program] = [
        Program(name: "bash", paths: ["/usr/bin/bash", "/bin/bash"], package: "bash"),
        Program(name: "zsh", paths: ["/usr/bin/zsh", "/bin/zsh"], package: "zsh"),
        Program(name: "fish", paths: ["/usr/bin/fish"], package: "fish"),
        Program(name: "jq", paths: ["/usr/bin/jq"], package: "jq"),
        Program(name: "groff", paths: ["/usr/bin/groff"], package: "groff-base"),
        Program(name: "less", paths: ["/usr/bin/less"], package: "less"),
        Program(name: "script", paths: ["/usr/bin/script"], package: "bsdutils"),
        Program(name: "timeout", paths: ["/usr/bin/timeout"], package: "coreutils"),
        Program(name: "unshare", paths: ["/usr/bin/unshare"], package: "util-linux"),
        Program(name: "flock", paths: ["/usr/bin/flock"], package: "util-linux"),
        Program(name: "setpriv", paths: ["/usr/bin/setpriv"], package: "util-linux"),
        Program(name: "systemd-analyze", paths: ["/usr/bin/systemd-analyze"], package: "systemd"),
        Program(name: "strace", paths: ["/usr/bin/strace"], package: "strace"),
        Program(name: "unison", paths: ["/usr/bin/unison"], package: "unison"),
        Program(name: "syncthing", paths: ["/usr/bin/syncthing"], package: "syncthing"),
        Program(name: "faketime", paths: ["/usr/bin/faketime"], package: "faketime")
    ]

    /// All of the named programs (from `programs`), as one prerequisite.
    static func programs(_ names: String...) -> Prerequisite {
        let needed = names.map { name in programs.first { $0.name == name }! }
        let absent = needed.filter { program in
            !program.paths.contains { FileManager.default.isExecutableFile(atPath: $0) }
        }
        return Prerequisite(
            name: names.joined(separator: ", "),
            missing: absent.isEmpty
                ? nil
                : "missing " + absent.map { $0.paths.joined(separator: " or ") }.joined(separator: ", ")
                    + " (scripts/install-deps.sh installs \(absent.map(\.package).joined(separator: ", ")))")
    }

    static let bash = programs("bash")
    static let zsh = programs("zsh")
    static let fish = programs("fish")
    static let jq = programs("jq")
    static let groff = programs("groff")
    /// The default pager, on a terminal made by script(1), bounded by timeout(1).
    static let less = programs("less", "script", "timeout")
    static let systemdAnalyze = programs("systemd-analyze")
    /// The file-sync engines the drive-folder tests copy a remote's copies with.
    static let unison = programs("unison")
    static let syncthing = programs("syncthing")
    /// Runs docsync with its clock moved (libfaketime): a machine whose clock is off.
    static let faketime = programs("faketime")

    /// A user namespace of our own (`unshare -Ur`), where a test may lower a kernel limit.
    static let userNamespaces: Prerequisite = {
        let unshare = programs("unshare")
        if unshare.missing != nil { return Prerequisite(name: "user namespaces", missing: unshare.missing) }
        let probe = CLI.runTool("/usr/bin/unshare", ["-Ur", "true"], in: "/")
        return Prerequisite(
            name: "user namespaces",
            missing: probe.exit == 0
                ? nil
                : "unshare -Ur fails here (\(probe.stderr.trimmingCharacters(in: .whitespacesAndNewlines))): user namespaces are off"
        )
    }()

    /// One remote kind of the model check, unless DOCSYNC_MODEL_KIND names the other.
    static func modelCheck(kind: String) -> Prerequisite {
        let only = ProcessInfo.processInfo.environment["DOCSYNC_MODEL_KIND"] ?? ""
        return Prerequisite(
            name: "the model check on a \(kind) remote",
            missing: only.isEmpty || only == "all" || only == kind ? nil : "DOCSYNC_MODEL_KIND=\(only) leaves it out")
    }

    /// The model check's fresh random seed, unless DOCSYNC_MODEL_SEED replays one instead.
    static let modelCheckFreshSeed = Prerequisite(
        name: "the model check with a fresh seed",
        missing: ProcessInfo.processInfo.environment["DOCSYNC_MODEL_SEED"].map {
            "DOCSYNC_MODEL_SEED=\($0) replays that seed instead"
        })
}

/// The absolute path of a program (the first of `paths` that exists).
func programPath(_ paths: String...) -> String {
    paths.first { FileManager.default.isExecutableFile(atPath: $0) } ?? paths[0]
}
