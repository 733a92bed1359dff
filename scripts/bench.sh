#!/usr/bin/env bash
# Prints how long a no-op sync takes on N documents, beside `git status` and an rsync
# dry run over the same folder. Usage: scripts/bench.sh [N] (default 10000).
# Uses the release build (built if missing).
set -euo pipefail
N=${1:-10000}
here=$(cd "$(dirname "$0")/.." && pwd)
bin="$here/.build-release/release/docsync"
[ -x "$bin" ] || (cd "$here" && swift build -c release --scratch-path .build-release >/dev/null)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work/tree" "$N" <<'PY'
import os, sys, json
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, f"group{i % 100:03d}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"doc{i:06d}.json"), "w") as f:
        json.dump({"name": f"record {i}", "tags": ["a", "b"], "n": i, "notes": "x" * 200}, f, indent=2)
PY
secs() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s.%N); echo "$e - $s" | bc; }
best() { local b=999; for _ in 1 2 3; do t=$(secs "$@"); b=$(echo "if ($t < $b) $t else $b" | bc); done; printf '%.3f' "$b"; }
rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }

"$bin" init -q --remote "$work/remote" "$work/tree"
first=$(secs "$bin" -C "$work/tree" sync --quiet)
"$bin" -C "$work/tree" sync --quiet   # settles racy stat-cache entries
noop=$(best "$bin" -C "$work/tree" sync --quiet)
noop_rss=$(rss "$bin" -C "$work/tree" sync --quiet)
status=$(best "$bin" -C "$work/tree" status)

git -C "$work/tree" init -q && git -C "$work/tree" config gc.auto 0 && git -C "$work/tree" add -A . && git -C "$work/tree" -c user.name=b -c user.email=b@b commit -qm init
git -C "$work/tree" status >/dev/null
gitstatus=$(best git -C "$work/tree" status --porcelain)
mkdir -p "$work/mirror" && rsync -a --exclude .git --exclude .docsync "$work/tree/" "$work/mirror/"
rsyncnoop=$(best rsync -a --dry-run --exclude .git --exclude .docsync "$work/tree/" "$work/mirror/")

printf '%-34s %10s\n' "N=$N documents" "seconds"
printf '%-34s %10.3f\n' "docsync first sync (stamp + push)" "$first"
printf '%-34s %10s   (max RSS %s KiB)\n' "docsync sync, nothing to do" "$noop" "$noop_rss"
printf '%-34s %10s\n' "docsync status" "$status"
printf '%-34s %10s\n' "git status --porcelain" "$gitstatus"
printf '%-34s %10s\n' "rsync -a --dry-run (no changes)" "$rsyncnoop"
