#!/usr/bin/env python3
"""Measured H200 columns for PAT Figure 10 and Figure 12 (docs/reproductions.md, studies 1-2).

Reads results/h200/validation/pat/validation.csv, written by
`anvil validate experiments/validate_pat.json --trace` on the H200 (that folder's README.md):
one row per (batch, heads, scheduler) with the measured kernel time `measured_us` (median of
the repeats) next to the prediction. docs/reproductions.md quotes its numbers through
analysis/docnums/reproductions.py, which calls load(), fig10_summary() and keys_for().

Prints, per head configuration, every scheduler's measured latency normalised to PAT
(`profit_pack`, label "pat") as a geometric mean over the 20 trees (PAT Fig. 10 style), the
Fig. 10 summary metrics in the simulated scripts' definition (mean of 1 - t_PAT / t_X and
max t_X / t_PAT over trees 1-18, mean over trees 19-20; analysis/pat_fig10.py), and the
ablation switches vs PAT (PAT Fig. 12, §8.5: 32/8 heads; all heads too).
Writes docs/figures/pat_measured_h200.png.

The CSV has no byte counts, so the Fig. 12 global-memory column cannot be measured from it.

With results/h200/repro/pat_tiles/validation.json (results/h200/repro/run_repro.sh) it also
prints the trees 19-20 diagnosis: profit_pack with and without the occupancy-aware KV tile.

Usage: python3 analysis/pat_measured.py [CSV] [PNG]
"""
import csv
import math
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CSV = os.path.join(ROOT, "results/h200/validation/pat/validation.csv")
PNG = os.path.join(ROOT, "docs/figures/pat_measured_h200.png")
PAT = "pat"
# Labels of experiments/validate_pat.json; names as the paper calls the kernels (PAT §8.3).
FIG10 = [("qc", "FlashAttention (query_centric)"), ("flashinfer", "FlashInfer (streamk_balance)"),
         ("node_naive", "node_naive"), ("fixed_division", "fixed_division"),
         ("greedy_division", "FlashForge (greedy_division)"), ("auto", "auto")]
FIG12 = [("pat-compute", "PAT-compute"), ("pat-naive", "PAT-naive"),
         ("pat-fixed", "PAT-fixed"), ("pat-serial", "PAT-serial")]
HEADS = [(32, 32), (16, 8), (32, 8), (64, 8)]


def tree_id(batch):
    m = re.search(r"(\d+)$", batch)
    return int(m.group(1)) if m else 0


def load(path):
    """{(batch, hq, hkv): {scheduler: measured_us}}; exits with a message on bad input."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"pat_measured: cannot read {path}: {e.strerror}")
    need = {"batch", "hq", "hkv", "scheduler", "measured_us"}
    if not rows or not need <= set(rows[0]):
        sys.exit(f"pat_measured: {path}: expected columns {sorted(need)}")
    t = {}
    for i, r in enumerate(rows, start=2):
        try:
            us = float(r["measured_us"])
            key = (r["batch"], int(r["hq"]), int(r["hkv"]))
        except ValueError:
            sys.exit(f"pat_measured: {path}:{i}: non-numeric hq/hkv/measured_us")
        if not us > 0:
            sys.exit(f"pat_measured: {path}:{i}: measured_us must be > 0, got {us}")
        t.setdefault(key, {})[r["scheduler"]] = us
    return t


def gmean(xs):
    xs = list(xs)
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs) if xs else float("nan")


def keys_for(t, heads, lab):
    return sorted((k for k in t if (k[1], k[2]) == heads and lab in t[k] and PAT in t[k]),
                  key=lambda k: tree_id(k[0]))


def fig10_summary(t, lab):
    """As analysis/pat_fig10.py: over all head configs, mean 1 - t_PAT/t_X and max speedup on
    trees 1-18, mean reduction on 19-20, count of batches where PAT is faster."""
    shared, flat, sp = [], [], []
    for k, rows in t.items():
        if lab not in rows or PAT not in rows:
            continue
        red = 1 - rows[PAT] / rows[lab]
        if tree_id(k[0]) >= 19:
            flat.append(red)
        else:
            shared.append(red)
            sp.append(rows[lab] / rows[PAT])
    return mean(shared), max(sp), mean(flat), sum(s >= 1 for s in sp), len(sp)


TILES = os.path.join(ROOT, "results/h200/repro/pat_tiles/validation.json")


def tile_fix(path):
    """Trees 19-20 diagnosis (docs/reproductions.md, study 1): profit_pack with the
    occupancy-aware KV-tile choice ("pat") against the same without it ("pat-occupancy-off")
    and query_centric ("qc"), from `anvil validate experiments/repro_h200_pat_tiles.json`
    (results/h200/repro/run_repro.sh). Prints nothing when that file is absent."""
    if not os.path.exists(path):
        return
    import json
    with open(path) as f:
        rows = json.load(f)["rows"]
    t = {}
    for r in rows:
        t.setdefault((r["batch"], tuple(r["heads"])), {})[r["scheduler"]] = r["measured_us"]
    print(f"\nKV-tile choice (source: {os.path.relpath(path, ROOT)}), measured us")
    print(f"{'tree':<8}{'heads':>7}{'qc':>10}{'pat':>10}{'pat-occ-off':>12}{'off/pat':>9}")
    for (b, h), v in t.items():
        if all(l in v for l in ("qc", "pat", "pat-occupancy-off")):
            print(f"{b:<8}{f'{h[0]}/{h[1]}':>7}{v['qc']:>10.1f}{v['pat']:>10.1f}"
                  f"{v['pat-occupancy-off']:>12.1f}{v['pat-occupancy-off'] / v['pat']:>9.3f}")
    rest = [v["pat-occupancy-off"] / v["pat"] for (b, _), v in t.items()
            if tree_id(b) < 19 and "pat" in v and "pat-occupancy-off" in v]
    if rest:
        print(f"trees 1-18 of the study ({len(rest)}): geomean pat-occ-off / pat "
              f"{gmean(rest):.3f} (min {min(rest):.3f}, max {max(rest):.3f})")


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else CSV
    png = sys.argv[2] if len(sys.argv) > 2 else PNG
    t = load(path)
    labs10 = [l for l, _ in FIG10 if any(l in r for r in t.values())]
    labs12 = [l for l, _ in FIG12 if any(l in r for r in t.values())]

    print(f"source: {os.path.relpath(path, ROOT)} ({len(t)} batches x heads)")
    print("\nFig. 10 style: measured latency / PAT, geometric mean over the 20 trees")
    print(f"{'scheduler':<30}" + "".join(f"{f'{h[0]}/{h[1]}':>9}" for h in HEADS))
    g10 = {}
    for lab, name in [(PAT, "PAT (profit_pack)")] + FIG10 + FIG12:
        if lab != PAT and lab not in labs10 + labs12:
            continue
        g10[lab] = [gmean(t[k][lab] / t[k][PAT] for k in keys_for(t, h, lab)) for h in HEADS]
        print(f"{name:<30}" + "".join(f"{v:>9.3f}" for v in g10[lab]))

    print("\nFig. 10 summary (all head configs; pat_fig10.py's definitions)")
    for lab, name in FIG10[:5]:
        if lab in labs10:
            red, mx, fl, nf, n = fig10_summary(t, lab)
            print(f"  vs {name}: trees 1-18 mean reduction {100 * red:+.1f}%, max speedup "
                  f"{mx:.2f}x, PAT faster on {nf}/{n}; trees 19-20 {100 * fl:+.1f}%")
    # Trees 19-20 have no shared prefix: PAT's plan there is a plain decode, so per tree the
    # ratio to query_centric shows the KV-tile choice alone (study 1, "Tree 20").
    for tree in ("pat-19", "pat-20"):
        rs = [t[(tree, h[0], h[1])]["qc"] / t[(tree, h[0], h[1])][PAT] for h in HEADS
              if "qc" in t.get((tree, h[0], h[1]), {}) and PAT in t.get((tree, h[0], h[1]), {})]
        if rs:
            print(f"  {tree}: FlashAttention (query_centric) / PAT per head config "
                  + ", ".join(f"{r:.3f}" for r in rs))

    print("\nFig. 12 style: ablation vs PAT, measured latency (byte counts not in the CSV)")
    for heads in [(32, 8), None]:
        tag = f"{heads[0]}/{heads[1]}" if heads else "all heads"
        for lab, name in FIG12:
            if lab not in labs12:
                continue
            ks = [k for k in t if lab in t[k] and PAT in t[k] and (heads is None or (k[1], k[2]) == heads)]
            ratio_of_means = mean(t[k][lab] for k in ks) / mean(t[k][PAT] for k in ks)
            gm = gmean(t[k][lab] / t[k][PAT] for k in ks)
            print(f"  [{tag}] {name}: mean latency {100 * (ratio_of_means - 1):+.1f}%, "
                  f"geomean ratio {100 * (gm - 1):+.1f}% ({len(ks)} batches)")

    tile_fix(TILES)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(13, 4.5))
    w = 0.8 / len(HEADS)
    for ax, group, title in [(a, [(PAT, "PAT")] + FIG10, "Fig. 10 style (measured, H200)"),
                             (b, [(PAT, "PAT")] + FIG12, "Fig. 12 style (measured, H200)")]:
        group = [(l, n.split(" (")[0]) for l, n in group if l in g10]
        for j, h in enumerate(HEADS):
            ax.bar([i + (j - 1.5) * w for i in range(len(group))],
                   [g10[l][j] for l, _ in group], w, label=f"heads {h[0]}/{h[1]}")
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xticks(range(len(group)))
        ax.set_xticklabels([n for _, n in group], rotation=20, ha="right", fontsize=8)
        ax.set_ylabel("measured latency / PAT (geomean, 20 trees)")
        ax.set_title(title)
        ax.legend(fontsize=7)
    fig.tight_layout()
    tmp = png + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, png)  # no partial output files
    print(f"\nwrote {os.path.relpath(png, ROOT)}")


if __name__ == "__main__":
    main()
