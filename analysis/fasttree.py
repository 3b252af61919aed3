#!/usr/bin/env python3
"""FastTree's 15 kernel trees with heads (16,1), (32,8), (32,32): every scheduler's predicted
time over the roofline floor (the larger of unique KV bytes / HBM bandwidth and attention
FLOPs / tensor rate), one panel per head
configuration, log scale. Reads the results of experiments/fasttree.json; prints, per
scheduler, the geometric-mean ratio to the floor and how often it is the fastest."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import plt  # noqa: E402

PROG = "fasttree.py"


def summarize(doc):
    """Per scheduler label the geometric-mean time / floor over all batches and the number of
    batches on which it is the fastest (auto excluded: it picks among the others); the batch
    count; and the study's one summary line (./scripts/reproduce; docs/reproductions.md
    through analysis/docnums)."""
    labs = common.labels(doc)
    t = common.table(doc)
    wins = {l: 0 for l in labs}
    for rows in t.values():
        # "auto" picks among the others, so a tie with it is not a separate win.
        best = min((l for l in labs if l in rows and l != "auto"),
                   key=lambda l: rows[l]["predicted_us"])
        wins[best] += 1
    gm = {l: common.geomean(r[l]["ratio_to_floor"] for r in t.values() if l in r) for l in labs}
    line = (f"{doc['experiment']}: {len(t)} batches; geomean time/floor " +
            ", ".join(f"{l} {gm[l]:.2f}" for l in labs) + "; fastest (excl. auto) " +
            ", ".join(f"{l} {n}" for l, n in wins.items() if n))
    return (gm, wins, len(t)), line


def main():
    args = common.parse_args("fasttree", __doc__)
    doc = common.load(args.results_json, PROG)
    labs = common.labels(doc)
    t = common.table(doc)
    heads = []
    for (_, _, hq, hkv) in t:
        if (hq, hkv) not in heads:
            heads.append((hq, hkv))
    fig, axes = plt.subplots(len(heads), 1, figsize=(12, 2.9 * len(heads) + 0.5), squeeze=False)
    markers = "os^vD<>ph*"
    for ax, (hq, hkv) in zip(axes[:, 0], heads):
        keys = [k for k in t if (k[2], k[3]) == (hq, hkv)]
        xs = range(len(keys))
        for i, lab in enumerate(labs):
            ax.plot(xs, [t[k][lab]["ratio_to_floor"] if lab in t[k] else float("nan")
                         for k in keys], markers[i % len(markers)], label=lab, alpha=0.85)
        ax.axhline(1.0, color="k", lw=0.8, ls="--")
        ax.set_yscale("log")
        ax.set_xticks(list(xs))
        ax.set_xticklabels([k[1].rsplit("-", 1)[-1] for k in keys], fontsize=8)
        ax.set_ylabel(f"{hq}/{hkv} heads\ntime / floor", fontsize=9)
        ax.grid(True, axis="y", which="both", alpha=0.3)
    axes[0, 0].legend(fontsize=7, ncol=4)
    axes[-1, 0].set_xlabel("FastTree tree id")
    fig.suptitle(f"FastTree's 15 trees: predicted time / roofline floor ({common.footer(doc)})",
                 fontsize=10)
    common.save(fig, args.output)
    print(f"{summarize(doc)[1]} -> {args.output}")


if __name__ == "__main__":
    main()
