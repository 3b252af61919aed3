#!/usr/bin/env python3
"""Summary figure of a sweep (docs/experiments.md#sweeps): for each scheduler, the
distribution over every batch of its speed-up over a baseline scheduler (baseline time /
its time, > 1 = faster), as a box plot with the empirical CDF beside it, instead of one bar
per batch. One panel pair per GPU. Reads the results.json of `anvil run`; prints the
median, 5th and 95th percentile per scheduler and the PNG's path.

    python3 analysis/sweep.py out/my-sweep/results.json [--baseline qc] [-o sweep.png]
"""
import argparse
import json
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

TIMES = FuncFormatter(lambda v, _: f"{v:g}x")
# Minor ticks of a log axis, labelled only at a few round factors so they do not collide.
FEW = FuncFormatter(lambda v, _: f"{v:g}x" if round(v, 6) in (0.2, 0.3, 0.5, 2, 3, 5) else "")


def speedups(rows, baseline):
    """{gpu: {scheduler label: [speed-up per batch]}}, batches keyed by (workload, heads)."""
    base, out = {}, {}
    for r in rows:
        if r["scheduler"] == baseline:
            base[(r["gpu"], r["workload"], r["hq"], r["hkv"])] = r["predicted_us"]
    for r in rows:
        b = base.get((r["gpu"], r["workload"], r["hq"], r["hkv"]))
        if r["scheduler"] == baseline or not b or r["predicted_us"] <= 0:
            continue
        out.setdefault(r["gpu"], {}).setdefault(r["scheduler"], []).append(b / r["predicted_us"])
    return out


def quantile(xs, q):
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", help="results.json of `anvil run`, or its directory")
    ap.add_argument("--baseline", help="scheduler label to divide by (default: the first)")
    ap.add_argument("-o", "--output", help="PNG path (default: <results dir>/sweep.png)")
    args = ap.parse_args()
    path = args.results
    if os.path.isdir(path):
        path = os.path.join(path, "results.json")
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"sweep.py: {path}: {e}")
    labels = [s["label"] for s in doc["schedulers"]]
    baseline = args.baseline or labels[0]
    if baseline not in labels:
        sys.exit(f"sweep.py: --baseline '{baseline}' is not a scheduler of {path}; "
                 f"expected one of: {', '.join(labels)}")
    by_gpu = speedups(doc["rows"], baseline)
    if not by_gpu:
        sys.exit(f"sweep.py: {path}: no scheduler besides the baseline '{baseline}'")
    others = [s for s in labels if s != baseline]
    fig, axes = plt.subplots(len(by_gpu), 2, squeeze=False,
                             figsize=(max(10, 0.7 * len(others) + 6), 4.5 * len(by_gpu)))
    for (gpu, per), (box, cdf) in zip(sorted(by_gpu.items()), axes):
        names = [s for s in others if s in per]
        data = [per[s] for s in names]
        box.boxplot(data, showfliers=True, whis=(5, 95), flierprops={"markersize": 2})
        box.set_xticks(range(1, len(names) + 1))
        box.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
        box.axhline(1.0, color="grey", lw=0.8, ls="--")
        box.set_yscale("log")
        box.yaxis.set_major_formatter(TIMES)
        box.yaxis.set_minor_formatter(FEW)
        box.set_ylabel(f"speed-up over {baseline}\n(whiskers: 5th-95th percentile)")
        box.set_title(f"{doc['experiment']} on {gpu}: {len(data[0])} batches")
        for s, xs in zip(names, data):
            xs = sorted(xs)
            cdf.step(xs, [(i + 1) / len(xs) for i in range(len(xs))], where="post", label=s)
            print(f"{gpu} {s}: median {statistics.median(xs):.3f}x, p5 {quantile(xs, 0.05):.3f}x,"
                  f" p95 {quantile(xs, 0.95):.3f}x, faster on {sum(x > 1 for x in xs)}"
                  f"/{len(xs)}")
        cdf.axvline(1.0, color="grey", lw=0.8, ls="--")
        cdf.set_xscale("log")
        cdf.xaxis.set_major_formatter(TIMES)
        cdf.xaxis.set_minor_formatter(FEW)
        cdf.set_xlabel(f"speed-up over {baseline}")
        cdf.set_ylabel("fraction of batches")
        cdf.legend(fontsize=7)
    fig.tight_layout()
    out = args.output or os.path.join(os.path.dirname(os.path.abspath(path)), "sweep.png")
    fig.savefig(out, dpi=120)
    print(out)


if __name__ == "__main__":
    main()
