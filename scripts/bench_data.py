#!/usr/bin/env python3
"""Data and tables for scripts/bench.sh.

  bench_data.py generate ROOT N          N records (~525 bytes) in 100 folders, seed 1
  bench_data.py mutate ROOT SEED [ROOT…] edit 1% and delete 0.1% of the *.json files,
                                         the same relative paths in every ROOT
  bench_data.py snapshot ROOT            path, size, mtime of every file outside .git
                                         and .docsync (to prove a no-op did nothing)
  bench_data.py table RESULTS_DIR N      the side-by-side table of one run
"""
import json
import os
import random
import re
import statistics
import sys

FIRST = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia", "Tim"]
LAST = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson", "Perlman", "Berners-Lee"]
WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau".split()


def record(rng, i):
    return {
        "name": f"{rng.choice(FIRST)} {rng.choice(LAST)}",
        "email": f"user{i}@example.org",
        "phone": f"555-{rng.randrange(10000):04d}",
        "address": {"street": f"{rng.randrange(1, 999)} {rng.choice(WORDS).title()} Street",
                    "city": rng.choice(WORDS).title(), "postcode": f"{rng.randrange(100000):05d}"},
        "tags": rng.sample(WORDS, 3),
        "score": rng.randrange(1000),
        "active": rng.random() < 0.8,
        "updated": f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}T{rng.randrange(24):02d}:{rng.randrange(60):02d}:00Z",
        "notes": " ".join(rng.choice(WORDS) for _ in range(36)),
    }


def generate(root, n):
    rng = random.Random(1)
    for i in range(n):
        folder = os.path.join(root, f"group{i % 100:03d}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"doc{i:07d}.json"), "w") as f:
            json.dump(record(rng, i), f, indent=2)
            f.write("\n")


def json_files(root):
    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", ".docsync")]
        out += [os.path.relpath(os.path.join(folder, f), root) for f in files if f.endswith(".json")]
    return sorted(out)


def mutate(seed, roots):
    files = json_files(roots[0])
    rng = random.Random(seed)
    edits = rng.sample(files, max(1, len(files) // 100))
    rest = sorted(set(files) - set(edits))
    deletes = rng.sample(rest, max(1, len(files) // 1000))
    for root in roots:
        for path in edits:
            full = os.path.join(root, path)
            with open(full) as f:
                text = f.read()
            # An edit as a text editor makes it: one value changed, the rest untouched.
            text, n = re.subn(r'"score": \d+', f'"score": {rng.randrange(1000, 100000)}', text, count=1)
            assert n == 1, full
            with open(full, "w") as f:
                f.write(text)
        for path in deletes:
            os.remove(os.path.join(root, path))
    print(f"{len(edits)} edited, {len(deletes)} deleted")


def snapshot(root):
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in (".git", ".docsync"))
        for f in sorted(files):
            st = os.lstat(os.path.join(folder, f))
            print(os.path.relpath(os.path.join(folder, f), root), st.st_size, st.st_mtime_ns)


# Rows of the table: (label, docsync result, [peer results]) by the names bench.sh uses.
# The ratio is to the first peer (the one the targets name); the target is that ratio's ceiling
# (issue 23's: no-op sync to a folder 0.7× rsync, a first push to a folder 2.0×). Memory: at
# most 2× the first peer's peak and at most MEMORY_CEILING_MB.
ROWS = [
    ("no-op status", "status", ["git-status"], 1.0),
    ("no-op sync, folder remote", "noop-folder", ["rsync-noop", "unison-noop"], 0.7),
    ("no-op sync, git remote", "noop-git", ["git-status-fetch"], 1.0),
    ("first push, folder", "push-folder", ["rsync-first", "unison-first"], 2.0),
    ("first push, git", "push-git", ["git-first-push"], 1.0),
    ("push 1% edited + 0.1% deleted, folder", "change-folder", ["rsync-change", "unison-change"], 1.0),
    ("push 1% edited + 0.1% deleted, git", "change-git", ["git-change-push"], 1.0),
    ("pull of that change, folder", "pull-folder", ["rsync-pull"], 1.0),
    ("pull of that change, git", "pull-git", ["git-pull"], 1.0),
    ("clone, folder", "clone-folder", ["rsync-clone"], 1.5),
    ("clone, git", "clone-git", ["git-clone"], 1.0),
]
MEMORY_CEILING_MB = 100


def load(results, name):
    path = os.path.join(results, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        data = json.load(f)["results"][0]
    rss = []
    rss_path = os.path.join(results, name + ".rss")
    if os.path.exists(rss_path):
        with open(rss_path) as f:
            rss = [int(line) for line in f if line.strip().isdigit()]
    return {"median": statistics.median(data["times"]), "runs": len(data["times"]),
            "rss": max(rss) / 1024 if rss else None}


def seconds(t):
    return f"{t * 1000:.0f} ms" if t < 1 else f"{t:.2f} s"


def table(results, n):
    print(f"N = {n:,} documents; medians of hyperfine runs (runs in brackets); peak RSS in MB")
    print()
    print("| operation | docsync | peers | docsync / peer (target) | peak RSS MB docsync / peer |")
    print("|---|---|---|---|---|")
    for label, mine, peers, target in ROWS:
        d = load(results, mine)
        found = [(p, load(results, p)) for p in peers]
        found = [(p, r) for p, r in found if r]
        if not d:
            continue
        peer_text = ", ".join(f"{p.split('-')[0]} {seconds(r['median'])} ({r['runs']})" for p, r in found) or "n/a"
        best = found[0] if found and found[0][0] == peers[0] else None
        if best:
            r = d["median"] / best[1]["median"]
            ratio = f"{r:.2f}× (≤ {target}×{'' if r <= target else ', not met'})"
        else:
            ratio = "n/a"
        rss_peer = best[1]["rss"] if best else None
        rss = f"{d['rss']:.0f} / {rss_peer:.0f}" if d["rss"] and rss_peer else (f"{d['rss']:.0f} / n/a" if d["rss"] else "n/a")
        if d["rss"] and (d["rss"] > MEMORY_CEILING_MB or (rss_peer and d["rss"] > 2 * rss_peer)):
            rss += " (not met)"
        print(f"| {label} | {seconds(d['median'])} ({d['runs']}) | {peer_text} | {ratio} | {rss} |")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "generate":
        generate(sys.argv[2], int(sys.argv[3]))
    elif cmd == "mutate":
        mutate(int(sys.argv[3]), [sys.argv[2]] + sys.argv[4:])
    elif cmd == "snapshot":
        snapshot(sys.argv[2])
    elif cmd == "table":
        table(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit(f"bench_data.py: unknown command {cmd}")
