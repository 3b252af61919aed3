#!/usr/bin/env python3
"""The cascade peer's level mapping (bench/peers/cascade_levels.py), checked without a GPU: on
every explicit batch of the committed held-out experiments and on hand-made edge cases, each
request's row reads, over all levels, exactly the nodes of its path, each whole and once, in
levels whose entries cover the rows in order, and no level reads a node for two entries (the
rows below a node are together); and a wrong mapping (two rows swapped) is caught.

    python3 tests/cascade_levels.py [REPO]     exit 1 listing each fault (CTest cascade_levels)
"""
import glob
import json
import math
import os
import sys

REPO = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "bench", "peers"))
from cascade_levels import levels, paths  # noqa: E402

PAGE = 16


def faults(parents, lens, requests, mapping):
    """What is wrong with a mapping (order, pages, first, levels) of one tree: [] if nothing."""
    order, n_pages, first, lv = mapping
    n = len(requests)
    owner = {}
    for node, p0 in first.items():
        for p in range(p0, p0 + max(1, math.ceil(lens[node] / PAGE))):
            owner[p] = node
    out = []
    if sorted(order) != list(range(n)):
        out.append("the row order is not a permutation of the requests")
    read = [[] for _ in range(n)]
    for li, (qo, kv, idx, last) in enumerate(lv):
        if qo[0] != 0 or qo[-1] != n or any(b <= a for a, b in zip(qo, qo[1:])):
            out.append("level %d: query rows %s do not cover 0..%d in order" % (li, qo, n))
            continue
        if len(kv) != len(qo) or kv[0] != 0 or kv[-1] != len(idx) or len(last) != len(qo) - 1:
            out.append("level %d: page pointers do not match its entries" % li)
            continue
        seen = set()
        for e in range(len(qo) - 1):
            pages = idx[kv[e]:kv[e + 1]]
            if not pages:
                if last[e] != 0:
                    out.append("level %d entry %d: no pages but %d tokens" % (li, e, last[e]))
                continue
            node = owner.get(pages[0])
            want = list(range(first[node], first[node] + len(pages))) if node is not None else []
            tokens = (len(pages) - 1) * PAGE + last[e]
            if pages != want or tokens != lens[node] or not 0 <= last[e] <= PAGE:
                out.append("level %d entry %d: pages %s are not one whole node" % (li, e, pages))
                continue
            if node in seen:  # its requests' rows are not together: the node is read twice
                out.append("level %d: node %d has more than one entry" % (li, node))
            seen.add(node)
            for row in range(qo[e], qo[e + 1]):
                read[row].append(node)
    for row, r in enumerate(order):
        want = sorted(paths(parents, [requests[r]])[0])
        if sorted(read[row]) != want:
            out.append("row %d (request %d) reads nodes %s, its path is %s" % (
                row, r, sorted(read[row]), want))
    return out


def trees():
    """(name, parents, kv lengths, request nodes): the committed held-out batches and edge
    cases (a request ending where others go on, requests sharing a node, one node, a chain,
    a node of zero tokens, nodes of whole pages)."""
    for path in sorted(glob.glob(os.path.join(REPO, "results/*/validation/heldout*/experiment.json"))):
        with open(path, encoding="utf-8") as f:
            exp = json.load(f)
        for w in exp["workloads"]:
            if w.get("kind") == "explicit":
                yield (os.path.relpath(path, REPO) + ":" + w["name"],
                       [n["parent"] for n in w["nodes"]], [n["kv_len"] for n in w["nodes"]],
                       w["requests"])
    yield "ends-inside", [-1, 0, 1, 1, 0], [100, 17, 5, 40, 33], [1, 2, 3, 4, 0]
    yield "shared-leaf", [-1, 0, 0], [64, 16, 3], [1, 1, 2, 2, 1]
    yield "one-node", [-1], [1000], [0, 0, 0]
    yield "chain", [-1, 0, 1, 2, 3], [5, 6, 7, 8, 9], [4, 3, 2, 1, 0]
    yield "zero-tokens", [-1, 0, 0], [32, 0, 7], [1, 2]
    yield "two-roots", [-1, -1, 0, 1], [48, 16, 16, 1], [2, 3, 0]


def main():
    bad, n = [], 0
    for name, parents, lens, requests in trees():
        m = levels(parents, lens, requests, PAGE)
        bad += ["%s: %s" % (name, f) for f in faults(parents, lens, requests, m)]
        n += 1
        # A wrong mapping must be caught: rows of different paths swapped.
        order = list(m[0])
        ps = paths(parents, [requests[r] for r in order])
        j = next((j for j in range(1, len(order)) if sorted(ps[j]) != sorted(ps[0])), None)
        if j is not None:
            order[0], order[j] = order[j], order[0]
            if not faults(parents, lens, requests, (order,) + tuple(m[1:])):
                bad.append("%s: two rows swapped and nothing was caught" % name)
    for b in bad:
        print("cascade_levels: " + b)
    print("cascade_levels: %d trees, %d fault(s)" % (n, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
