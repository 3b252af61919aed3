#!/usr/bin/env python3
"""FlashInfer load balancing (its Tables 6-7, at kernel level): speedup of streamk_balance
(FlashInfer Alg. 1) over the same batches without balancing (one CTA per request) and over
FlashDecoding split-K, against batch size, one panel per length distribution. Workload names
are '<distribution> b=<batch>' (analysis/gen_experiments.py). Reads the results of
experiments/flashinfer_balance.json; prints the mean and largest speedup per distribution.
With the H200 measurements (results/h200/repro/flashinfer_balance/validation.json, from
results/h200/repro/run_repro.sh; --measured) it draws the measured speedups as dashed lines
and prints them after the simulated ones."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import plt  # noqa: E402

PROG = "flashinfer_balance.py"
LB = "w/ load balancing"


def distributions(doc, prog=PROG):
    """{distribution: [(batch size, key)]} from workload names '<distribution> b=<batch>'."""
    dists = {}
    for k in common.table(doc):
        m = re.fullmatch(r"(.*) b=(\d+)", k[1])
        if not m:
            sys.exit(f"{prog}: workload '{k[1]}' is not named '<distribution> b=<batch>'")
        dists.setdefault(m.group(1), []).append((int(m.group(2)), k))
    for pts in dists.values():
        pts.sort()
    return dists


def speedups(doc, meas=None):
    """{(distribution, baseline label): [(batch, speedup of balancing)]}, simulated and (for
    the batches measured under both labels) measured."""
    t = common.table(doc)
    sim, measured = {}, {}
    for dist, pts in distributions(doc).items():
        for lab in [l for l in common.labels(doc) if l != LB]:
            sim[(dist, lab)] = [(b, t[k][lab]["predicted_us"] / t[k][LB]["predicted_us"])
                                for b, k in pts]
            m = [(b, common.measured_of(meas, k, lab), common.measured_of(meas, k, LB))
                 for b, k in pts]
            m = [(b, x / y) for b, x, y in m if x and y]
            if m:
                measured[(dist, lab)] = m
    return sim, measured


def summarize(doc, meas=None):
    """speedups() and the study's one summary line (./scripts/reproduce;
    docs/reproductions.md through analysis/docnums)."""
    sim, measured = speedups(doc, meas)

    def phrase(key, pts, span):
        ys = [y for _, y in pts]
        return (f"{key[0]} vs {key[1]}: mean {common.mean(ys):.2f}x max {max(ys):.2f}x" +
                (f" (b={pts[0][0]}-{pts[-1][0]})" if span else ""))

    line = f"{doc['experiment']}: " + "; ".join(phrase(k, v, False) for k, v in sim.items())
    if measured:
        line += "; H200 measured: " + "; ".join(phrase(k, v, True) for k, v in measured.items())
    return (sim, measured), line


def main():
    args = common.parse_args("flashinfer_balance", __doc__)
    doc = common.load(args.results_json, PROG)
    common.require(doc, PROG, LB)
    labs = [l for l in common.labels(doc) if l != LB]
    t = common.table(doc)
    dists = distributions(doc)
    fig, axes = plt.subplots(1, len(dists), figsize=(4.5 * len(dists), 3.8), squeeze=False)
    meas = common.load_measured(args.measured, PROG)
    sim, measured = speedups(doc, meas)
    for ax, (dist, pts) in zip(axes[0], dists.items()):
        bs = [b for b, _ in pts]
        for i, lab in enumerate(labs):
            ax.plot(bs, [y for _, y in sim[(dist, lab)]], "o-", color=f"C{i}",
                    label=f"{LB} over {lab} (sim)")
            mpts = measured.get((dist, lab))
            if mpts:
                ax.plot([b for b, _ in mpts], [y for _, y in mpts], "x--", color=f"C{i}",
                        label=f"{LB} over {lab} (H200 measured)")
        ax.axhline(1.0, color="k", lw=0.6)
        ax.set_xscale("log", base=2)
        ax.set_xticks(bs)
        ax.set_xticklabels([str(b) for b in bs])
        ax.set_xlabel("batch size")
        ax.set_title(dist, fontsize=10)
        ax.grid(True, alpha=0.3)
    axes[0, 0].set_ylabel("speedup of load balancing")
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(f"FlashInfer load-balancing ablation at kernel level ({common.footer(doc)}, "
                 f"{t[next(iter(t))][LB]['hq']}/{t[next(iter(t))][LB]['hkv']} heads)", fontsize=10)
    common.save(fig, args.output)
    print(f"{summarize(doc, meas)[1]} -> {args.output}")


if __name__ == "__main__":
    main()
