// Every example in examples/ runs here, against the built binary (passed to the scripts
// as DOCSYNC=…), so none of them rots: the quick start over a folder, team settings, the
// sample data edited with jq and sed, git over ssh and over https with a token, and the
// cron and systemd set-ups with their exit-status handling.

import Foundation
import Testing

enum Example {
    static var folder: String { CLI.packageRoot + "/examples" }

    static var bash: String { programPath("/usr/bin/bash", "/bin/bash") }

    /// Runs `examples/<script> args…` with bash, the built docsync as DOCSYNC.
    static func run(
        _ script: String, _ args: [String] = [], in dir: String, env: [String: String] = [:]
    ) -> RunResult {
        var environment = env
        environment["DOCSYNC"] = CLI.binary
        return CLI.runTool(bash, [folder + "/" + script] + args, in: dir, env: environment)
    }

    /// Runs an example in the isolated environment of the test servers (HOME of its own,
    /// no system git config, no ssh-agent).
    static func runIsolated(
        _ script: String, _ args: [String], in dir: String, home: String, env: [String: String]
    ) throws -> ToolResult {
        var environment = env
        environment["DOCSYNC"] = CLI.binary
        return try runTool(bash, [folder + "/" + script] + args, in: dir, home: home, env: environment)
    }
}

@Suite("Examples run as documented")
struct ExamplesTests {
    // MARK: - Two replicas over a folder

    @Test("examples/quickstart.sh: two replicas over a folder, conflict and all, ends identical")
    func quickstart() {
        let box = Sandbox()
        let r = Example.run("quickstart.sh", in: box.root, env: ["TMPDIR": box.root])
        #expect(r.exit == 0, r.comment)
        #expect(
            r.stdout.contains("(exit status 3: a conflict was recorded; nothing was lost)"), r.comment)
        #expect(r.stdout.contains("laptop and desktop are identical (outside .docsync/)"), r.comment)
        #expect(Files.listing(box.root).isEmpty, "the example removes its temporary folder")
    }

    @Test("examples/team-settings.sh sets the merge settings it lists")
    func teamSettings() {
        let box = Sandbox()
        box.initReplica("records")
        let r = Example.run("team-settings.sh", [box.path("records")], in: box.root)
        #expect(r.exit == 0, r.comment)
        for line in [
            "merge.policy=merge", "merge.counters=stats.plays", "merge.policyFor.contacts/**=lww"
        ] {
            #expect(r.stdout.contains(line + "\n"), r.comment)
        }
        let counters = box.replica("records").run("config", "merge.counters")
        #expect(counters.stdout == "stats.plays\n", counters.comment)
    }

    // MARK: - The sample data set, edited with jq and sed

    @Test("examples/data: contacts and tasks, JSON objects without ids (docsync stamps them)")
    func sampleData() {
        let data = Example.folder + "/data"
        let files = Files.list(data, skipMetadata: false)
        #expect(
            files.contains { $0.hasPrefix("contacts/") } && files.contains { $0.hasPrefix("tasks/") },
            "\(files)")
        for file in files {
            #expect(file.hasSuffix(".json"), "\(file)")
            let object = Files.bytes(data + "/" + file).flatMap(JSONHelp.object)
            #expect(object != nil, "\(file) is a JSON object")
            #expect(object?["refId"] == nil && object?["changesetId"] == nil, "\(file) carries no ids")
            if file.hasPrefix("contacts/") {
                #expect(object?["name"] is String && object?["email"] is String, "\(file)")
            }
            if file.hasPrefix("tasks/") {
                #expect(object?["title"] is String && object?["done"] is Bool, "\(file)")
            }
        }
    }

    @Test("examples/receive-only-backup.sh: a receive-only backup takes the laptop's changes and never sends its own")
    func receiveOnlyBackup() throws {
        let box = Sandbox()
        let r = Example.run("receive-only-backup.sh", in: box.root, env: ["WORK": box.path("work")])
        #expect(r.exit == 0, r.comment)
        #expect(r.stdout.contains("laptop and backup hold the same records"), r.comment)
        let laptop = Replica(root: box.path("work/laptop"))
        let backup = Replica(root: box.path("work/backup"))
        #expect(backup.json("tasks/buy-milk.json")?["done"] as? Bool == true, "the laptop's change arrived")
        for replica in [laptop, backup] {
            #expect(
                replica.json("contacts/grace-hopper.json")?["name"] as? String == "Grace Hopper",
                "the backup's edit went nowhere and was reverted: \(replica.root)")
        }
        #expect(laptop.documents() == backup.documents())
        let status = JSONHelp.parse(backup.run("status", "--json").stdout) as? [String: Any]
        #expect(status?["syncMode"] as? String == "receive-only")
        #expect((status?["pending"] as? [Any])?.isEmpty == true, "\(status ?? [:])")
    }

    @Test(
        "examples/send-only-exporter.sh: a send-only exporter sends its records and never applies the laptop's until the mode is both"
    )
    func sendOnlyExporter() throws {
        let box = Sandbox()
        let r = Example.run("send-only-exporter.sh", in: box.root, env: ["WORK": box.path("work")])
        #expect(r.exit == 0, r.comment)
        #expect(r.stdout.contains("laptop and exporter hold the same records"), r.comment)
        let laptop = Replica(root: box.path("work/laptop"))
        let exporter = Replica(root: box.path("work/exporter"))
        #expect(laptop.json("reports/weekly.json")?["tasksDone"] as? Int == 1, "the override reached the laptop")
        #expect(exporter.json("tasks/buy-milk.json")?["done"] as? Bool == true, "merged in once the mode was both")
        #expect(laptop.documents() == exporter.documents())
        let conflicts = JSONHelp.parse(laptop.run("conflicts", "--json").stdout) as? [String: Any]
        #expect((conflicts?["conflicts"] as? [Any])?.count == 1, "the laptop keeps its overridden version")
    }

    @Test(
        "examples/sparse-phone.sh: a phone that keeps only contacts/ edits and archives contacts, widens and narrows, and the remote keeps everything"
    )
    func sparsePhone() throws {
        let box = Sandbox()
        let r = Example.run("sparse-phone.sh", in: box.root, env: ["WORK": box.path("work")])
        #expect(r.exit == 0, r.comment)
        #expect(r.stdout.contains("the phone keeps its part; the remote keeps everything"), r.comment)
        let laptop = Replica(root: box.path("work/laptop"))
        let phone = Replica(root: box.path("work/phone"))
        #expect(
            Set(phone.documents().keys) == ["contacts/ada-lovelace.json", "contacts/grace-hopper.json"],
            "\(phone.documents().keys)")
        #expect(laptop.documents().count == 6)
        #expect(laptop.json("tasks/buy-milk.json")?["done"] as? Bool == true, "the phone's edit of a task it let go")
        #expect(phone.bytes("contacts/ada-lovelace.json") == laptop.bytes("contacts/ada-lovelace.json"))
    }

    @Test(
        "examples/edit-with-jq-and-sed.sh: jq and sed edits on two replicas merge and sync",
        .enabled(if: Prerequisite.jq.runsHere))
    func jqAndSed() throws {
        try Prerequisite.jq.require()
        let box = Sandbox()
        let dataBefore = Files.tree(Example.folder + "/data", skipMetadata: false)
        let r = Example.run("edit-with-jq-and-sed.sh", in: box.root, env: ["WORK": box.path("work")])
        #expect(r.exit == 0, r.comment)
        #expect(r.stdout.contains("laptop and desktop hold the same records"), r.comment)
        #expect(
            r.stdout.contains("1 Renew passport\n2 Book the dentist\n"),
            "the jq query over the synced tasks: \(r)")

        let laptop = Replica(root: box.path("work/laptop"))
        let desktop = Replica(root: box.path("work/desktop"))
        #expect(laptop.documents() == desktop.documents())
        let ada = desktop.json("contacts/ada-lovelace.json")
        #expect(
            ada?["phone"] as? String == "+44 20 7946 0999",
            "sed's edit (desktop): \(String(describing: ada))")
        #expect(
            ada?["tags"] as? [String] == ["mathematics", "engines", "uk"],
            "jq's edit (laptop): \(String(describing: ada))")
        #expect(
            desktop.json("contacts/grace-hopper.json")?["tags"] as? [String] == ["compilers", "navy"])
        #expect(desktop.json("tasks/buy-milk.json")?["done"] as? Bool == true)
        #expect(desktop.json("tasks/renew-passport.json")?["due"] as? String == "2026-03-01")
        #expect(desktop.refId("tasks/book-dentist.json") != nil, "the record jq created got its ids")
        for replica in [laptop, desktop] {
            #expect(
                replica.conflictCopies().isEmpty, "edits of different fields merge without a conflict")
            let status = replica.run("status", "--json")
            let s = JSONHelp.parse(status.stdout) as? [String: Any]
            #expect(
                (s?["pending"] as? [Any])?.isEmpty == true && (s?["unrecorded"] as? [Any])?.isEmpty == true,
                status.comment)
        }
        #expect(
            Files.tree(Example.folder + "/data", skipMetadata: false) == dataBefore,
            "the example copies examples/data, never edits it")
    }

    // MARK: - Git over ssh and over https

    @Test(
        "examples/git-over-ssh.sh: a bare repository over ssh, with the key and known_hosts in ~/.ssh",
        .enabled(if: Prerequisite.sshd.runsHere))
    func gitOverSSH() throws {
        try Prerequisite.sshd.require()
        let server = try SSHServer()
        let repository = try server.makeRepository("records")
        let box = Sandbox()
        // What a user has: ~/.ssh/id_ed25519 and the server in ~/.ssh/known_hosts.
        let home = box.path("home")
        try writeFile(home + "/.ssh/id_ed25519", readFile(server.userKey), mode: 0o600)
        try writeFile(home + "/.ssh/known_hosts", readFile(server.knownHosts), mode: 0o644)
        // The example's `git clone` uses OpenSSH, which finds ~/.ssh from the passwd entry,
        // not HOME: point it at the same files.
        let ssh =
            "ssh -F /dev/null -i \(home)/.ssh/id_ed25519 -o UserKnownHostsFile=\(home)/.ssh/known_hosts -o IdentitiesOnly=yes -o BatchMode=yes"
        let r = try Example.runIsolated(
            "git-over-ssh.sh", [server.url("records")], in: box.root, home: home,
            env: ["WORK": box.path("work"), "GIT_SSH_COMMAND": ssh])
        #expect(
            r.status == 0,
            "git-over-ssh.sh exited \(r.status)\n\(r.stdout)\n\(r.stderr)\n--- sshd:\n\(server.log)")
        #expect(r.stdout.contains("\"done\": true"), "laptop got desktop's edit: \(r.stdout)")

        // The git CLI, on the server's side, sees the records and the commits.
        let log = try plainGit(
            ["--git-dir", repository, "log", "--format=%s", "main"], in: box.root, home: home)
        #expect(
            log.split(separator: "\n").count >= 2 && log.contains("from laptop")
                && log.contains("from desktop"), "git log: \(log)")
        let milk = try plainGit(
            ["--git-dir", repository, "show", "main:tasks/buy-milk.json"], in: box.root, home: home)
        #expect(JSONHelp.object(Array(milk.utf8))?["done"] as? Bool == true, "\(milk)")
        let plain = Replica(root: box.path("work/plain")).documents().filter {
            !$0.key.hasPrefix(".git/")
        }
        let laptop = Replica(root: box.path("work/laptop")).documents()
        #expect(
            plain.keys.sorted() == laptop.keys.sorted() && plain == laptop,
            "plain git's clone holds the laptop's records, byte for byte: \(plain.keys.sorted()) vs \(laptop.keys.sorted())"
        )
    }

    @Test(
        "examples/git-over-https.sh: a hosted repository over https with a token from DOCSYNC_GIT_TOKEN",
        .enabled(if: Prerequisite.httpsServer.runsHere))
    func gitOverHTTPS() throws {
        try Prerequisite.httpsServer.require()
        let server = try HTTPSGitServer()
        let repository = try server.makeRepository("records")
        let box = Sandbox()
        let home = box.path("home")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let url = server.url("records")

        let refused = try Example.runIsolated(
            "git-over-https.sh", [url], in: box.root, home: home, env: ["WORK": box.path("none")])
        #expect(
            refused.status != 0 && refused.stderr.contains("set DOCSYNC_GIT_TOKEN"),
            "without a token: \(refused.stderr)")

        // The test server's CA stands in for the system's (a real host needs nothing here).
        let r = try Example.runIsolated(
            "git-over-https.sh", [url], in: box.root, home: home,
            env: [
                "WORK": box.path("work"), "DOCSYNC_GIT_TOKEN": server.token, "SSL_CERT_FILE": server.caFile
            ])
        #expect(
            r.status == 0,
            "git-over-https.sh exited \(r.status)\n\(r.stdout)\n\(r.stderr)\n--- server:\n\(server.log)")
        #expect(r.stdout.contains("grace.hopper@example.org"), "laptop got desktop's edit: \(r.stdout)")
        #expect(
            !r.stdout.contains(server.token) && !r.stderr.contains(server.token),
            "the token is never printed")
        let grace = try plainGit(
            ["--git-dir", repository, "show", "main:contacts/grace-hopper.json"], in: box.root, home: home
        )
        #expect(
            JSONHelp.object(Array(grace.utf8))?["email"] as? String == "grace.hopper@example.org",
            "\(grace)")
        for file in Files.list(box.path("work"), skipMetadata: false) {
            let text = String(decoding: Files.bytes(box.path("work/" + file)) ?? [], as: UTF8.self)
            #expect(!text.contains(server.token), "the token is in \(file)")
        }
    }

    // MARK: - cron and systemd

    /// A tree at `home/records` on a folder remote, with one synced record, and a second
    /// replica of it.
    static func scheduledTree(_ box: Sandbox) -> (records: Replica, desktop: Replica) {
        let records = box.initReplica(
            "home/records", files: ["ada.json": "{\n  \"name\": \"Ada\"\n}\n"])
        records.sync()
        return (records, box.clone("desktop"))
    }

    /// Both replicas change ada's name, the desktop later, and the desktop syncs: the
    /// records tree's next sync loses the field (exit 3).
    static func makeConflict(_ records: Replica, _ desktop: Replica) {
        records.write("ada.json", records.read("ada.json")!.replacing("\"Ada\"", with: "\"Ada L\""))
        SaveClock.shared.stamp(records.path("ada.json"))
        desktop.write("ada.json", desktop.read("ada.json")!.replacing("\"Ada\"", with: "\"Ada K\""))
        SaveClock.shared.stamp(desktop.path("ada.json"))
        desktop.sync()
    }

    @Test(
        "examples/cron: the crontab line logs every run, is silent for success and exit 75, and speaks for conflicts and errors"
    )
    func cron() throws {
        let crontab = try String(contentsOfFile: Example.folder + "/cron/crontab", encoding: .utf8)
        let lines = crontab.split(separator: "\n").map(String.init).filter {
            !$0.hasPrefix("#") && !$0.isEmpty
        }
        let path = lines.first { $0.hasPrefix("PATH=") }.map { String($0.dropFirst(5)) }
        let jobs = lines.filter { !$0.contains("=") || $0.first?.isNumber == true || $0.first == "*" }
        #expect(
            path != nil && jobs.count == 1, "one PATH line and one job in examples/cron/crontab: \(lines)"
        )
        // cron runs the part after the five time fields with /bin/sh -c.
        let command =
            jobs.first.map {
                $0.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true).last.map(
                    String.init) ?? ""
            } ?? ""
        #expect(command.contains("docsync-cron.sh"), "\(command)")

        let box = Sandbox()
        let home = box.path("home")
        // Installed as the crontab's comment says.
        try writeFile(
            home + "/bin/docsync-cron.sh", readFile(Example.folder + "/cron/docsync-cron.sh"), mode: 0o755
        )
        let (records, desktop) = Self.scheduledTree(box)
        let log = home + "/.local/state/docsync/sync.log"
        // cron's environment: HOME, the crontab's PATH; DOCSYNC names the binary (docsync is
        // not in /usr/local/bin here), as the script's header says.
        func cronRun() -> RunResult {
            CLI.runTool(
                "/bin/sh", ["-c", command], in: home,
                env: ["HOME": home, "PATH": path ?? "", "SHELL": "/bin/sh", "DOCSYNC": CLI.binary])
        }

        records.write("grace.json", "{\"name\": \"Grace\"}\n")
        let ok = cronRun()
        #expect(
            ok.exit == 0 && ok.stdout.isEmpty && ok.stderr.isEmpty,
            "success: nothing for cron to mail: \(ok)")
        #expect(
            readFile(log).contains(" exit 0\n") && readFile(log).contains("push    create  grace.json"),
            "logged: \(readFile(log))")

        // The remote folder is gone (a share not mounted): exit 75 is logged, not mailed.
        try FileManager.default.moveItem(atPath: box.remote, toPath: box.remote + ".away")
        records.write(
            "grace.json", records.read("grace.json")!.replacing("\"Grace\"", with: "\"Grace H\""))
        let away = cronRun()
        #expect(
            away.exit == 0 && away.stdout.isEmpty && away.stderr.isEmpty,
            "try again later: nothing mailed: \(away)")
        #expect(readFile(log).contains(" exit 75\n"), "logged: \(readFile(log))")
        try FileManager.default.moveItem(atPath: box.remote + ".away", toPath: box.remote)
        let back = cronRun()
        #expect(back.exit == 0 && back.stdout.isEmpty, back.comment)
        let lastRun = readFile(log).components(separatedBy: records.root + " exit ").last ?? ""
        #expect(
            lastRun.hasPrefix("0\n") && lastRun.contains("push    update  grace.json\n"),
            "the next run sent it: \(readFile(log))")

        Self.makeConflict(records, desktop)
        let conflict = cronRun()
        #expect(conflict.exit == 3, conflict.comment)
        #expect(
            conflict.stdout.contains("conflicts recorded in \(records.root)")
                && conflict.stdout.contains("conflict        ada.json"), conflict.comment)

        records.write("bad.json", "{\"name\": }\n")
        let broken = cronRun()
        #expect(broken.exit == 1, broken.comment)
        #expect(
            broken.stdout.contains("failed with exit status 1") && broken.stdout.contains("bad.json:1:"),
            broken.comment)
    }

    /// `Key=value` lines of a unit file's section.
    static func unitValues(_ text: String, _ key: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            line.hasPrefix(key + "=") ? String(line.dropFirst(key.count + 1)) : nil
        }
    }

    @Test(
        "examples/systemd: the service's ExecStart syncs; 75 is among its SuccessExitStatus, 3 and 1 fail the unit; the units verify"
    )
    func systemd() throws {
        let service = try String(
            contentsOfFile: Example.folder + "/systemd/docsync-sync.service", encoding: .utf8)
        let timer = try String(
            contentsOfFile: Example.folder + "/systemd/docsync-sync.timer", encoding: .utf8)
        let exec = Self.unitValues(service, "ExecStart")
        #expect(exec.count == 1, "one ExecStart: \(exec)")
        let success = Set(
            [0]
                + Self.unitValues(service, "SuccessExitStatus").flatMap {
                    $0.split(separator: " ").compactMap { Int32($0) }
                })
        #expect(Self.unitValues(service, "Type") == ["oneshot"])
        #expect(
            Self.unitValues(timer, "OnUnitActiveSec") == ["10min"]
                && Self.unitValues(timer, "WantedBy") == ["timers.target"])

        let box = Sandbox()
        let home = box.path("home")
        let (records, desktop) = Self.scheduledTree(box)
        // systemd runs ExecStart without a shell, %h being the user's home.
        var words = (exec.first ?? "").replacingOccurrences(of: "%h", with: home).split(separator: " ")
            .map(String.init)
        #expect(words.first == "/usr/local/bin/docsync", "the README installs docsync there: \(words)")
        words.removeFirst()
        func serviceRun() -> RunResult { CLI.run(words, in: "/", env: ["HOME": home]) }

        records.write("grace.json", "{\"name\": \"Grace\"}\n")
        let ok = serviceRun()
        #expect(
            ok.exit == 0 && ok.stdout.contains("push    create  grace.json"),
            "the journal gets the summary: \(ok)")

        try FileManager.default.moveItem(atPath: box.remote, toPath: box.remote + ".away")
        let away = serviceRun()
        #expect(
            away.exit == 75 && success.contains(away.exit),
            "unreachable is exit 75, a success for the unit: \(away)")
        try FileManager.default.moveItem(atPath: box.remote + ".away", toPath: box.remote)

        Self.makeConflict(records, desktop)
        let conflict = serviceRun()
        #expect(
            conflict.exit == 3 && !success.contains(conflict.exit),
            "a conflict fails the unit, so it shows: \(conflict)")
        records.write("bad.json", "{\"name\": }\n")
        let broken = serviceRun()
        #expect(broken.exit == 1 && !success.contains(broken.exit), broken.comment)

        // systemd's own check, where systemd is installed (units copied with ExecStart
        // pointing at the built binary, which must exist for it).
        let analyze = "/usr/bin/systemd-analyze"
        guard Prerequisite.systemdAnalyze.runsHere else { return }
        try Prerequisite.systemdAnalyze.require()
        let units = box.path("units")
        try writeFile(
            units + "/docsync-sync.service",
            service.replacingOccurrences(of: "/usr/local/bin/docsync", with: CLI.binary))
        try writeFile(units + "/docsync-sync.timer", timer)
        let verify = CLI.runTool(
            analyze,
            ["verify", "--man=no", units + "/docsync-sync.service", units + "/docsync-sync.timer"],
            in: units)
        #expect(
            verify.exit == 0 && verify.stderr.isEmpty && verify.stdout.isEmpty,
            "systemd-analyze verify: \(verify)")
    }
}
