#!/usr/bin/env bash
# What a sparse replica costs next to a full one (docs/SYNC.md, "A replica that keeps only
# part of the remote"): N documents in 100 folders (bench_data.py), one replica pushes
# them, then a full clone and a clone keeping 10 of the folders (`--sparse 'group00*/'`,
# 10%) are timed side by side: the clone, a sync after 1% of the documents changed on the
# remote, a no-op sync, status, and (sparse only) widening by 10 more folders. Each timed
# run prints wall time, CPU and peak RSS (/usr/bin/time); disk is `du` of the tree's files
# and of its .docsync. Both remote kinds unless one is given.
#
#   scripts/bench-sparse.sh BINARY N DIR [dir|git]
#
# DIR must not exist; nothing is removed afterwards.
set -euo pipefail
B=$(realpath "$1") N=$2 W=$3 KINDS=${4:-dir git}
data="$(cd "$(dirname "$0")" && pwd)/bench_data.py"
[ ! -e "$W" ] || { echo "$W exists: give a new folder" >&2; exit 2; }
mkdir -p "$W"
timed() { local label=$1; shift; /usr/bin/time -f "$label: %e s wall, %U user %S sys, %M KB peak" "$@"; }
disk() { # label tree
  local files meta
  files=$(du -sk --exclude=.docsync "$2" | cut -f1)
  meta=$(du -sk "$2/.docsync" | cut -f1)
  echo "$1: $(find "$2" -name '*.json' -not -path '*/.docsync/*' | wc -l) documents, files ${files} KB, .docsync ${meta} KB"
}
for kind in $KINDS; do
  echo "== $kind remote, $N documents"
  w="$W/$kind"
  mkdir -p "$w"
  python3 "$data" generate "$w/server" "$N"
  if [ "$kind" = git ]; then
    git init -q --bare "$w/remote.git"
    url="$w/remote.git"
  else
    url="$w/remote"
  fi
  "$B" init -q --remote "$url" "$w/server"
  timed "first push (server)" "$B" -C "$w/server" push --quiet
  timed "clone, full" "$B" clone -q "$url" "$w/full"
  timed "clone, sparse 10 pct" "$B" clone -q --sparse 'group00*/' "$url" "$w/sparse"
  disk "full" "$w/full"
  disk "sparse" "$w/sparse"
  python3 "$data" mutate "$w/server" 501 >/dev/null
  "$B" -C "$w/server" push --quiet
  timed "sync after 1 pct changed, full" "$B" -C "$w/full" sync --quiet
  timed "sync after 1 pct changed, sparse" "$B" -C "$w/sparse" sync --quiet
  timed "no-op sync, full" "$B" -C "$w/full" sync --quiet
  timed "no-op sync, sparse" "$B" -C "$w/sparse" sync --quiet
  timed "status, full" "$B" -C "$w/full" status --quiet
  timed "status, sparse" "$B" -C "$w/sparse" status --quiet
  timed "sparse add 10 pct more" "$B" -C "$w/sparse" sparse add --quiet 'group01*/'
  timed "sparse remove those 10 pct again" "$B" -C "$w/sparse" sparse remove --quiet 'group01*/'
  disk "sparse after add and remove" "$w/sparse"
done
