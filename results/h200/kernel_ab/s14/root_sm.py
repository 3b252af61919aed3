#!/usr/bin/env python3
"""Session 14: how a traced plan's root CTAs (the first R items) were spread over the SMs and
how long they took by the number of root CTAs that shared their SM: does a cluster launch
stack three root CTAs on some SMs where the plain launch puts two? Usage: root_sm.py TRACE.json R"""
import collections
import json
import statistics
import sys


def main():
    d = json.load(open(sys.argv[1]))
    n_root = int(sys.argv[2])
    root = [x for x in d["ctas"] if 0 <= x["item"] < n_root]
    per_sm = collections.Counter(x["sm"] for x in root)
    hist = collections.Counter(per_sm.values())
    print("  root CTAs per SM: %s over %d SMs" % (dict(sorted(hist.items())), len(per_sm)))
    by = collections.defaultdict(list)
    for x in root:
        by[per_sm[x["sm"]]].append(x["end_us"] - x["start_us"])
    for k in sorted(by):
        v = by[k]
        print("  SMs with %d root CTAs: %4d CTAs, duration median %.1f us, max %.1f us"
              % (k, len(v), statistics.median(v), max(v)))


if __name__ == "__main__":
    main()
