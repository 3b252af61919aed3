#!/usr/bin/env python3
"""anvil against its peers, per batch, from one run of scripts/peer-evidence (or a record
made the same way, e.g. results/h200/peers/, results/h100/peers_graph/): whichever of these
files the folder holds.

- anvil.json        `anvil exec` of the experiment, every plan on streams;
- anvil_graph.json  the same with "launch": "graph", every plan one CUDA graph;
- peers.json        bench/peers/peer_varlen.py: SDPA split by path length, varlen attention;
- cascade.json      bench/peers/peer_cascade.py: FlashInfer's cascade, eager and (--graphs)
                    captured.

Each peer is divided by anvil's best plan in the same launch model: the eager peers by anvil
on streams, the captured cascade by anvil as a graph. The last line gives the geometric
means over the batches each pair has.

usage: analysis/peer_table.py DIR"""
import json
import math
import os
import sys

# (column, peer file, its time key, anvil file it is compared with)
COLUMNS = (("SDPA split", "peers.json", "sdpa_split_us", "anvil.json"),
           ("varlen", "peers.json", "varlen_us", "anvil.json"),
           ("cascade", "cascade.json", "cascade_us", "anvil.json"),
           ("cascade as a graph", "cascade.json", "cascade_graph_us", "anvil_graph.json"))


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def best_plans(rows):
    """anvil's fastest plan per (batch, heads) of an `anvil exec` report's rows, `auto`
    included: {(batch, heads): (median µs, scheduler)}."""
    best = {}
    for r in rows:
        k = (r["batch"], tuple(r["heads"]))
        if k not in best or r["median_us"] < best[k][0]:
            best[k] = (r["median_us"], r["scheduler"])
    return best


def peer_rows(rows, key):
    """A peer report's times by (batch, heads), for the rows that have `key`."""
    return {(r["batch"], tuple(r["heads"])): r[key] for r in rows if key in r}


def load(folder, name):
    path = os.path.join(folder, name)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)["rows"]


def table(folder):
    """The comparison as markdown lines; ValueError when the folder has no anvil report."""
    anvil = {f: load(folder, f) for f in ("anvil.json", "anvil_graph.json")}
    if not any(anvil.values()):
        raise ValueError("%s: no anvil.json or anvil_graph.json (scripts/peer-evidence writes "
                         "them)" % folder)
    best = {f: best_plans(rows) for f, rows in anvil.items() if rows}
    cols = [(label, peer_rows(load(folder, pf) or [], key), af)
            for label, pf, key, af in COLUMNS if load(folder, pf) and af in best]
    cols = [c for c in cols if c[1]]
    batches = sorted({k for b in best.values() for k in b})
    head = ["batch", "heads"] + ["anvil µs (plan)" if f == "anvil.json" else
                                 "anvil as a graph µs (plan)" for f in best]
    head += ["%s / anvil" % label for label, _, _ in cols]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    ratios = {label: [] for label, _, _ in cols}
    for k in batches:
        cells = [k[0], "%d/%d" % k[1]]
        cells += ["%.1f (`%s`)" % b[k] if k in b else "" for b in best.values()]
        for label, times, af in cols:
            if k in times and k in best[af]:
                x = times[k] / best[af][k][0]
                ratios[label].append(x)
                cells.append("%.2f×" % x)
            else:
                cells.append("")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("geometric mean, peer / anvil: " + ", ".join(
        "%s %.2f× (%d batches)" % (label, geomean(xs), len(xs))
        for label, xs in ratios.items()) if ratios else "no peer report in %s" % folder)
    return lines


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.split("usage: ")[-1], file=sys.stderr)
        return 0 if len(argv) == 2 else 1
    if not os.path.isdir(argv[1]):
        print("peer_table: %s: not a folder; expected the --out of scripts/peer-evidence"
              % argv[1], file=sys.stderr)
        return 1
    try:
        print("\n".join(table(argv[1])))
    except (ValueError, KeyError, json.JSONDecodeError) as e:
        print("peer_table: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
