#!/usr/bin/env bash
# How long `docsync check` takes on N records (default 100,000), beside reading the same
# files and Python's jsonschema validating them, in one run. docs/SCHEMA.md#speed.
#   scripts/bench-check.sh [N]     DOCSYNC_BIN: the binary (default: release build, built if missing)
# Times are the best of 3 runs (wall clock, warm cache); RSS is the peak of one run.
set -euo pipefail
N=${1:-100000}
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${DOCSYNC_BIN:-$here/.build-release/release/docsync}
if [ ! -x "$bin" ]; then
    (cd "$here" && swift build -c release --static-swift-stdlib --product docsync --scratch-path .build-release >/dev/null)
    bin=$here/.build-release/release/docsync
fi
work=$(mktemp -d /tmp/docsync-bench-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/records"
# Records of ~525 bytes in 100 folders with a fixed seed; one in 1,000 breaks the schema,
# so every tool has errors to find and report. No `multipleOf` on prices: Python's
# jsonschema divides in floating point and calls 19.99 not a multiple of 0.01 (it found
# 13,752 such "invalid" records of 100,000), so the two would not check the same thing.
python3 - "$work" "$N" <<'PY'
import json, os, random, sys
work, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(12)
schema = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object", "required": ["name", "email", "status", "qty", "created"],
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 100},
        "email": {"type": "string", "format": "email"},
        "status": {"enum": ["open", "done", "waiting"]},
        "qty": {"type": "integer", "minimum": 0, "maximum": 1000000},
        "price": {"$ref": "#/$defs/money"},
        "created": {"type": "string", "format": "date-time"},
        "code": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True, "maxItems": 10},
        "notes": {"type": "string"},
    },
    "additionalProperties": False,
    "$defs": {"money": {"type": "number", "minimum": 0, "maximum": 1000}},
}
json.dump(schema, open(os.path.join(work, "schema.json"), "w"), indent=2)
for i in range(n):
    d = os.path.join(work, "records", f"group{i % 100:03d}")
    os.makedirs(d, exist_ok=True)
    rec = {"name": f"record {i}", "email": f"user{i}@example.com", "status": rng.choice(["open", "done", "waiting"]),
           "qty": rng.randrange(1000), "price": round(rng.random() * 100, 2), "created": "2026-11-23T20:44:33Z",
           "code": f"ABC-{i % 10000:04d}", "tags": ["a", "b", f"t{i % 7}"], "notes": "x" * 220}
    if i % 1000 == 999:
        rec["qty"] = -1
    with open(os.path.join(d, f"doc{i:06d}.json"), "w") as f:
        json.dump(rec, f, indent=2)
PY
cat > "$work/py_validate.py" <<'PY'
import json, os, sys
from jsonschema import Draft202012Validator, FormatChecker
schema = json.load(open(sys.argv[1]))
validator = Draft202012Validator(schema, format_checker=FormatChecker())
invalid = 0
for folder, _, names in os.walk(sys.argv[2]):
    for name in names:
        if name.endswith(".json"):
            with open(os.path.join(folder, name), "rb") as f:
                errors = list(validator.iter_errors(json.loads(f.read())))
            invalid += bool(errors)
print(invalid)
PY

secs() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s.%N); echo "$e - $s" | bc; }
best() { local b=999 t; for _ in 1 2 3; do t=$(secs "$@"); b=$(echo "if ($t < $b) $t else $b" | bc); done; printf '%.2f' "$b"; }
rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }
row() { printf '%-52s %8s s  %8s KiB\n' "$1" "$2" "$3"; }

cd "$work"
# The answers first: each checker must find the same invalid records.
expected=$(( N / 1000 ))
found=$("$bin" check --json --schema schema.json records | python3 -c 'import json,sys; print(json.load(sys.stdin)["invalid"])' || true)
pyfound=$(python3 py_validate.py schema.json records)
[ "$found" = "$expected" ] || { echo "docsync check found $found invalid records, expected $expected" >&2; exit 1; }
[ "$pyfound" = "$expected" ] || { echo "python jsonschema found $pyfound invalid records, expected $expected" >&2; exit 1; }

catall() { find records -name '*.json' -print0 | xargs -0 cat >/dev/null; }
echo "N=$N records ($(du -sh records | cut -f1)), $expected invalid; $(nproc) cores; best of 3"
row "read them all (find | xargs cat)" "$(best catall)" "-"
row "docsync check, no schema (read + parse)" "$(best "$bin" check records)" "$(rss "$bin" check records)"
row "docsync check --schema (read + parse + validate)" "$(best "$bin" check --schema schema.json records)" "$(rss "$bin" check --schema schema.json records)"
row "python3 jsonschema $(python3 -c 'import importlib.metadata as m; print(m.version("jsonschema"))') (read + parse + validate)" "$(best python3 py_validate.py schema.json records)" "$(rss python3 py_validate.py schema.json records)"
