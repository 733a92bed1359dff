#!/usr/bin/env bash
# Measures `docsync watch`: the CPU it uses while nothing changes, and the time from a
# saved edit to the edit pushed, on a folder remote and a bare git repository.
#
#   scripts/bench-watch.sh [IDLE_SECONDS] [EDITS]      (defaults 600 and 100)
#
# - idle: CPU seconds (utime + stime from /proc/PID/stat) a watch on a tree of 1,000
#   documents uses over IDLE_SECONDS with nothing changing (watch.pullSeconds at its
#   default, 60: the pulls are part of the idle cost);
# - latency: EDITS edits of one document, one at a time; each is timed from the write
#   (rename over the file, like an editor) to watch's `--json` line saying it was pushed.
#   watch.debounceMs is at its default (500 ms) unless DEBOUNCE_MS is set; it is part of
#   every figure. Median and p95 are printed per remote kind.
# The binary: $DOCSYNC, else the release build (built if missing, in .build-release).
set -euo pipefail
IDLE=${1:-600}
EDITS=${2:-100}
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${DOCSYNC:-"$here/.build-release/release/docsync"}
if [ ! -x "$bin" ]; then
  export PATH="/opt/swift/usr/bin:$PATH"
  (cd "$here" && swift build -c release --static-swift-stdlib --scratch-path .build-release >/dev/null)
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
python3 - "$bin" "$work" "$IDLE" "$EDITS" "${DEBOUNCE_MS:-}" <<'PY'
import json, os, signal, statistics, subprocess, sys, time
bin, work, idle, edits, debounce = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
tick = os.sysconf("SC_CLK_TCK")

def run(*args, cwd):
    subprocess.run([bin, *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL)

def cpu(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / tick      # utime + stime

def lines(path):
    return [json.loads(l) for l in open(path).read().splitlines() if l.strip()]

for kind in ["dir", "git"]:
    base = os.path.join(work, kind)
    os.makedirs(base)
    remote = os.path.join(base, "remote.git" if kind == "git" else "remote")
    if kind == "git":
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", remote], check=True)
    tree = os.path.join(base, "tree")
    for i in range(1000):
        d = os.path.join(tree, f"group{i % 20:02d}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"doc{i:04d}.json"), "w") as f:
            json.dump({"name": f"record {i}", "n": i, "notes": "x" * 200}, f, indent=2)
    run("init", "--remote", remote, "--name", "bench", tree, cwd=base)
    run("sync", "--quiet", cwd=tree)
    if debounce:
        run("config", "watch.debounceMs", debounce, cwd=tree)
    out = os.path.join(base, "watch.out")
    proc = subprocess.Popen([bin, "watch", "--json"], cwd=tree, stdout=open(out, "w"), stderr=subprocess.STDOUT)
    deadline = time.time() + 60
    while not any(l.get("event") == "sync" for l in lines(out)):
        if time.time() > deadline or proc.poll() is not None:
            sys.exit(f"watch did not start: {open(out).read()}")
        time.sleep(0.05)

    # Idle: nothing changes for IDLE seconds.
    before = cpu(proc.pid)
    time.sleep(idle)
    idle_cpu = cpu(proc.pid) - before

    # Latency: one edit at a time, from the rename to the line saying it was pushed.
    doc = os.path.join(tree, "group00", "doc0000.json")
    latencies = []
    for i in range(edits):
        pushed_before = sum(1 for l in lines(out) if l.get("event") == "sync" and l.get("pushed", 0) > 0)
        text = json.load(open(doc))
        text["n"] = 10_000 + i
        tmp = doc + ".swp"
        with open(tmp, "w") as f:
            json.dump(text, f, indent=2)
        start = time.monotonic()
        os.rename(tmp, doc)
        deadline = start + 120
        while sum(1 for l in lines(out) if l.get("event") == "sync" and l.get("pushed", 0) > 0) == pushed_before:
            if time.monotonic() > deadline:
                sys.exit(f"edit {i} not pushed within 120 s: {open(out).read()[-2000:]}")
            time.sleep(0.002)
        latencies.append(time.monotonic() - start)
        time.sleep(0.3)   # let the follow-up look at the stamped file pass
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(timeout=120)
    latencies.sort()
    p95 = latencies[min(len(latencies) - 1, int(round(0.95 * len(latencies))) - 1)]
    print(f"{kind:3}  idle {idle:.0f} s: {idle_cpu:.2f} CPU s   save-to-pushed over {edits} edits: "
          f"median {statistics.median(latencies) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, max {latencies[-1] * 1000:.0f} ms"
          f"   (debounce {debounce or 500} ms, watch exit {code})")
PY
