#!/usr/bin/env python3
"""FlashForge Figure 9 (division granularity): speedup of fixed division into k pieces per
node (k = 1..32) over k = 1 (no division), per workload, with greedy_division (FlashForge
§5.1, which picks the divisions itself) as a dashed line, one panel per head configuration.
Reads the results of experiments/flashforge_fig9.json. Prints one line per the paper's two
metrics (FlashForge §6.3): greedy's speedup over the best fixed k and over k = 1. With the
H200 measurements (results/h200/repro/flashforge_fig9/validation.json, from
results/h200/repro/run_repro.sh; --measured) the same metrics are printed for the measured
batches, and the figure marks greedy's measured speedup over k=1 (black x) and the best
measured fixed k's (black bar)."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import plt  # noqa: E402

PROG = "flashforge_fig9.py"
GREEDY = "greedy_division"


def fixed_labels(labs):
    out = []
    for l in labs:
        m = re.fullmatch(r"fixed k=(\d+)", l)
        if m:
            out.append((int(m.group(1)), l))
    return sorted(out)


def metrics(what, vs_best, vs_one, best_k):
    """The paper's two metrics (FlashForge §6.3) over a set of batches, as one phrase."""
    return (f"{what}: greedy vs best k {min(vs_best):.2f}-{max(vs_best):.2f}x "
            f"(mean {common.mean(vs_best):.2f}x), vs k=1 {min(vs_one):.2f}-"
            f"{max(vs_one):.2f}x (mean {common.mean(vs_one):.2f}x), best k median "
            f"{sorted(best_k)[len(best_k) // 2]}")


def heads_of(t):
    out = []
    for (_, _, hq, hkv) in t:
        if (hq, hkv) not in out:
            out.append((hq, hkv))
    return out


def granularity(keys, fixed, us):
    """FlashForge §6.3's metrics over the batches `keys` on which us(key, label) gives every
    fixed k and greedy a time: greedy's speedup over the best fixed k and over k = 1, and the
    best k, one entry per batch."""
    labs = [l for _, l in fixed] + [GREEDY]
    keys = [k for k in keys if all(us(k, l) for l in labs)]
    vs_best = [min(us(k, l) for _, l in fixed) / us(k, GREEDY) for k in keys]
    vs_one = [us(k, fixed[0][1]) / us(k, GREEDY) for k in keys]
    best_k = [min(fixed, key=lambda f: us(k, f[1]))[0] for k in keys]
    return vs_best, vs_one, best_k


def summarize(doc, meas=None):
    """Per head configuration, granularity() of the simulated batches ("sim") and of the
    measured ones ("measured", when meas is given); and the study's one summary line
    (./scripts/reproduce; docs/reproductions.md through analysis/docnums)."""
    fixed = fixed_labels(common.labels(doc))
    t = common.table(doc)
    out = {"sim": {}, "measured": {}}
    for hq, hkv in heads_of(t):
        keys = [k for k in t if (k[2], k[3]) == (hq, hkv)]
        out["sim"][(hq, hkv)] = granularity(keys, fixed, lambda k, l: t[k][l]["predicted_us"])
        m = granularity(keys, fixed, lambda k, l: common.measured_of(meas, k, l))
        if m[0]:
            out["measured"][(hq, hkv)] = m
    summary = [metrics(f"{hq}/{hkv}", *g) for (hq, hkv), g in out["sim"].items()]
    msummary = [metrics(f"{hq}/{hkv} ({len(g[0])} batches)", *g)
                for (hq, hkv), g in out["measured"].items()]
    measured = f"; H200 measured: {'; '.join(msummary)}" if msummary else ""
    return out, f"{doc['experiment']}: " + "; ".join(summary) + measured


def main():
    args = common.parse_args("flashforge_fig9", __doc__)
    doc = common.load(args.results_json, PROG)
    labs = common.labels(doc)
    fixed = fixed_labels(labs)
    if not fixed or fixed[0][0] != 1:
        sys.exit(f"{PROG}: expected schedulers labelled 'fixed k=1', 'fixed k=2', ...; have "
                 f"{', '.join(labs)}")
    common.require(doc, PROG, GREEDY)
    t = common.table(doc)
    heads = heads_of(t)
    fig, axes = plt.subplots(len(heads), 1, figsize=(13, 3.3 * len(heads)), squeeze=False)
    meas = common.load_measured(args.measured, PROG)
    first = True
    for ax, (hq, hkv) in zip(axes[:, 0], heads):
        keys = [k for k in t if (k[2], k[3]) == (hq, hkv)]
        base = {k: t[k][fixed[0][1]]["predicted_us"] for k in keys}
        width = 0.8 / len(fixed)
        xs = range(len(keys))
        for i, (kk, lab) in enumerate(fixed):
            ax.bar([x + (i - (len(fixed) - 1) / 2) * width for x in xs],
                   [base[k] / t[k][lab]["predicted_us"] for k in keys], width, label=f"k={kk}",
                   color=plt.cm.viridis(i / max(1, len(fixed) - 1)))
        for x, k in zip(xs, keys):
            g = base[k] / t[k][GREEDY]["predicted_us"]
            ax.plot([x - 0.45, x + 0.45], [g, g], "r--", lw=1.5,
                    label="greedy_division" if x == 0 else None)
        ax.axhline(1.0, color="k", lw=0.6)
        ax.set_xticks(list(xs))
        ax.set_xticklabels([k[1] for k in keys], rotation=45, ha="right", fontsize=8)
        ax.set_ylabel(f"{hq}/{hkv} heads\nspeedup over k=1", fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
        # the measured batches of this head configuration (a subset of the simulated ones)
        mv = {}
        for x, k in zip(xs, keys):
            m = {lab: common.measured_of(meas, k, lab) for _, lab in fixed + [(0, GREEDY)]}
            if all(m.values()):
                mv[x] = m
        if mv:
            g1 = [mv[x][fixed[0][1]] / mv[x][GREEDY] for x in mv]
            ax.plot(list(mv), g1, "kx", ms=8, label="greedy, H200 measured" if first else None)
            bestm = [min(mv[x][l] for _, l in fixed) for x in mv]
            ax.plot(list(mv), [mv[x][fixed[0][1]] / b for x, b in zip(mv, bestm)], "k_", ms=14,
                    label="best fixed k, H200 measured" if first else None)
            first = False
    axes[0, 0].legend(fontsize=8, ncol=len(fixed) + 1)
    fig.suptitle(f"FlashForge Fig. 9 reproduction: fixed division k vs greedy_division "
                 f"({common.footer(doc)})", fontsize=10)
    common.save(fig, args.output)
    print(f"{summarize(doc, meas)[1]} -> {args.output}")


if __name__ == "__main__":
    main()
