#!/usr/bin/env python3
"""An independent model of docsync's three-way merge, written from docs/SYNC.md
("Field-by-field merge", "Arrays", "Counters", "Layout of a merged document") and the
FieldMerge.swift header, not from the Swift code. The conformance suite's expectations
(Tests/DocSyncKitTests/MergeConformance/) come from here.

    merge(base, local, remote, winner, counters, sets, keys) -> (merged, conflict_paths)

Values keep JSON number text (Num); objects are dicts in key order. Readings of the docs
made here: a counter applies where both sides changed a number (base absent: 0); pattern
segments `*` match any key or element index and patterns never overlap in the suite; the
element segment of a path is the element's index in the merged array."""
import json
from decimal import Decimal, getcontext

getcontext().prec = 200
MISSING = object()

class Num:
    __slots__ = ("text",)
    def __init__(self, text): self.text = text
    def __eq__(self, other): return isinstance(other, Num) and other.text == self.text
    def __hash__(self): return hash(("num", self.text))
    def __repr__(self): return self.text

def loads(text):
    return json.loads(text, parse_float=Num, parse_int=Num, object_pairs_hook=lambda pairs: dict(pairs))

def dumps(v):
    if isinstance(v, Num): return v.text
    if isinstance(v, bool): return "true" if v else "false"
    if v is None: return "null"
    if isinstance(v, str): return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list): return "[" + ",".join(dumps(x) for x in v) + "]"
    if isinstance(v, dict): return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + dumps(x) for k, x in v.items()) + "}"
    raise TypeError(v)

def eq(a, b):
    """Exact, order-sensitive equality (numbers by text)."""
    if a is MISSING or b is MISSING: return a is b
    if type(a) != type(b): return False
    if isinstance(a, dict): return list(a.keys()) == list(b.keys()) and all(eq(a[k], b[k]) for k in a)
    if isinstance(a, list): return len(a) == len(b) and all(eq(x, y) for x, y in zip(a, b))
    return a == b

def escape(key): return key.replace("~", "~0").replace(".", "~1")
def dotted(keys): return ".".join(escape(k) for k in keys)

def matches(pattern, keys):
    parts = pattern.split(".") if pattern else []
    return len(parts) == len(keys) and all(p == "*" or p.replace("~1", ".").replace("~0", "~") == k for p, k in zip(parts, keys))

def counter_sum(b, l, r):
    if not (isinstance(l, Num) and isinstance(r, Num)): return None
    if b is not MISSING and not isinstance(b, Num): return None
    terms = [l.text, r.text] + ([b.text] if b is not MISSING else [])
    if any("e" in t.lower() for t in terms): return None   # the suite keeps to plain decimals
    places = max((len(t.split(".")[1]) if "." in t else 0) for t in terms)
    total = Decimal(l.text) + Decimal(r.text) - (Decimal(b.text) if b is not MISSING else 0)
    text = format(total.quantize(Decimal(1).scaleb(-places)), "f")
    if text.startswith("-") and Decimal(text) == 0: text = text[1:]
    return Num(text)

class Model:
    def __init__(self, winner, counters, sets, keys):
        self.winner, self.counters, self.sets, self.keys = winner, counters, sets, keys
        self.conflicts = []

    def value(self, path, b, l, r):
        """The merged value at `path` (MISSING: absent)."""
        if isinstance(l, dict) and isinstance(r, dict):
            bb = b if isinstance(b, dict) else None
            if bb is not None and eq(l, bb): return r
            out = {}
            for k in list(l.keys()) + [k for k in r.keys() if k not in l]:
                v = self.value(path + [k], bb.get(k, MISSING) if bb is not None else MISSING, l.get(k, MISSING), r.get(k, MISSING))
                if v is not MISSING: out[k] = v
            return out
        if any(matches(c, path) for c in self.counters) and l is not MISSING and r is not MISSING and not eq(l, b) and not eq(r, b):
            s = counter_sum(b, l, r)
            if s is not None: return s
        if eq(l, r): return l
        if eq(l, b): return r
        if eq(r, b): return l
        if isinstance(l, list) and isinstance(r, list):
            return self.array(path, b if isinstance(b, list) else [], l, r)
        self.conflicts.append(dotted(path))
        if l is MISSING: return r
        if r is MISSING: return l
        return l if self.winner == "local" else r

    # Arrays ---------------------------------------------------------------
    def array(self, path, b, l, r):
        if any(matches(p, path) for p in self.sets):
            return self.set_merge(b, l, r)
        configured = [k for p, k in self.keys.items() if matches(p, path)]
        for key in (configured[:1] or ["id", "refId", "uuid", "key"]):
            if all(identity_ok(key, a) for a in (b, l, r)):
                return self.records(path, key, b, l, r)
        merged, collided = diff3(b, l, r, self.winner)
        if collided: self.conflicts.append(dotted(path))
        return merged

    def set_merge(self, b, l, r):
        tb, tl, tr = [dumps(x) for x in b], [dumps(x) for x in l], [dumps(x) for x in r]
        members = (set(tb) & set(tl) & set(tr)) | (set(tl) - set(tb)) | (set(tr) - set(tb))
        ordered, _ = diff3(b, l, r, self.winner)
        out, seen = [], set()
        def place(x):
            t = dumps(x)
            if t in members and t not in seen: seen.add(t); out.append(x)
        for x in ordered: place(x)
        for side in ([r, l] if self.winner == "local" else [l, r]):
            for x in side: place(x)
        return out

    def records(self, path, key, b, l, r):
        ident = lambda e: dumps(e[key])
        B = {ident(e): e for e in b}; L = {ident(e): e for e in l}; R = {ident(e): e for e in r}
        survivors, beat = set(), {}
        for i in list(L) + list(R):
            if i in L and i in R: survivors.add(i)
            else:
                kept = L.get(i, R.get(i))
                if i not in B: survivors.add(i)
                elif not eq(kept, B[i]): survivors.add(i); beat[i] = "local" if i in L else "remote"
        ids_b, ids_l, ids_r = [ident(e) for e in b], [ident(e) for e in l], [ident(e) for e in r]
        ordered, _ = diff3(ids_b, ids_l, ids_r, self.winner)
        order = []
        for i in ordered:
            if i in survivors and i not in order: order.append(i)
        earlier, later = (ids_r, ids_l) if self.winner == "local" else (ids_l, ids_r)
        for lst in (earlier, later):
            for i in lst:
                if i in survivors and i not in order:
                    keeper = later if i in later else earlier
                    before = [x for x in keeper[:keeper.index(i)] if x in order]
                    order.insert(order.index(before[-1]) + 1 if before else 0, i)
        out = []
        for n, i in enumerate(order):
            p = path + [str(n)]
            if i in L and i in R:
                first, second = (R[i], L[i]) if self.winner == "local" else (L[i], R[i])
                inner = Model("remote", self.counters, self.sets, self.keys)
                out.append(inner.value(p, B.get(i, MISSING), first, second))
                self.conflicts += inner.conflicts
            else:
                if i in beat: self.conflicts.append(dotted(p))
                out.append(L.get(i, R.get(i)))
        return out

def identity_ok(key, arr):
    seen = set()
    for e in arr:
        if not isinstance(e, dict) or key not in e or not (isinstance(e[key], (str, Num)) and not isinstance(e[key], bool)): return False
        t = dumps(e[key])
        if t in seen: return False
        seen.add(t)
    return True

AMBIGUOUS = [False]

def lcs_pairs(a, b):
    """Matched index pairs of a longest common subsequence (DP). Where another LCS exists
    (the opposite tie-break finds different pairs) AMBIGUOUS is set: the suite leaves such
    cases out, since two correct implementations may align them differently."""
    first, second = _lcs(a, b, True), _lcs(a, b, False)
    if first != second: AMBIGUOUS[0] = True
    return first

def _lcs(a, b, prefer_a):
    ta, tb = [dumps(x) for x in a], [dumps(x) for x in b]
    n, m = len(ta), len(tb)
    dp = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            dp[i][j] = dp[i + 1][j + 1] + 1 if ta[i] == tb[j] else max(dp[i + 1][j], dp[i][j + 1])
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if ta[i] == tb[j]: pairs.append((i, j)); i += 1; j += 1
        elif dp[i + 1][j] > dp[i][j + 1] or (dp[i + 1][j] == dp[i][j + 1] and prefer_a): i += 1
        else: j += 1
    return pairs

def subseq_positions(part, whole):
    pos, j = [], 0
    for t in part:
        while j < len(whole) and whole[j] != t: j += 1
        if j == len(whole): return None
        pos.append(j); j += 1
    return pos

def diff3(b, l, r, winner):
    """Returns (merged list, whether a stretch collided). Elements compare by compact text."""
    T = lambda xs: [dumps(x) for x in xs]
    tb, tl, tr = T(b), T(l), T(r)
    lm = dict(lcs_pairs(b, l)); rm = dict(lcs_pairs(b, r))
    out, collided = [], False
    ib = il = ir = 0
    while True:
        k = ib
        while k < len(b) and (k not in lm or k not in rm): k += 1
        if k < len(b) and k == ib and lm[k] == il and rm[k] == ir:
            out.append(b[k]); ib += 1; il += 1; ir += 1; continue
        end = (k, lm[k], rm[k]) if k < len(b) else (len(b), len(l), len(r))
        B, L, R = tb[ib:end[0]], tl[il:end[1]], tr[ir:end[2]]
        vb, vl, vr = b[ib:end[0]], l[il:end[1]], r[ir:end[2]]
        if B or L or R:
            earlier, later = (vr, vl) if winner == "local" else (vl, vr)
            if L == B: out += vr
            elif R == B or L == R: out += vl
            elif not B: out += earlier + later
            else:
                kl, kr = subseq_positions(L, B), subseq_positions(R, B)
                if kl is not None and kr is not None:
                    out += [vb[i] for i in range(len(B)) if i in kl and i in kr]
                else:
                    done = False
                    for kept, ins, vins in ((kl, R, vr), (kr, L, vl)):
                        if kept is None: continue
                        placed = subseq_positions(B, ins)
                        if placed is None: continue
                        removed = {placed[i] for i in range(len(B)) if i not in kept}
                        out += [vins[j] for j in range(len(ins)) if j not in removed]
                        done = True
                        break
                    if not done:
                        collided = True
                        out += vl if winner == "local" else vr
        if k >= len(b): return out, collided
        ib, il, ir = end

def merge(base, local, remote, winner="remote", counters=(), sets=(), keys=None):
    m = Model(winner, list(counters), list(sets), dict(keys or {}))
    v = m.value([], MISSING if base is None else base, local, remote)
    return v, sorted(m.conflicts)
