#!/usr/bin/env python3
"""Validates the JSON document on stdin against a JSON Schema file (draft 2020-12) with
the independent `jsonschema` package (Debian: python3-jsonschema).
Usage: scripts/validate-json.py SCHEMA.json [DOCUMENT.json]   (default: the document on stdin)
Exit: 0 valid; 1 invalid or not JSON (the reasons on stderr); 3 jsonschema is missing."""
import json, sys

try:
    import jsonschema
except ImportError:
    print("validate-json: the python3 jsonschema package is missing (apt-get install python3-jsonschema)", file=sys.stderr)
    sys.exit(3)

with open(sys.argv[1]) as f:
    schema = json.load(f)
try:
    text = open(sys.argv[2]).read() if len(sys.argv) > 2 else sys.stdin.read()
    document = json.loads(text)
except ValueError as e:
    print(f"validate-json: not JSON: {e}", file=sys.stderr)
    sys.exit(1)
validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
for e in errors:
    print(f"validate-json: {'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}", file=sys.stderr)
sys.exit(1 if errors else 0)
