// `docsync --generate-completion-script bash|zsh|fish` (swift-argument-parser): each
// script is accepted by its shell, and installed the way README.md and the man page say,
// it completes docsync's subcommands and options.

import Foundation
import Testing

@Suite("Shell completion scripts")
struct ShellCompletionTests {
    /// Writes `docsync --generate-completion-script shell` to `file`; returns the script.
    static func generate(
        _ shell: String, into file: String, sourceLocation: SourceLocation = #_sourceLocation
    ) -> String {
        let dir = (file as NSString).deletingLastPathComponent
        try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let r = CLI.run(["--generate-completion-script", shell], in: dir)
        #expect(r.exit == 0, r.comment, sourceLocation: sourceLocation)
        #expect(
            r.stdout.contains("docsync") && r.stdout.contains("reset-base"),
            "a \(shell) script for docsync: \(r)",
            sourceLocation: sourceLocation)
        try! Data(r.stdout.utf8).write(to: URL(fileURLWithPath: file))
        return r.stdout
    }

    @Test(
        "bash: bash -n accepts the script; sourced, it completes a subcommand and pull's options",
        .enabled(if: Prerequisite.bash.runsHere))
    func bash() throws {
        try Prerequisite.bash.require()
        let box = Sandbox()
        // README: docsync --generate-completion-script bash > ~/.local/share/bash-completion/completions/docsync
        let file = box.path("home/.local/share/bash-completion/completions/docsync")
        _ = Self.generate("bash", into: file)
        let bash = programPath("/usr/bin/bash", "/bin/bash")

        let syntax = CLI.runTool(bash, ["-n", file], in: box.root)
        #expect(syntax.exit == 0, syntax.comment)

        // What bash does on TAB: set COMP_* and call the function `complete -p` names.
        let probe = """
            source "$1"
            complete -p docsync
            ask() { COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}; read -ra COMP_WORDS <<<"$1 "
                    [[ $1 == *' ' ]] && COMP_WORDS+=('')
                    COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
                    _docsync docsync "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
                    echo "$1 => ${COMPREPLY[*]}"; }
            ask 'docsync sy'
            ask 'docsync reset'
            ask 'docsync pull --dr'
            """
        let r = CLI.runTool(bash, ["-c", probe, "probe", file], in: box.root)
        #expect(r.exit == 0, r.comment)
        #expect(r.stdout.contains("complete -o filenames -F _docsync docsync"), r.comment)
        #expect(r.stdout.contains("docsync sy => sync\n"), r.comment)
        #expect(r.stdout.contains("docsync reset => reset-base\n"), r.comment)
        #expect(r.stdout.contains("docsync pull --dr => --dry-run\n"), r.comment)
    }

    @Test(
        "zsh: zsh -n accepts the script; in a folder on fpath, compinit binds it to docsync",
        .enabled(if: Prerequisite.zsh.runsHere))
    func zsh() throws {
        try Prerequisite.zsh.require()
        let box = Sandbox()
        // README: docsync --generate-completion-script zsh > ~/.zfunc/_docsync, fpath=(~/.zfunc $fpath)
        let file = box.path("home/.zfunc/_docsync")
        let script = Self.generate("zsh", into: file)
        #expect(
            script.hasPrefix("#compdef docsync"), "compinit only picks up files starting with #compdef")
        let zsh = programPath("/usr/bin/zsh", "/bin/zsh")

        let syntax = CLI.runTool(zsh, ["-n", file], in: box.root)
        #expect(syntax.exit == 0, syntax.comment)

        let probe = """
            fpath=("$1" $fpath)
            autoload -Uz compinit && compinit -u -d "$2"
            print -r -- "docsync => ${_comps[docsync]}"
            autoload +X _docsync && print -r -- "_docsync loads"
            """
        let r = CLI.runTool(
            zsh, ["-f", "-c", probe, "probe", box.path("home/.zfunc"), box.path("home/.zcompdump")],
            in: box.root)
        #expect(r.exit == 0, r.comment)
        #expect(r.stdout.contains("docsync => _docsync\n"), r.comment)
        #expect(r.stdout.contains("_docsync loads\n"), r.comment)
    }

    @Test(
        "fish: fish --no-execute accepts the script; loaded, it completes subcommands and options with their help",
        .enabled(if: Prerequisite.fish.runsHere))
    func fish() throws {
        try Prerequisite.fish.require()
        let box = Sandbox()
        // README: docsync --generate-completion-script fish > ~/.config/fish/completions/docsync.fish
        let file = box.path("home/.config/fish/completions/docsync.fish")
        _ = Self.generate("fish", into: file)

        let syntax = CLI.runTool("/usr/bin/fish", ["--no-execute", file], in: box.root)
        #expect(syntax.exit == 0, syntax.comment)

        // fish loads ~/.config/fish/completions/docsync.fish for a docsync it finds on PATH.
        try FileManager.default.createDirectory(
            atPath: box.path("bin"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: box.path("bin/docsync"), withDestinationPath: CLI.binary)
        let path =
            box.path("bin") + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let r = CLI.runTool(
            "/usr/bin/fish", ["-c", "complete -C'docsync sy'; complete -C'docsync pull --dr'"],
            in: box.root,
            env: ["HOME": box.path("home"), "XDG_CONFIG_HOME": box.path("home/.config"), "PATH": path])
        #expect(r.exit == 0, r.comment)
        #expect(r.stdout.contains("sync\tPull, reconcile and push"), r.comment)
        #expect(r.stdout.contains("--dry-run\t"), r.comment)
    }
}
