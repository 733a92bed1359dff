#!/usr/bin/env bash
# docsync beside the tools a user would otherwise pick (git, rsync, unison), on the same
# generated records, in one run: hyperfine for times (medians), /usr/bin/time for peak RSS.
#
#   scripts/bench.sh [N ...]            default: 10000
#
# Environment:
#   DOCSYNC      the binary to measure (default: the release build with the Swift runtime
#                linked in, as README says to install it; built if missing)
#   DOCSYNC_LABEL  printed beside it (say, the commit it was built from)
#   BENCH_ROOT   where trees go (default /tmp/docsync-bench); each run gets its own folder
#                and nothing is deleted: on ext4 without a journal, creating files within
#                minutes of a mass delete is 5-20x slower, which would skew the next run.
#                Old trees are moved aside (aside/), never removed between timed runs.
#   RUNS         runs of the cheap operations (no-op status and sync; default 5)
#   HEAVY_RUNS   runs of first push and clone (default 3, or 1 when N > 20000)
#   MID_RUNS     runs of the 1% push and pull (default 3, or 2 when N > 20000)
#   FOLDER_FORMAT1  set to measure the folder remote in format 1 too, beside the drive
#                layout (rows ending in -f1)
#   ONLY_FOLDER  set to measure only the folder remote's rows (with SKIP_PEERS: no peers)
#   SKIP_PEERS   set to measure docsync only (the 1,000,000 run: SKIP_PEERS=1
#                scripts/bench.sh 1000000, about 50 minutes on 2 cores)
#
# It checks first that the disk has room for every tree (inodes and space), and stops
# if not.
#
# Every command must exit 0 (hyperfine stops otherwise), and each no-op is checked to
# have changed nothing (tree and remote listings before and after). The table goes to
# stdout; raw hyperfine JSON and RSS figures stay in the run folder.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
data="$here/scripts/bench_data.py"
for tool in hyperfine git rsync python3 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install hyperfine rsync unison time)" >&2; exit 1; }
done
have_unison=$(command -v unison >/dev/null && echo 1 || echo "")
bin=${DOCSYNC:-$here/.build-release/release/docsync}
if [ ! -x "$bin" ]; then
  (cd "$here" && swift build -c release --static-swift-stdlib --product docsync --scratch-path .build-release >&2)
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
root=${BENCH_ROOT:-/tmp/docsync-bench}/run-$(date +%Y%m%d-%H%M%S)
mkdir -p "$root"
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.org GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.org
export GIT_CONFIG_NOSYSTEM=1 HOME="$root/home"
mkdir -p "$HOME"
git config --global gc.auto 0
git config --global init.defaultBranch main
export UNISON="$root/unison"

commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
# The binary may be another build than the checkout (DOCSYNC=...): say which is which.
echo "docsync binary: $bin ($("$bin" --version)${DOCSYNC_LABEL:+, $DOCSYNC_LABEL}); scripts from $commit"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -r), $(git --version), $(rsync --version | head -1 | cut -d' ' -f1-4), $([ -n "$have_unison" ] && unison -version || echo 'no unison')"
echo "trees: $root"

# Room first: each tree is a file per record (4 KiB each on ext4), docsync alone makes
# about 10 trees of N (6 with ONLY_FOLDER), with the peers about 17. Failing after an hour for a full disk
# helps nobody (a 1,000,000 run needs ~45 GB and ~10 million inodes without peers).
for N in "${@:-10000}"; do
  trees=$([ -n "${ONLY_FOLDER:-}" ] && echo 6 || { [ -n "${SKIP_PEERS:-}" ] && echo 10 || echo 17; })
  need_inodes=$((N * trees + 10000)); need_kb=$((N * trees * 4 + 1048576))
  free_inodes=$(df -Pi "$root" | awk 'NR==2 {print $4}'); free_kb=$(df -Pk "$root" | awk 'NR==2 {print $4}')
  if [ "$free_inodes" != "-" ] && [ "$free_inodes" -lt "$need_inodes" ] || [ "$free_kb" -lt "$need_kb" ]; then
    echo "bench: N=$N needs about $need_inodes inodes and $((need_kb / 1048576)) GiB in $root; $free_inodes inodes and $((free_kb / 1048576)) GiB are free" >&2
    exit 1
  fi
done

for N in "${@:-10000}"; do
  W="$root/n$N"; R="$W/results"
  mkdir -p "$W/aside" "$R"
  heavy=${HEAVY_RUNS:-$([ "$N" -gt 20000 ] && echo 1 || echo 3)}
  mid=${MID_RUNS:-$([ "$N" -gt 20000 ] && echo 2 || echo 3)}
  runs=${RUNS:-5}

  # Helpers the prepare commands call (hyperfine runs them through sh).
  cat > "$W/aside.sh" <<EOF
#!/usr/bin/env bash
# Moves trees aside instead of deleting them (see the header of scripts/bench.sh).
for p in "\$@"; do [ -e "\$p" ] && mv "\$p" "$W/aside/\$(date +%s%N)-\$(basename "\$p")"; done; true
EOF
  cat > "$W/mutate.sh" <<EOF
#!/usr/bin/env bash
# Edits 1% and deletes 0.1% of the files, a new choice each call (the seed counts up).
seed=\$(( \$(cat "$W/seed" 2>/dev/null || echo 100) + 1 )); echo \$seed > "$W/seed"
python3 "$data" mutate "\$1" "\$seed" "\${@:2}" >/dev/null
EOF
  chmod +x "$W/aside.sh" "$W/mutate.sh"
  A="$W/aside.sh"; M="$W/mutate.sh"

  # hf NAME RUNS PREPARE COMMAND: times COMMAND, recording each run's peak RSS.
  hf() {
    local name=$1 n=$2 prepare=$3 command=$4 extra=()
    [ -n "$prepare" ] && extra=(--prepare "$prepare")
    [ "$n" -gt 1 ] && [ -z "$prepare" ] && extra=(--warmup 1)
    hyperfine --style basic --runs "$n" "${extra[@]}" --export-json "$R/$name.json" --command-name "$name" \
      "/usr/bin/time -a -o $R/$name.rss -f %M bash -c '$command'" >"$R/$name.log" 2>&1 \
      || { echo "bench: $name failed:"; tail -20 "$R/$name.log"; exit 1; } >&2
    printf '  %-18s %s\n' "$name" "$(python3 -c "import json,statistics;t=json.load(open('$R/$name.json'))['results'][0]['times'];print(f'{statistics.median(t):.3f} s median of {len(t)}')")"
  }
  # noop NAME COMMAND FOLDER...: a no-op, checked to leave FOLDERs as they were.
  noop() {
    local name=$1 command=$2; shift 2
    local before after
    before=$(for f in "$@"; do python3 "$data" snapshot "$f"; done | md5sum)
    hf "$name" "$runs" "" "$command"
    after=$(for f in "$@"; do python3 "$data" snapshot "$f"; done | md5sum)
    [ "$before" = "$after" ] || { echo "bench: $name was not a no-op: files changed" >&2; exit 1; }
  }

  echo "== N=$N: generating"
  python3 "$data" generate "$W/gen" "$N"
  echo "   $(find "$W/gen" -name '*.json' | wc -l) files, $(du -sb "$W/gen" | cut -f1) bytes"

  # ---- folder remote -------------------------------------------------------------
  # folder_rows SUFFIX DIR INIT-FLAGS: the folder remote's rows, in one layout.
  folder_rows() {
    local sfx=$1 D=$2 flags=$3
    hf push-folder$sfx "$heavy" "$A $D && mkdir -p $D && cp -a $W/gen $D/tree && $bin init -q $flags --remote $D/remote $D/tree" \
      "$bin -C $D/tree push --quiet"
    "$bin" -C "$D/tree" sync --quiet; sleep 2; "$bin" -C "$D/tree" sync --quiet   # settle racy index entries
    noop noop-folder$sfx "$bin -C $D/tree sync --quiet" "$D/tree" "$D/remote"
    hf change-folder$sfx "$mid" "$M $D/tree" "$bin -C $D/tree push --quiet"
    hf clone-folder$sfx "$heavy" "$A $D/clone" "$bin clone -q $D/remote $D/clone"
    "$bin" clone -q "$D/remote" "$D/tree2"
    sleep 2; "$bin" -C "$D/tree2" sync --quiet   # the clone's files are racy: re-read once, as for tree
    hf pull-folder$sfx "$mid" "$M $D/tree && $bin -C $D/tree push --quiet" "$bin -C $D/tree2 pull --quiet"
  }
  echo "== folder remote (drive layout, the default)"
  folder_rows "" "$W/df" ""
  # FOLDER_FORMAT1=1: the same rows on a format-1 remote, beside them (the "-f1" rows).
  if [ -n "${FOLDER_FORMAT1:-}" ]; then
    echo "== folder remote (format 1)"
    folder_rows "-f1" "$W/df1" "--remote-format 1"
  fi
  [ -n "${ONLY_FOLDER:-}" ] && continue

  if [ -z "${SKIP_PEERS:-}" ]; then
    mkdir -p "$W/rs" && cp -a "$W/gen" "$W/rs/src"
    hf rsync-first "$heavy" "$A $W/rs/dst" "rsync -a $W/rs/src/ $W/rs/dst/"
    noop rsync-noop "rsync -a $W/rs/src/ $W/rs/dst/" "$W/rs/src" "$W/rs/dst"
    hf rsync-change "$mid" "$M $W/rs/src" "rsync -a --delete $W/rs/src/ $W/rs/dst/"
    hf rsync-clone "$heavy" "$A $W/rs/clone" "rsync -a $W/rs/dst/ $W/rs/clone/"
    rsync -a "$W/rs/dst/" "$W/rs/dst2/"
    hf rsync-pull "$mid" "$M $W/rs/src && rsync -a --delete $W/rs/src/ $W/rs/dst/" "rsync -a --delete $W/rs/dst/ $W/rs/dst2/"
    if [ -n "$have_unison" ]; then
      mkdir -p "$W/un" && cp -a "$W/gen" "$W/un/src"
      hf unison-first "$heavy" "$A $W/un/dst $UNISON && mkdir -p $W/un/dst" "unison -batch -silent -times $W/un/src $W/un/dst"
      noop unison-noop "unison -batch -silent -times $W/un/src $W/un/dst" "$W/un/src" "$W/un/dst"
      hf unison-change "$mid" "$M $W/un/src" "unison -batch -silent -times $W/un/src $W/un/dst"
    fi
  fi

  # ---- git remote ----------------------------------------------------------------
  echo "== git remote"
  hf push-git "$heavy" "$A $W/dg && mkdir -p $W/dg && cp -a $W/gen $W/dg/tree && git init -q --bare $W/dg/remote.git && $bin init -q --remote $W/dg/remote.git $W/dg/tree" \
    "$bin -C $W/dg/tree push --quiet"
  "$bin" -C "$W/dg/tree" sync --quiet; sleep 2; "$bin" -C "$W/dg/tree" sync --quiet
  noop status "$bin -C $W/dg/tree status >/dev/null" "$W/dg/tree" "$W/dg/remote.git"
  noop noop-git "$bin -C $W/dg/tree sync --quiet" "$W/dg/tree" "$W/dg/remote.git"
  hf change-git "$mid" "$M $W/dg/tree" "$bin -C $W/dg/tree push --quiet"
  hf clone-git "$heavy" "$A $W/dg/clone" "$bin clone -q $W/dg/remote.git $W/dg/clone"
  "$bin" clone -q "$W/dg/remote.git" "$W/dg/tree2"
  sleep 2; "$bin" -C "$W/dg/tree2" sync --quiet   # the clone's files are racy: re-read once
  hf pull-git "$mid" "$M $W/dg/tree && $bin -C $W/dg/tree push --quiet" "$bin -C $W/dg/tree2 pull --quiet"

  if [ -z "${SKIP_PEERS:-}" ]; then
    hf git-first-push "$heavy" "$A $W/g && mkdir -p $W/g && cp -a $W/gen $W/g/tree && git init -q $W/g/tree && git init -q --bare $W/g/remote.git && git -C $W/g/tree remote add origin $W/g/remote.git" \
      "cd $W/g/tree && git add -A && git commit -q -m init && git push -q origin main"
    git -C "$W/g/tree" status --porcelain >/dev/null   # as docsync, settle the index first
    noop git-status "git -C $W/g/tree status --porcelain >/dev/null" "$W/g/tree"
    noop git-status-fetch "git -C $W/g/tree status --porcelain >/dev/null && git -C $W/g/tree fetch -q origin" "$W/g/tree" "$W/g/remote.git"
    hf git-change-push "$mid" "$M $W/g/tree" "cd $W/g/tree && git add -A && git commit -q -m change && git push -q origin main"
    hf git-clone "$heavy" "$A $W/g/clone" "git clone -q --no-local $W/g/remote.git $W/g/clone"
    git clone -q --no-local "$W/g/remote.git" "$W/g/tree2"
    hf git-pull "$mid" "$M $W/g/tree && cd $W/g/tree && git add -A && git commit -q -m change && git push -q origin main" "git -C $W/g/tree2 pull -q --no-rebase origin main"
  fi

  echo
  python3 "$data" table "$R" "$N" | tee "$R/table.md"
  echo
done
echo "Trees kept in $root (remove it later, not right before another run)."
