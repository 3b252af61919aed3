#!/usr/bin/env python3
"""Session 10: from a traced run of a two-launch prefix16k plan, when the root items (the
first R items) and the leaf items ran, and how many leaf items started while a root CTA was
still on their SM. Usage: trace_overlap.py TRACE.json R"""
import json
import sys


def q(a):
    a = sorted(a)
    return [round(a[int(f * (len(a) - 1))], 1) for f in (0, .1, .5, .9, 1)]


def main():
    d = json.load(open(sys.argv[1]))
    n_root = int(sys.argv[2])
    c = d["ctas"]
    root = [x for x in c if 0 <= x["item"] < n_root]
    leaf = [x for x in c if x["item"] >= n_root]
    merge = [x for x in c if x["item"] < 0]
    print("makespan %.1f us" % d["makespan_us"])
    for name, g in (("root", root), ("leaf", leaf), ("merge", merge)):
        if g:
            print("  %-5s %5d start %s end %s" % (name, len(g), q([x["start_us"] for x in g]),
                                                   q([x["end_us"] for x in g])))
    beside = sum(1 for x in leaf if any(r["sm"] == x["sm"] and r["start_us"] <= x["start_us"]
                                        < r["end_us"] for r in root))
    print("  leaf items started beside a running root CTA: %d of %d" % (beside, len(leaf)))


if __name__ == "__main__":
    main()
