#!/usr/bin/env python3
"""Writes the starting seed corpora into Fuzz/corpus/<target>/ (run once; the fuzzer and
`scripts/fuzz.sh --merge` grow and minimize them afterwards)."""
import hashlib, json, os, sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")

docs = [
    b'{}', b'{ }', b'{\n}\n', b'{"a":1}', b'{"a": 1}',
    b'{\n  "title": "Hello",\n  "n": 1\n}\n',
    b'{\n    "title": "Hello",\n    "list": [\n        1\n    ]\n}',
    b'{\n\t"title": "Hello"\n}',
    b'{\r\n  "a": "b",\r\n  "c": [1, 2.5, -0, 1e400, 2E-3]\r\n}\r\n',
    b'\xef\xbb\xbf{"bom": true}',
    b'{"refId": "R1", "changesetId": "C1", "title": "x"}',
    b'{\n  "refId": "01J0000000000000000000000A",\n  "changesetId": "0000018f2a3b4c5d-0000-abcd",\n  "tags": ["a", "b"],\n  "done": false,\n  "note": null\n}\n',
    b'{"changesetId":"c","x":{"refId":"inner"}}',
    b'{"name":"\\u00e9t\\u00E9 \\ud83d\\ude00 \\ud800 caf\xc3\xa9 \xf0\x9f\x98\x80","esc":"\\"\\\\\\/\\b\\f\\n\\r\\t"}',
    b'{"deep":[[[[{"a":[{"b":{}}]}]]]],"empty":[],"o":{}}',
    b'{"n":[0,-1,1.0,12345678901234567890,1e-7,-0.5E+10]}',
    b'{"a":1,"a":2,"dup":{"k":1,"k":[2]}}',
    b'{"e\xcc\x81":1,"\xc3\xa9":2}',
    b'  {"lead":"ws"}  \n',
    b'{"title": "x"\n, "n": 1}',
    # Not documents, or not JSON at all.
    b'[1,2,3]', b'"str"', b'42', b'true', b'null', b'',
    b'{"a":1,}', b'{"a" 1}', b'{"a":01}', b'{"a":"\x01"}', b'{"a":"\\x"}', b'{"a":"\xff"}',
    b'{"a":[1,2,]}', b'{"a":tru}', b'{"refId":"a","refId":"b"}', b'{"a":1}x', b'{"a":1}\x00',
    b'[' * 40 + b']' * 40, b'{"a":' * 30 + b'1' + b'}' * 30,
]

def write(target, name, data):
    d = os.path.join(root, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

for i, doc in enumerate(docs):
    write("scanner", "seed-%03d" % i, doc)
    write("jsonvalue", "seed-%03d" % i, doc)
    # stamper: flags byte (bit 0: new refId, bit 1: new changesetId), two
    # length-prefixed ids, then the document.
    for flags, ref, cs in [(3, b'R-new', b'C-new'), (2, b'', b'0000018f-2'), (1, b'id "q"\n\\', b''), (0, b'', b'')]:
        write("stamper", "seed-%03d-%d" % (i, flags), bytes([flags, len(ref)]) + ref + bytes([len(cs)]) + cs + doc)

# journal: see Fuzz/JournalFuzz.swift for the input layout.
def line(payload):
    return payload + b"\t#" + hashlib.sha256(payload).hexdigest()[:16].encode() + b"\n"

entries = [
    {"seq": 1, "kind": "create", "time": 1700000000000, "refId": "r1", "changesetId": "c1", "hash": "a" * 64, "path": "a.json"},
    {"seq": 2, "kind": "update", "time": 1700000000001, "refId": "r1", "changesetId": "c2", "hash": "b" * 64, "path": "a.json"},
    {"seq": 3, "kind": "rename", "time": 1700000000002, "refId": "r1", "changesetId": "c2", "hash": "b" * 64, "path": "b/\u00fc \"x\".json", "fromPath": "a.json"},
    {"seq": 4, "kind": "done", "time": 1700000000003, "seqs": [1, 2, 3], "reason": "pushed"},
    {"seq": 5, "kind": "cursor", "time": 1700000000004, "cursor": "feed:42"},
    {"seq": 6, "kind": "delete", "time": 1700000000005, "refId": "r1", "changesetId": "c3", "deleted": True},
]
payloads = [json.dumps(e, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode() for e in entries]
raw = b"".join(line(p) for p in payloads)
# Mode byte 0: raw journal bytes.
write("journal", "raw-full", b"\x00" + raw)
write("journal", "raw-torn", b"\x00" + raw[:-7])
write("journal", "raw-corrupt", b"\x00" + raw[:10] + b"X" + raw[11:])
write("journal", "raw-empty", b"\x00")
# Mode byte 1: entries appended by the engine: per entry a kind byte, a flags byte
# (1 refId, 2 changesetId, 4 hash, 8 path, 16 fromPath, 32 reason, 64 cursor,
# 128 deleted + seqs), the length-prefixed strings; then damage, where1, where2.
def chunk(b):
    return bytes([len(b)]) + b
def entry(kind, flags, *fields):
    return bytes([kind, flags]) + b"".join(fields)
e1 = entry(0, 15, chunk(b"r1"), chunk(b"c1"), chunk(b"a" * 64), chunk(b"a.json"))
e2 = entry(2, 31, chunk(b"r1"), chunk(b"c2"), chunk(b"b" * 64), chunk("b/\u00fc \"x\".json".encode()), chunk(b"a.json"))
e3 = entry(4, 160, chunk(b"pushed"), b"\x00", chunk(bytes([101, 102, 103])))
e4 = entry(8, 64, chunk(b"feed:42\ttab\nnl\\"))
for damage in range(3):
    write("journal", "entries-%d" % damage, b"\x01" + e1 + e2 + e3 + e4 + bytes([damage, 0, 77]))
# Mode byte 2: hand-edited lines; the harness adds the checksums.
write("journal", "hand-1", b"\x02" + b"\n".join(payloads[:3]))
write("journal", "hand-2", b"\x02" + payloads[0] + b"\n" + b'{"seq":9223372036854775807,"kind":"update","time":1}' + b"\n")
write("journal", "hand-3", b"\x02" + b'{"seq":1,"kind":"bogus","time":1}\n{}\nnot json\n')
print("seeds written under", root)
