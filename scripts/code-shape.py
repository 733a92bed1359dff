#!/usr/bin/env python3
"""Prints the code's shape: functions over 50 and 80 lines, files over 400 lines, and
types over 600 lines summed over every file that declares or extends them (a `Type+Part.swift`
split does not make a type smaller).

Usage: scripts/code-shape.py [--list] [paths...]  (default: Sources)
A function's length is from its `func`/`init` line to its closing brace, counted by
brace depth outside strings and comments (good enough for this code's style).
"""
import os, re, sys

def strip(line, state):
    out = []; i = 0
    while i < len(line):
        if state['block']:
            j = line.find('*/', i)
            if j < 0: return ''.join(out)
            state['block'] = False; i = j + 2; continue
        if state['string']:
            if line.startswith('"""', i): state['string'] = False; i += 3; continue
            i += 1; continue
        if line.startswith('//', i): break
        if line.startswith('/*', i): state['block'] = True; i += 2; continue
        if line.startswith('"""', i): state['string'] = True; i += 3; continue
        c = line[i]
        if c == '"':
            j = i + 1
            while j < len(line) and line[j] != '"':
                j += 2 if line[j] == '\\' else 1
            i = j + 1; continue
        out.append(c); i += 1
    return ''.join(out)

decl = re.compile(r'^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|private|fileprivate|internal|static|class|mutating|override|final|nonisolated|@discardableResult|convenience|required)\s+)*(func\s+[^\s(<]+|init[?!]?\s*[(<]|subscript\s*\()')

def functions(path):
    lines = open(path, encoding='utf-8').read().split('\n')
    state = {'block': False, 'string': False}
    code = [strip(l, state) for l in lines]
    out = []
    for n, line in enumerate(code):
        m = decl.match(line)
        if not m: continue
        depth = 0; opened = False
        for k in range(n, len(code)):
            for ch in code[k]:
                if ch == '{': depth += 1; opened = True
                elif ch == '}': depth -= 1
            if opened and depth <= 0:
                out.append((k - n + 1, path, n + 1, m.group(1).strip()))
                break
            if not opened and k > n + 15: break
    return out

typedecl = re.compile(r'^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|private|fileprivate|internal|final|package|indirect)\s+)*(struct|class|enum|actor|protocol|extension)\s+([A-Za-z_][\w]*)')

def types(path):
    """Top-level declarations and extensions in one file: (type name, lines of the block)."""
    lines = open(path, encoding='utf-8').read().split('\n')
    state = {'block': False, 'string': False}
    code = [strip(l, state) for l in lines]
    out = []; n = 0
    while n < len(code):
        m = typedecl.match(code[n])
        if not m: n += 1; continue
        depth = 0; opened = False; end = n
        for k in range(n, len(code)):
            for ch in code[k]:
                if ch == '{': depth += 1; opened = True
                elif ch == '}': depth -= 1
            end = k
            if opened and depth <= 0: break
        out.append((m.group(2), end - n + 1))
        n = end + 1
    return out

def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    roots = args or ['Sources']
    funcs = []; files = []; sizes = {}; parts = {}
    for root in roots:
        for dirpath, _, names in os.walk(root):
            for name in names:
                if not name.endswith('.swift'): continue
                p = os.path.join(dirpath, name)
                files.append((sum(1 for _ in open(p, encoding='utf-8')), p))
                funcs += functions(p)
                for name, count in types(p):
                    sizes[name] = sizes.get(name, 0) + count
                    parts.setdefault(name, set()).add(p)
    over50 = sorted([f for f in funcs if f[0] > 50], reverse=True)
    over80 = [f for f in over50 if f[0] > 80]
    big = sorted([f for f in files if f[0] > 400], reverse=True)
    print(f"functions: {len(funcs)}; over 50 lines: {len(over50)}; over 80: {len(over80)}")
    print(f"files: {len(files)}; over 400 lines: {len(big)}")
    large = sorted([(n, t) for t, n in sizes.items() if n > 600], reverse=True)
    print(f"types: {len(sizes)}; over 600 lines summed over their files: {len(large)}")
    if '--list' in sys.argv:
        for f in over50: print(f"  {f[0]:4d}  {f[1]}:{f[2]}  {f[3]}")
        for f in big: print(f"  {f[0]:4d}  {f[1]}")
        for n, t in large: print(f"  {n:4d}  {t} ({len(parts[t])} files)")

main()
