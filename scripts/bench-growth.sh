#!/usr/bin/env bash
# How docsync's runs grow with the number of documents, without the peers: one folder
# remote, timed the way bench.sh times its rows, at whatever size is given. Run it at two
# sizes with the same build and compare (docs/PERFORMANCE.md, "The small runs at
# 1,000,000 again").
#
#   scripts/bench-growth.sh BINARY N ROUNDS DIR
#
# Generates N documents into DIR/tree (as bench.sh does), `init`s it against DIR/remote
# and pushes it (first push), settles it, clones it into DIR/tree2 (clone) and settles
# that, then ROUNDS times: edits 1% and deletes 0.1% of the tree (bench_data.py mutate),
# pushes, and pulls into the clone. Each timed run prints its wall time, CPU and peak RSS
# (/usr/bin/time). DIR must not exist; nothing is removed afterwards (on ext4, creating
# files soon after a mass delete is slow, which would skew the next run).
set -euo pipefail
B=$1 N=$2 ROUNDS=$3 W=$4
data="$(cd "$(dirname "$0")" && pwd)/bench_data.py"
[ ! -e "$W" ] || { echo "$W exists: give a new folder" >&2; exit 2; }
mkdir -p "$W"
python3 "$data" generate "$W/tree" "$N"
"$B" init -q --remote "$W/remote" "$W/tree"
/usr/bin/time -f "first push: %e s wall, %U user %S sys, %M KB peak" "$B" -C "$W/tree" push --quiet
"$B" -C "$W/tree" sync --quiet; sleep 2; "$B" -C "$W/tree" sync --quiet
/usr/bin/time -f "clone: %e s wall, %U user %S sys, %M KB peak" "$B" clone -q "$W/remote" "$W/tree2"
sleep 2; "$B" -C "$W/tree2" sync --quiet
seed=500
for r in $(seq "$ROUNDS"); do
  seed=$((seed + 1))
  python3 "$data" mutate "$W/tree" "$seed" >/dev/null
  /usr/bin/time -f "push round $r: %e s wall, %U user %S sys, %M KB peak" "$B" -C "$W/tree" push --quiet
  /usr/bin/time -f "pull round $r: %e s wall, %U user %S sys, %M KB peak" "$B" -C "$W/tree2" pull --quiet
done
