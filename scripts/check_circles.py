#!/usr/bin/env python3
"""Fails when source files of the library layers depend on each other in a circle: file A
calls (or names) a function defined in B and B, directly or through others, one defined in
A. Files that need each other are one concern split badly; a layer's files form a DAG with
the file that drives the others at the top.

A function belongs to the file that defines it non-static at top level; a file depends on
every other file whose functions it names outside comments and strings. Usage:
  check_circles.py [REPO_ROOT]     (default: the repository holding this script)
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_sizes import strip_code, tracked_sources  # noqa: E402

DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \t\*]*?\b(av_\w+)\s*\([^;]*?\)\s*\{",
                        re.M | re.S)


def circles(files):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(files[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(files):
        if v not in index:
            visit(v)
    return out


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    srcs = [p for p in tracked_sources(root)
            if p.endswith(".c") and not p.startswith(("tests/", "bench/"))]
    code, owner = {}, {}
    for p in srcs:
        with open(os.path.join(root, p), encoding="utf-8", errors="replace") as f:
            code[p] = strip_code(f.read())
        for m in DEFINITION.finditer(code[p]):
            owner.setdefault(m.group(1), p)
    deps = {p: set() for p in srcs}
    for p in srcs:
        for name in set(re.findall(r"\bav_\w+", code[p])):
            q = owner.get(name)
            if q and q != p:
                deps[p].add(q)
    found = circles(deps)
    for comp in found:
        print("files that depend on each other: " + " <-> ".join(comp))
    if found:
        print(f"{len(found)} circle(s)")
        return 1
    print(f"circles: none among {len(srcs)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
