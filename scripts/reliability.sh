#!/usr/bin/env bash
# Builds docsync and runs every reliability suite, then prints a summary of the figures
# they report (lines starting with "RELIABILITY " in the test output).
#
#   scripts/reliability.sh           short mode (what the normal test suite runs)
#   scripts/reliability.sh --long    long mode: 200 random kills per remote kind, fuzzer
#                                    with 3 seeds x 3,400 = 10,200 operations per remote
#                                    kind, more rounds and fill levels, a field merge of
#                                    a 50 MB document
#
# Environment: DOCSYNC_SCRATCH (build folder, default .build-rel), DOCSYNC_FUZZ_SEEDS
# (long mode, default 3), DOCSYNC_FUZZ_OPS (long mode, default 3400), DOCSYNC_KILLS,
# DOCSYNC_KILL_SEED, DOCSYNC_FUZZ_SEED (replay one seed). See docs/RELIABILITY.md.
set -u
cd "$(dirname "$0")/.."
export PATH=/opt/swift/usr/bin:$PATH

long=0
case "${1:-}" in
    --long) long=1 ;;
    "") ;;
    *) echo "usage: $0 [--long]" >&2; exit 2 ;;
esac

scratch=${DOCSYNC_SCRATCH:-$PWD/.build-rel}
echo "== building (scratch path $scratch)"
swift build --build-tests --scratch-path "$scratch" 2>&1 | tail -3
if [ "${PIPESTATUS[0]}" -ne 0 ]; then echo "build failed" >&2; exit 1; fi
export DOCSYNC_BIN="$scratch/debug/docsync"

if [ $long = 1 ]; then
    export DOCSYNC_RELIABILITY_LONG=1
    export DOCSYNC_FUZZ_OPS=${DOCSYNC_FUZZ_OPS:-3400}
    export DOCSYNC_FUZZ_SEEDS=${DOCSYNC_FUZZ_SEEDS:-3}
fi

logdir="$scratch/reliability-logs/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$logdir"
results=()
failed=0

# name | swift test --filter regex
suites=(
    "crash-points|CrashRecoveryTests|CrashKillTests"
    "random-kills|RandomKillTests"
    "fuzzer|ConvergenceFuzzTests"
    "concurrency|ConcurrencyTests"
    "hostile-input|HostileInputTests|HostileRemoteTests|InvalidJSONTests"
    "gc|GCLocalTests|GCTombstoneTests|FeedCompactionTests"
    "corruption|CorruptionTests|FullDiskTests|ReliabilityEngineTests|StabilityAndRecoveryTests|JournalTests"
)

for entry in "${suites[@]}"; do
    name=${entry%%|*}
    filter=${entry#*|}
    echo "== $name ($filter)"
    start=$(date +%s)
    swift test --skip-build --scratch-path "$scratch" --filter "$filter" > "$logdir/$name.log" 2>&1
    status=$?
    seconds=$(( $(date +%s) - start ))
    passed=$(grep -cE '^✔ Test ' "$logdir/$name.log")
    issues=$(grep -cE '^✘ Test .* recorded an issue' "$logdir/$name.log")
    if [ $status -eq 0 ]; then verdict=passed; else verdict=FAILED; failed=1; fi
    results+=("$(printf '%-14s %-7s %5ss  %3s tests passed, %s issues' "$name" "$verdict" "$seconds" "$passed" "$issues")")
    if [ $status -ne 0 ]; then grep -E '^✘' "$logdir/$name.log" | head -20; fi
done

figures="$logdir/figures.txt"
cat "$logdir"/*.log | grep -ho 'RELIABILITY .*' | sed 's/^RELIABILITY //' > "$figures"

echo
echo "=================== docsync reliability summary ($([ $long = 1 ] && echo long || echo short) mode) ==================="
echo "commit $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo '+local changes'), $(date -u +%Y-%m-%dT%H:%MZ), logs in $logdir"
echo
printf '%s\n' "${results[@]}"

field() { awk -v k="$1" '{ for (i = 1; i <= NF; i++) { split($i, a, "="); if (a[1] == k) print a[2] } }'; }

echo
echo "Crash points (SIGKILL, or a thrown stop in-process, at each named step; then recover):"
grep '^crash-point ' "$figures" | awk '{
    split($0, f, " "); kind=""; point=""; killed=0
    for (i in f) { split(f[i], kv, "="); if (kv[1]=="kind") kind=kv[2]; if (kv[1]=="point") point=kv[2]; if (kv[1]=="killed") killed=kv[2] }
    n[point]++; k[point]+=killed; kinds[point]=kinds[point] " " kind
} END { for (p in n) printf "  %-26s %d survived (%s )\n", p, k[p], kinds[p] }' | sort

echo
echo "Random-time kills (large syncs of 300+ documents):"
grep '^random-kills ' "$figures" | while read -r line; do
    printf '  %-4s remote: %s kills survived, %s runs finished before their kill, %s runs in all, seed %s\n' \
        "$(echo "$line" | field kind)" "$(echo "$line" | field kills)" "$(echo "$line" | field finished_before_kill)" \
        "$(echo "$line" | field runs)" "$(echo "$line" | field seed)"
    printf '        wanted %s kills (each one a run that died of SIGKILL, exit 137); kill after (ms, min/median/max): %s\n' \
        "$(echo "$line" | field wanted)" "$(echo "$line" | field kill_after_ms_min/median/max)"
    printf '        killed during: %s\n' "$(echo "$line" | field phases | tr ',' ' ')"
done

echo
echo "Convergence fuzzer (3 replicas, model-checked at every quiescent point):"
grep '^fuzz ' "$figures" | awk '{
    for (i=2; i<=NF; i++) { split($i, kv, "="); v[kv[1]]=kv[2] }
    kind=v["kind"]; seeds[kind]++; ops[kind]+=v["ops"]; syncs[kind]+=v["syncs"]; checks[kind]+=v["quiescent_checks"]; list[kind]=list[kind] " " v["seed"]
    gcs[kind]+=v["gcs"]; purged[kind]+=v["purged"]
} END { for (k in seeds) printf "  %-4s remote: %d seeds x %d ops = %d ops, %d syncs, %d gc runs purging %d tombstones, %d quiescent checks (seeds%s)\n", k, seeds[k], ops[k]/seeds[k], ops[k], syncs[k], gcs[k], purged[k], checks[k], list[k] }'

echo
echo "Concurrent runs:"
grep '^concurrency ' "$figures" | sed 's/^concurrency /  /'

echo
echo "Hostile input:"
grep -E '^hostile(-big|-remote)? ' "$figures" | sed 's/^/  /'

echo
echo "Full disk (tmpfs):"
if grep -q '^full-disk ' "$figures"; then grep '^full-disk ' "$figures" | sed 's/^full-disk /  /'; else echo "  no figures (see Skipped below)"; fi

# Suites whose prerequisite (sshd, the HTTPS server, a tmpfs) was missing print a
# "SKIPPED: …" line; with CI=true they fail instead.
echo
echo "Skipped:"
if cat "$logdir"/*.log | grep -h '^SKIPPED: ' | sort -u | sed 's/^/  /' | grep .; then :; else echo "  nothing"; fi

echo
if [ $failed -eq 0 ]; then echo "ALL RELIABILITY SUITES PASSED"; else echo "SOME RELIABILITY SUITES FAILED (see $logdir)"; fi
exit $failed
