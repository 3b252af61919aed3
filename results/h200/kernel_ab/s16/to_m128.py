#!/usr/bin/env python3
"""Session 16: a plan's m64 grid launch turned into an m128 one: consecutive items of that
launch with the same segments (the row tiles of one KV chunk) are paired into one item of
twice the queries (32 queries x GQA group 4 = 128 rows). Other launches are kept; the merge
lists are dropped, so anvil derives them for the new partial slots.
Usage: to_m128.py IN.json OUT.json"""
import json
import sys


def main():
    p = json.load(open(sys.argv[1]))
    li = next(i for i, l in enumerate(p["launches"]) if l["kind"] == "partial" and l["m"] == 64)
    p["launches"][li].update(m=128, warps=8)
    root = [it for it in p["items"] if it["launch"] == li]
    rest = [it for it in p["items"] if it["launch"] != li]
    by_seg = {}
    for it in root:
        by_seg.setdefault(json.dumps(it["segments"]), []).append(it)
    items = []
    for group in by_seg.values():
        group.sort(key=lambda it: it["queries"][0])
        for a in range(0, len(group), 2):
            it = dict(group[a])
            for b in group[a + 1:a + 2]:
                it["queries"] = it["queries"] + b["queries"]
            items.append(it)
    p["items"] = items + rest
    p.pop("merge", None)
    p["params"] += " (root paired into m128 items by s16/to_m128.py)"
    json.dump(p, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
