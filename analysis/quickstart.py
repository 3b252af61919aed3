#!/usr/bin/env python3
"""Figure of the quickstart experiment: predicted time of every scheduler per tree against
the roofline floor (the larger of unique KV bytes / HBM bandwidth and attention FLOPs /
tensor rate), log scale. Reads the results.json
that `anvil run experiments/quickstart.json` writes; prints the PNG's path."""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("results", nargs="?", default="out/quickstart/results.json")
    ap.add_argument("-o", "--output", help="PNG path (default: next to results.json)")
    args = ap.parse_args()
    try:
        with open(args.results) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"quickstart.py: {args.results}: {e}")
    rows = doc["rows"]
    # One x position per (gpu, workload, heads) batch, in file order.
    batches, scheds = [], []
    for r in rows:
        key = (r["gpu"], r["workload"], r["hq"], r["hkv"])
        if key not in batches:
            batches.append(key)
        if r["scheduler"] not in scheds:
            scheds.append(r["scheduler"])
    multi_gpu = len({b[0] for b in batches}) > 1
    multi_heads = len({(b[2], b[3]) for b in batches}) > 1

    def label(b):
        s = b[1]
        if multi_heads:
            s += f" {b[2]}/{b[3]}"
        if multi_gpu:
            s += f" {b[0]}"
        return s

    xs = range(len(batches))
    fig, ax = plt.subplots(figsize=(max(8, 0.45 * len(batches) + 4), 4.8))
    floor = {}
    for r in rows:
        floor[(r["gpu"], r["workload"], r["hq"], r["hkv"])] = r["floor_us"]
    ax.plot(xs, [floor[b] for b in batches], "k_", markersize=14, mew=2,
            label="roofline floor")
    markers = "os^vD<>ph*"
    for i, s in enumerate(scheds):
        pts = {(r["gpu"], r["workload"], r["hq"], r["hkv"]): r["predicted_us"]
               for r in rows if r["scheduler"] == s}
        # Dodge schedulers sideways so equal predictions stay visible.
        dx = (i - (len(scheds) - 1) / 2) * min(0.6 / max(len(scheds), 1), 0.15)
        ax.plot([x + dx for x, b in zip(xs, batches) if b in pts],
                [pts[b] for b in batches if b in pts],
                markers[i % len(markers)], linestyle="none", label=f"{s} (predicted)")
    ax.set_yscale("log")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([label(b) for b in batches], rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("time (µs, log scale)")
    gpus = ", ".join(doc.get("gpus", []))
    ax.set_title(f"{doc['experiment']}: predicted decode-attention time vs floor "
                 f"({gpus}, sim={doc.get('sim')})", fontsize=10)
    ax.grid(True, which="both", axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    out = args.output or os.path.join(os.path.dirname(os.path.abspath(args.results)),
                                      f"{doc['experiment']}.png")
    fig.savefig(out, dpi=120)
    print(f"figure: {out}")


if __name__ == "__main__":
    main()
