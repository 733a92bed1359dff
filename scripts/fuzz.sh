#!/usr/bin/env bash
# Builds and runs the libFuzzer targets in Fuzz/ (see Fuzz/RESULTS.md).
#
#   scripts/fuzz.sh [--seconds N] [--build-only] [--merge] [--no-asan] [TARGET...]
#
# Targets: scanner stamper journal jsonvalue (default: all, one after the other, never
# in parallel). Each runs for N seconds (default 60) on its corpus Fuzz/corpus/<target>,
# with new inputs kept in .build-fuzz/corpus/<target> (not in git: merge the useful ones
# back with `scripts/fuzz.sh --merge TARGET`). Crashers land in .build-fuzz/crashes/.
#
# The harnesses are compiled with swiftc together with the engine sources they exercise
# (one module, so internal API is reachable) and -sanitize=fuzzer,address. The package's
# own dependencies (swift-collections, swift-crypto) come from a release build in the
# scratch directory .build-fuzz/spm, so the default .build is never touched and
# `swift build` / `swift test` are unaffected.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
# The Swift runtime's crash backtracer fights with ASan's; libFuzzer reports crashes itself.
export SWIFT_BACKTRACE=enable=no

SECONDS_PER_TARGET=60
BUILD_ONLY=0
MERGE=0
SANITIZE="fuzzer,address"
TARGETS=()
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) SECONDS_PER_TARGET="$2"; shift 2 ;;
        --build-only) BUILD_ONLY=1; shift ;;
        --merge) MERGE=1; shift ;;
        --no-asan) SANITIZE="fuzzer"; shift ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
        *) TARGETS+=("$1"); shift ;;
    esac
done
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(scanner stamper journal jsonvalue)

OUT=.build-fuzz
SPM="$OUT/spm/release"
mkdir -p "$OUT/bin" "$OUT/crashes" "$OUT/logs"

# Engine sources each target is built from (plus Fuzz/Common.swift, Fuzz/ScannerChecks.swift and the harness).
ENGINE=Sources/DocSyncKit
JSONLAYER=Sources/DocSyncJSON
SOURCES_JSON=("$JSONLAYER"/JSONScanner.swift "$JSONLAYER"/JSONStringDecoding.swift "$JSONLAYER"/IdentityStamper.swift "$JSONLAYER"/JSONValue*.swift
              "$JSONLAYER"/FieldMerge.swift "$JSONLAYER"/ArrayMerge.swift "$JSONLAYER"/SequenceMerge.swift)
SOURCES_JOURNAL=("$ENGINE/Support/ChecksummedLines.swift" "$ENGINE/Support/ContentHash.swift"
                 "$ENGINE/Support/FileSystem.swift" "$ENGINE/State/Journal.swift"
                 "$ENGINE/State/JournalEntry.swift" "$ENGINE/State/DocVersion.swift"
                 "$ENGINE/Sync/Reconciler.swift" "$ENGINE/Identity/ChangesetID.swift")

harness_of() {
    case "$1" in
        scanner) echo Fuzz/ScannerFuzz.swift ;;
        stamper) echo Fuzz/StamperFuzz.swift ;;
        journal) echo Fuzz/JournalFuzz.swift ;;
        jsonvalue) echo Fuzz/JSONValueFuzz.swift ;;
        *) echo "fuzz.sh: unknown target $1 (scanner stamper journal jsonvalue)" >&2; exit 2 ;;
    esac
}

build_deps() {
    # Release builds of the dependency modules only, from the package's pinned versions
    # (resolved from SwiftPM's local cache when offline).
    if [ ! -f "$SPM/Modules/Crypto.swiftmodule" ] || [ ! -f "$SPM/Modules/Collections.swiftmodule" ]; then
        echo "fuzz.sh: building dependency modules in $OUT/spm" >&2
        swift build --scratch-path "$OUT/spm" -c release --target Collections >&2
        swift build --scratch-path "$OUT/spm" -c release --target Crypto >&2
    fi
}

build_target() {
    local target="$1" harness
    harness=$(harness_of "$target")
    local bin="$OUT/bin/$target-fuzz"
    local sources=(Fuzz/Common.swift Fuzz/ScannerChecks.swift "$harness" "${SOURCES_JSON[@]}")
    [ "$target" = journal ] && sources+=("${SOURCES_JOURNAL[@]}")
    # Rebuild only when a source is newer than the binary.
    if [ -x "$bin" ] && [ -z "$(find "${sources[@]}" "$0" -newer "$bin" 2>/dev/null)" ]; then return; fi
    build_deps
    local objects=()
    for dir in Crypto CCryptoBoringSSL CCryptoBoringSSLShims CryptoBoringWrapper \
               Collections OrderedCollections DequeModule BitCollections HashTreeCollections HeapModule \
               _RopeModule InternalCollectionsUtilities ContainersPreview BasicContainers TrailingElementsModule; do
        [ -d "$SPM/$dir.build" ] || continue
        while IFS= read -r -d '' o; do objects+=("$o"); done < <(find "$SPM/$dir.build" -name '*.o' -print0)
    done
    echo "fuzz.sh: compiling $bin" >&2
    swiftc -sanitize="$SANITIZE" -parse-as-library -O -g -module-name DocSyncFuzz -use-ld=lld \
        -I "$SPM/Modules" -I Sources/CLibGit2 \
        "${sources[@]}" "${objects[@]}" -lstdc++ -o "$bin"
}

run_target() {
    local target="$1" bin="$OUT/bin/$1-fuzz"
    local seeds="Fuzz/corpus/$target" work="$OUT/corpus/$target"
    mkdir -p "$work" "$seeds"
    local dict=(-dict=Fuzz/json.dict)
    [ "$target" = journal ] && dict=(-dict=Fuzz/journal.dict)
    if [ "$MERGE" = 1 ]; then
        # Minimizes the checked-in corpus: keeps the smallest set of seeds and found
        # inputs that covers everything they cover together.
        local merged="$OUT/merged/$target"
        rm -rf "$merged"; mkdir -p "$merged"
        # Edge coverage only (-use_counters=0) and a set-cover merge keep this to a few
        # hundred small files; the full feature set lives on in .build-fuzz/corpus.
        "$bin" -set_cover_merge=1 -use_counters=0 -max_len=65536 -timeout=10 -rss_limit_mb=2048 "$merged" "$seeds" "$work"
        rm -f "$seeds"/*
        cp "$merged"/* "$seeds"/
        echo "fuzz.sh: $target corpus now $(ls "$seeds" | wc -l) files" >&2
        return
    fi
    local log="$OUT/logs/$target-$(date +%Y%m%d-%H%M%S).log"
    echo "fuzz.sh: fuzzing $target for ${SECONDS_PER_TARGET}s (log: $log)" >&2
    set +e
    "$bin" -max_total_time="$SECONDS_PER_TARGET" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$OUT/crashes/$target-" "${dict[@]}" "$work" "$seeds" 2>&1 | tee "$log" | grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|stat::|==[0-9]+==|FUZZ PROPERTY|artifact_prefix|Test unit written|SUMMARY)' >&2
    local status=${PIPESTATUS[0]}
    set -e
    echo "fuzz.sh: $target exited $status" >&2
    return "$status"
}

failed=0
for target in "${TARGETS[@]}"; do
    build_target "$target"
    [ "$BUILD_ONLY" = 1 ] && continue
    run_target "$target" || failed=1
done
exit "$failed"
