#!/usr/bin/env bash
# The long run of the model check (Tests/DocsyncCLITests/ModelCheck, docs/RELIABILITY.md#model-check):
# seeds one after another, per remote kind, until each kind has run at least --ops
# operations, then a table of figures. Every run checks the built binary against the
# reference model after every step; the first mismatch prints its seed, a diff and the
# step log, and the script says how to replay it.
#
# Exits non-zero if any run failed, and also if a run died: the test process crashed or
# was killed (exit status above 128), or a run printed no `MODELCHECK kind=…` figures line.
#
#   scripts/model-check.sh [--ops N] [--per-seed N] [--kind folder|git|daemon|drive|drive-forks|all] [--seed S] [--strict] [--no-build] [--frozen] [--release]
#
#   --ops N        operations per remote kind in total (default 100000)
#   --per-seed N   operations per seed (default 2000)
#   --kind K       folder, git (bare repository by path), daemon (git daemon on 127.0.0.1),
#                  drive (each replica on its own copy of a folder remote, a sync service
#                  copying files between the copies before each run: ModelDriveService.swift),
#                  drive-forks (DriveModelCheckTests, the drive's own smaller model: partial,
#                  out-of-order copies and runs before the files arrived, so forks),
#                  all (default: the five in turn; `both` means folder and git)
#   --seed S       first seed (default: random); the next ones are S+1, S+2, …
#   --strict       known engine defects fail too (DOCSYNC_MODEL_KNOWN_DEFECTS=none)
#   --keep-going   go on with the next seed after a failing one
#   --frozen       copy the test binary and docsync into the log folder and run those copies,
#                  so the package can be rebuilt while a long run goes on
#   --release      check the release build, linked statically as README's install says
#                  (`swift build -c release --static-swift-stdlib`, in .build-release as the
#                  benchmarks do): every step starts several docsync processes, and that
#                  build starts and runs them about twice as fast as the debug one
#   DOCSYNC_BIN    the binary to check (default: this package's .build/debug/docsync)
#   SCRATCH        SwiftPM scratch path (default .build)
set -u
cd "$(dirname "$0")/.."

ops=100000 per_seed=2000 kinds="folder git daemon drive drive-forks" seed="" strict=0 build=1 keep_going=0 frozen=0 release=0
while [ $# -gt 0 ]; do
    case "$1" in
        --ops) ops=$2; shift ;;
        --per-seed) per_seed=$2; shift ;;
        --kind)
            case "$2" in
                both) kinds="folder git" ;;
                all) kinds="folder git daemon drive drive-forks" ;;
                folder|git|daemon|drive|drive-forks) kinds=$2 ;;
                *) echo "model-check.sh: --kind folder|git|daemon|drive|drive-forks|all, not $2" >&2; exit 2 ;;
            esac
            shift ;;
        --seed) seed=$2; shift ;;
        --strict) strict=1 ;;
        --keep-going) keep_going=1 ;;
        --no-build) build=0 ;;
        --frozen) frozen=1 ;;
        --release) release=1 ;;
        -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
        *) echo "model-check.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
scratch=${SCRATCH:-.build}
export PATH=/opt/swift/usr/bin:$PATH
if [ "$build" = 1 ]; then
    swift build --build-tests --scratch-path "$scratch" >/dev/null || { echo "build failed" >&2; exit 1; }
fi
if [ "$release" = 1 ]; then
    if [ "$build" = 1 ]; then
        swift build -c release --static-swift-stdlib --product docsync --scratch-path .build-release >/dev/null \
            || { echo "release build failed" >&2; exit 1; }
    fi
    DOCSYNC_BIN=${DOCSYNC_BIN:-$PWD/.build-release/release/docsync}
fi
export DOCSYNC_BIN=${DOCSYNC_BIN:-$PWD/$scratch/debug/docsync}
[ "$strict" = 1 ] && export DOCSYNC_MODEL_KNOWN_DEFECTS=none
[ -n "$seed" ] || seed=$(( (RANDOM << 15 | RANDOM) + 1 ))
out=$(mktemp -d /tmp/docsync-model-check.XXXXXX)
# Readable by everyone: the model check runs some syncs as an unprivileged user (uid 65534),
# which must be able to run the frozen binary kept here.
chmod 755 "$out"
tests="$PWD/$scratch/debug/docsyncPackageTests.xctest"
if [ "$frozen" = 1 ]; then
    cp "$tests" "$out/tests.xctest" && cp "$DOCSYNC_BIN" "$out/docsync" || { echo "cannot copy the binaries" >&2; exit 1; }
    tests="$out/tests.xctest" DOCSYNC_BIN="$out/docsync"
fi
echo "model check: binary $DOCSYNC_BIN, $ops operations per kind ($per_seed per seed), first seed $seed, log in $out"

status=0
start=$(date +%s)
# No pipe around the loop: `status` must survive it (a `while … | tee` runs in a subshell).
say() { echo "$@" | tee -a "$out/summary"; }
for kind in $kinds; do
    done_ops=0 s=$seed runs=0 failed=0 stopped=0
    while [ "$done_ops" -lt "$ops" ]; do
        log="$out/$kind-$s.log"
        # One seed of one kind on purpose: CI=false, so the parts these switches leave out
        # skip (under CI=true a narrowed model check fails, see ProgramPrerequisites.swift).
        t0=$(date +%s)
        if [ "$kind" = drive-forks ]; then
            # The drive's own model: its seed list starts at its own base; --seed S takes its S-th seed.
            CI=false DOCSYNC_DRIVE_MODEL_SEEDS=1 DOCSYNC_DRIVE_MODEL_FIRST=$s DOCSYNC_DRIVE_MODEL_OPS=$per_seed \
                "$tests" --testing-library swift-testing --filter DriveModelCheckTests >"$log" 2>&1
            rc=$?
            line=$(grep '^DRIVEMODEL done' "$log" | tail -1)
            [ -n "$line" ] && line="MODELCHECK kind=drive-forks ${line#DRIVEMODEL done } seconds=$(( $(date +%s) - t0 ))"
        else
            # Not DriveModelCheckTests: its name contains "ModelCheckTests" too.
            CI=false DOCSYNC_MODEL_SEED=$s DOCSYNC_MODEL_OPS=$per_seed DOCSYNC_MODEL_KIND=$kind \
                "$tests" --testing-library swift-testing --filter 'DocsyncCLITests.ModelCheckTests' >"$log" 2>&1
            rc=$?
            line=$(grep '^MODELCHECK kind=' "$log" | tail -1)
        fi
        steps=$(sed -n 's/.* steps=\([0-9]*\).*/\1/p' <<<"$line")
        runs=$((runs + 1))
        if [ $rc -gt 128 ] || [ -z "$steps" ]; then
            # The run died: the test process crashed or was killed, or it never printed figures.
            failed=$((failed + 1)); status=1
            if [ $rc -gt 128 ]; then why="the test process died of signal $((rc - 128))"; else why="no MODELCHECK figures line (exit $rc)"; fi
            say "FAILED: $kind seed $s died: $why (log $log); replay: DOCSYNC_MODEL_SEED=$s DOCSYNC_MODEL_OPS=$per_seed DOCSYNC_MODEL_KIND=$kind swift test --filter ModelCheck"
            tail -5 "$log"
            [ "$keep_going" = 1 ] || break
            done_ops=$(( done_ops + ${steps:-0} ))
            [ "${steps:-0}" -gt 0 ] || break   # no progress: the next seed would die the same way
            s=$((s + 1)); continue
        fi
        done_ops=$(( done_ops + steps ))
        say "$line"
        echo "$line" >>"$out/figures"
        if grep -q 'stopped="known' <<<"$line"; then stopped=$((stopped + 1)); fi
        if [ $rc -ne 0 ] || grep -q 'stopped="failure' <<<"$line" || [ "$steps" = 0 ]; then
            failed=$((failed + 1)); status=1
            say "FAILED: $kind seed $s (exit $rc, log $log); replay: DOCSYNC_MODEL_SEED=$s DOCSYNC_MODEL_OPS=$per_seed DOCSYNC_MODEL_KIND=$kind swift test --filter ModelCheck"
            sed -n '/^MODEL MISMATCH/,/^replay/p' "$log" | head -60
            [ "$keep_going" = 1 ] || break
        fi
        s=$((s + 1))
    done
    say "MODELCHECK-TOTAL kind=$kind operations=$done_ops runs=$runs failed=$failed stoppedByKnownDefect=$stopped"
done

echo
echo "== figures per kind (from $out/figures) =="
for kind in $kinds; do
    grep "^MODELCHECK kind=$kind " "$out/figures" 2>/dev/null | awk -v kind="$kind" '
        { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
          steps += v["steps"]; secs += v["seconds"]; conf += v["conflicts"]; dve += v["deleteVsEdit"];
          kills += v["kills"]; tries += v["crashAttempts"]; conc += v["concurrentSteps"];
          rk += v["randomKills"]; rkt += v["randomKillsTried"]; n++ }
        END { printf "%-6s %d runs, %d steps, %d conflicts, %d delete-vs-edit, %d concurrent steps, crash points: %d SIGKILLs landed of %d tried, random-time SIGKILLs: %d landed of %d tried, %.0f s\n",
              kind, n, steps, conf, dve, conc, kills, tries, rk, rkt, secs }'
done
echo "wall time: $(( $(date +%s) - start )) s"
grep -q '^FAILED' "$out/summary" && status=1
exit $status
