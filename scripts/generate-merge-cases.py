#!/usr/bin/env python3
"""Writes the merge conformance suite, Tests/DocSyncKitTests/MergeConformance/*.json:
three-way merge cases whose expected results come from scripts/merge_model.py, a model
written from docs/SYNC.md. Deterministic (fixed seeds). Cases whose sequence alignment is
ambiguous (more than one longest common subsequence) are left out. Usage:
    scripts/generate-merge-cases.py"""
import copy, json, os, random, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from merge_model import AMBIGUOUS, Num, dumps, loads, merge

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "DocSyncKitTests", "MergeConformance")

def case(name, base, local, remote, winner="remote", counters=(), sets=(), keys=None):
    b = None if base is None else loads(base) if isinstance(base, str) else base
    l = loads(local) if isinstance(local, str) else local
    r = loads(remote) if isinstance(remote, str) else remote
    AMBIGUOUS[0] = False
    merged, conflicts = merge(b, l, r, winner, counters, sets, keys)
    m2, _ = merge(b, r, l, "local" if winner == "remote" else "remote", counters, sets, keys)
    if AMBIGUOUS[0]: return None
    return {"name": name, "baseText": None if b is None else dumps(b), "localText": dumps(l), "remoteText": dumps(r),
            "winner": winner, "counters": list(counters), "sets": list(sets), "arrayKeys": dict(keys or {}),
            "expectedText": dumps(merged), "conflicts": conflicts}

def documented():
    out = [
        case("doc: identity, both add", '{"a":[{"id":1,"qty":1}]}', '{"a":[{"id":1,"qty":1},{"id":2,"qty":5}]}', '{"a":[{"id":1,"qty":1},{"id":3,"qty":7}]}'),
        case("doc: identity, fields of one element", '{"a":[{"id":1,"qty":1,"n":"a"}]}', '{"a":[{"id":1,"qty":2,"n":"a"}]}', '{"a":[{"id":1,"qty":1,"n":"b"}]}'),
        case("doc: inserts at both ends", '{"a":["a","b","c"]}', '{"a":["x","a","b","c"]}', '{"a":["a","b","c","y"]}'),
        case("doc: removals of different elements", '{"a":["a","b","c"]}', '{"a":["a","c"]}', '{"a":["a","b"]}'),
        case("doc: same slot, remote later", '{"a":["a","b","c"]}', '{"a":["a","L","c"]}', '{"a":["a","R","c"]}'),
        case("doc: same slot, local later", '{"a":["a","b","c"]}', '{"a":["a","L","c"]}', '{"a":["a","R","c"]}', "local"),
        case("doc: removal and insertion in one stretch", '{"a":["a","b","c"]}', '{"a":["a","c"]}', '{"a":["a","b","x","c"]}'),
        case("doc: set, local later", '{"t":["red"]}', '{"t":["red","blue"]}', '{"t":["green"]}', "local", sets=["t"]),
        case("doc: set, remote later", '{"t":["red"]}', '{"t":["red","blue"]}', '{"t":["green"]}', "remote", sets=["t"]),
        case("doc: counter in elements", '{"lines":[{"id":1,"qty":1}]}', '{"lines":[{"id":1,"qty":3}]}', '{"lines":[{"id":1,"qty":11}]}', counters=["lines.*.qty"]),
        case("edit beats removal of an element", '{"l":[{"id":"a","v":1},{"id":"b","v":1}]}', '{"l":[{"id":"a","v":1}]}', '{"l":[{"id":"a","v":1},{"id":"b","v":2}]}'),
        case("configured key", '{"l":[{"sku":"x","q":1}]}', '{"l":[{"sku":"x","q":2}]}', '{"l":[{"sku":"x","q":1,"n":"b"}]}', keys={"l": "sku"}),
        case("duplicate ids fall back to a sequence", '{"l":[{"id":1},{"id":1}]}', '{"l":[{"id":1,"v":1},{"id":1}]}', '{"l":[{"id":1,"v":2},{"id":1}]}'),
        case("base not an array", '{"a":"x"}', '{"a":[1]}', '{"a":[2]}'),
        case("base absent", None, '{"a":[{"id":1}]}', '{"a":[{"id":2}]}'),
        case("empty arrays", '{"a":[]}', '{"a":[]}', '{"a":[1]}'),
        case("emptied on one side, added on other", '{"a":[1,2]}', '{"a":[]}', '{"a":[1,2,3]}'),
    ]
    return [c for c in out if c]

# RFC 7396 appendix A: (target, patch, result). Each result is one side's edit of the target.
RFC7396 = [
    ('{"a":"b"}', '{"a":"c"}', '{"a":"c"}'), ('{"a":"b"}', '{"b":"c"}', '{"a":"b","b":"c"}'),
    ('{"a":"b"}', '{"a":null}', '{}'), ('{"a":"b","b":"c"}', '{"a":null}', '{"b":"c"}'),
    ('{"a":["b"]}', '{"a":"c"}', '{"a":"c"}'), ('{"a":"c"}', '{"a":["b"]}', '{"a":["b"]}'),
    ('{"a":{"b":"c"}}', '{"a":{"b":"d","c":null}}', '{"a":{"b":"d"}}'), ('{"a":[{"b":"c"}]}', '{"a":[1]}', '{"a":[1]}'),
    ('["a","b"]', '["c","d"]', '["c","d"]'), ('{"a":"b"}', '["c"]', '["c"]'), ('{"a":"foo"}', 'null', 'null'),
    ('{"a":"foo"}', '"bar"', '"bar"'), ('{"e":null}', '{"a":1}', '{"e":null,"a":1}'), ('[1,2]', '{"a":"b","c":null}', '{"a":"b"}'),
    ('{}', '{"a":{"bb":{"ccc":null}}}', '{"a":{"bb":{}}}'),
]

def rfc7396():
    out = []
    for n, (target, _, result) in enumerate(RFC7396):
        for winner in ("local", "remote"):
            out.append(case(f"RFC 7396 A.{n + 1}: local applies the patch, remote unchanged ({winner} later)", target, result, target, winner))
            out.append(case(f"RFC 7396 A.{n + 1}: remote applies the patch, local unchanged ({winner} later)", target, target, result, winner))
            if target.startswith("{") and result.startswith("{"):
                other = loads(target); other["zz"] = Num("1")
                out.append(case(f"RFC 7396 A.{n + 1}: the patch against an edit of another key ({winner} later)", target, result, other, winner))
    return [c for c in out if c]

# Random documents and edits -----------------------------------------------------------
def rand_doc(rng):
    d = {}
    for k in rng.sample(["a", "b", "c"], rng.randint(1, 3)): d[k] = rand_scalar(rng)
    d["n"] = Num(str(rng.randint(0, 20)))
    d["o"] = {"x": rand_scalar(rng), "y": rand_scalar(rng)}
    d["items"] = [{"id": Num(str(i)), "v": f"v{i}", "qty": Num(str(rng.randint(1, 9)))} for i in range(rng.randint(0, 5))]
    d["seq"] = [f"s{i}" for i in range(rng.randint(0, 7))]
    d["tags"] = [f"t{i}" for i in range(rng.randint(0, 4))]
    return d

def rand_scalar(rng):
    return rng.choice([Num(str(rng.randint(0, 9))), f"x{rng.randint(0, 9)}", True, None, Num("1.50")])

def edit(rng, doc, side, fresh):
    d = copy.deepcopy(doc)
    for _ in range(rng.randint(1, 4)):
        what = rng.randrange(12)
        items, seq, tags = d["items"], d["seq"], d["tags"]
        if what == 0: d[rng.choice(["a", "b", "c"])] = rand_scalar(rng)
        elif what == 1:
            k = rng.choice(["a", "b", "c"]); d.pop(k, None)
        elif what == 2: d["o"][rng.choice(["x", "y", "z"])] = rand_scalar(rng)
        elif what == 3: d["n"] = Num(str(int(d["n"].text) + rng.randint(1, 5)))
        elif what == 4: items.insert(rng.randint(0, len(items)), {"id": Num(str(fresh())), "v": f"{side}{fresh()}", "qty": Num("1")})
        elif what == 5 and items: items.pop(rng.randrange(len(items)))
        elif what == 6 and items: items[rng.randrange(len(items))]["v"] = f"{side}{fresh()}"
        elif what == 7 and items: items[rng.randrange(len(items))]["qty"] = Num(str(rng.randint(10, 99)))
        elif what == 8 and len(items) >= 3:
            if rng.random() < 0.5: items.append(items.pop(0))
            else: items.insert(0, items.pop())
        elif what == 9: seq.insert(rng.randint(0, len(seq)), f"{side}{fresh()}")
        elif what == 10 and seq:
            i = rng.randrange(len(seq))
            if rng.random() < 0.5: seq.pop(i)
            else: seq[i] = f"{side}{fresh()}"
        elif what == 11:
            if tags and rng.random() < 0.5: tags.pop(rng.randrange(len(tags)))
            else: tags.append(f"{side}{fresh()}")
    return d

def randomized(count, seed):
    rng = random.Random(seed)
    counter = [1000]
    def fresh():
        counter[0] += 1
        return counter[0]
    out, tries = [], 0
    while len(out) < count and tries < count * 5:
        tries += 1
        base = rand_doc(rng)
        local, remote = edit(rng, base, "L", fresh), edit(rng, base, "R", fresh)
        if rng.random() < 0.2:   # both add the same new item id
            both = {"id": Num("777"), "v": "both", "qty": Num("1")}
            local["items"].append(dict(both)); remote["items"].append(dict(both, v="both-r"))
        counters = rng.choice([[], ["n"], ["n", "items.*.qty"]])
        sets = rng.choice([[], ["tags"]])
        winner = rng.choice(["local", "remote"])
        c = case(f"random {seed}-{tries}", base, local, remote, winner, counters, sets)
        if c: out.append(c)
    return out

def huge():
    out = []
    base = [f"e{i}" for i in range(5000)]
    local = list(base); remote = list(base)
    for i in range(7, 5000, 400): local[i] = f"L{i}"
    for i in range(205, 5000, 400): remote.remove(f"e{i}")
    remote.append("tail")
    out.append(case("5,000-element sequence, edits spread", {"a": base}, {"a": local}, {"a": remote}))
    recs = [{"id": Num(str(i)), "v": Num("0")} for i in range(3000)]
    l = copy.deepcopy(recs); r = copy.deepcopy(recs)
    for i in range(0, 3000, 97): l[i]["v"] = Num("1")
    for i in range(50, 3000, 131): r[i]["w"] = Num("2")
    r.append({"id": Num("99999"), "v": Num("9")})
    out.append(case("3,000 records, both edit different elements", {"r": recs}, {"r": l}, {"r": r}))
    return [c for c in out if c]

def main():
    os.makedirs(OUT, exist_ok=True)
    files = {"documented.json": documented(), "rfc7396.json": rfc7396(), "huge.json": huge(),
             "random-1.json": randomized(600, 1), "random-2.json": randomized(600, 2)}
    for name, cases in files.items():
        with open(os.path.join(OUT, name), "w") as f:
            json.dump(cases, f, indent=0, ensure_ascii=False)
            f.write("\n")
        print(f"{name}: {len(cases)} cases")
    print("total:", sum(len(c) for c in files.values()))

main()
