#!/usr/bin/env python3
"""PAT Figure 10 (kernel comparison): normalised performance (latency of profit_pack /
latency of the scheduler; higher is better, PAT = 1) per tree, one panel per head
configuration, as the paper draws it. Reads the results of experiments/pat_fig10_a100.json
or experiments/pat_fig10_h200.json (analysis/pat_fig10_a100.py and pat_fig10_h200.py are
this script with their study's default results directory). Prints one summary line: PAT's mean latency reduction
over each baseline on the trees with shared prefixes (1-18), its largest speedup, and the
same on the no-prefix trees 19-20 (the paper's metrics, PAT §8.3)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import plt  # noqa: E402
from matplotlib.ticker import NullFormatter, ScalarFormatter  # noqa: E402

PROG = "pat_fig10.py"
PAT = "PAT (profit_pack)"


def tree_id(name):
    try:
        return int(name.rsplit("-", 1)[1])
    except (IndexError, ValueError):
        return None


def stats(t, labs):
    """Per baseline: mean latency reduction of PAT (1 - t_PAT / t_X) and the largest speedup
    t_X / t_PAT over trees 1-18, mean reduction over trees 19-20."""
    out = {}
    for lab in labs:
        if lab == PAT:
            continue
        shared, flat, speedups = [], [], []
        for (gpu, wl, hq, hkv), rows in t.items():
            if lab not in rows or PAT not in rows:
                continue
            tp, tx = rows[PAT]["predicted_us"], rows[lab]["predicted_us"]
            (flat if (tree_id(wl) or 0) >= 19 else shared).append(1 - tp / tx)
            if (tree_id(wl) or 0) < 19:
                speedups.append(tx / tp)
        out[lab] = (common.mean(shared), max(speedups) if speedups else float("nan"),
                    common.mean(flat), sum(s >= 1 for s in speedups), len(speedups))
    return out


def summarize(doc):
    """The study's numbers (stats() per baseline label) and its one summary line, which
    ./scripts/reproduce prints and docs/reproductions.md quotes (analysis/docnums)."""
    s = stats(common.table(doc), common.labels(doc))
    parts = [f"{lab.split(' (')[0]} {100 * red:.1f}% (max {mx:.2f}x, PAT faster on {nwin}/{n}; "
             f"19-20 {100 * flat:+.1f}%)" for lab, (red, mx, flat, nwin, n) in s.items()]
    return s, f"{doc['experiment']}: PAT latency reduction on trees 1-18 vs " + "; ".join(parts)


def main(study="pat_fig10"):
    args = common.parse_args(study, __doc__)
    doc = common.load(args.results_json, PROG)
    common.require(doc, PROG, PAT)
    labs = common.labels(doc)
    t = common.table(doc)
    heads = []
    for (_, _, hq, hkv) in t:
        if (hq, hkv) not in heads:
            heads.append((hq, hkv))
    fig, axes = plt.subplots(len(heads), 1, figsize=(13, 2.6 * len(heads) + 0.6), squeeze=False)
    width = 0.8 / len(labs)
    for ax, (hq, hkv) in zip(axes[:, 0], heads):
        keys = [k for k in t if (k[2], k[3]) == (hq, hkv)]
        xs = range(len(keys))
        for i, lab in enumerate(labs):
            ys = [t[k][PAT]["predicted_us"] / t[k][lab]["predicted_us"] if lab in t[k] else 0
                  for k in keys]
            ax.bar([x + (i - (len(labs) - 1) / 2) * width for x in xs], ys, width, label=lab)
        ax.axhline(1.0, color="k", lw=0.8, ls="--")
        ax.set_xticks(list(xs))
        ax.set_xticklabels([str(tree_id(k[1]) or k[1]) for k in keys], fontsize=8)
        ax.set_ylabel(f"{hq}/{hkv} heads\nperf. / PAT", fontsize=9)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.grid(True, axis="y", which="both", alpha=0.3)
    axes[0, 0].legend(fontsize=7, ncol=len(labs), loc="upper center", bbox_to_anchor=(0.5, 1.3))
    axes[-1, 0].set_xlabel("PAT Fig. 10 tree id (19, 20: no shared prefix)")
    fig.suptitle(f"PAT Fig. 10 reproduction: latency(profit_pack) / latency (higher is better; "
                 f"{common.footer(doc)})", fontsize=10, y=0.995)
    common.save(fig, args.output)
    print(f"{summarize(doc)[1]} -> {args.output}")


if __name__ == "__main__":
    main()
