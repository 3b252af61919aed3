#!/usr/bin/env python3
"""FlashForge Figure 8 (ablation): predicted latency of no optimisation, prefix tree only,
division only and both, on the balanced and the degenerate tree (FlashForge §6.2), one bar
group per tree with each bar's speedup over 'none'. Reads the results of
experiments/flashforge_fig8.json; prints the latencies and the overall speedup per tree. With
the H200 measurements (results/h200/repro/flashforge_fig8/validation.json, from
results/h200/repro/run_repro.sh; --measured) each bar gets a hatched measured twin and the
measured latencies are printed after the simulated ones."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import plt  # noqa: E402

PROG = "flashforge_fig8.py"
NONE = "none"


def latencies(doc, meas=None):
    """{tree: {label: ms}} simulated, and the same measured for the trees on which every
    label was measured."""
    labs = common.labels(doc)
    t = common.table(doc)
    sim = {k[1]: {l: t[k][l]["predicted_us"] / 1e3 for l in labs} for k in t}
    measured = {}
    for k in t:
        mm = {l: common.measured_of(meas, k, l) for l in labs}
        if all(mm.values()):
            measured[k[1]] = {l: v / 1e3 for l, v in mm.items()}
    return sim, measured


def phrase(tree, ms):
    """One tree's latencies and the speedup of the last variant over the first."""
    vs = list(ms.values())
    return (f"{tree}: " + ", ".join(f"{l} {v:.2f} ms" for l, v in ms.items()) +
            f" ({vs[0] / vs[-1]:.2f}x)")


def summarize(doc, meas=None):
    """latencies() and the study's one summary line (./scripts/reproduce;
    docs/reproductions.md through analysis/docnums)."""
    sim, measured = latencies(doc, meas)
    line = f"{doc['experiment']}: " + "; ".join(phrase(k, v) for k, v in sim.items())
    if measured:
        line += "; H200 measured: " + "; ".join(phrase(k, v) for k, v in measured.items())
    return (sim, measured), line


def main():
    args = common.parse_args("flashforge_fig8", __doc__)
    doc = common.load(args.results_json, PROG)
    common.require(doc, PROG, NONE)
    labs = common.labels(doc)
    t = common.table(doc)
    keys = list(t)
    fig, axes = plt.subplots(1, len(keys), figsize=(5 * len(keys), 4), squeeze=False)
    meas = common.load_measured(args.measured, PROG)
    for ax, k in zip(axes[0], keys):
        ms = [t[k][l]["predicted_us"] / 1e3 for l in labs]
        mm = [common.measured_of(meas, k, l) for l in labs]
        mm = [v / 1e3 for v in mm] if all(mm) else None
        w = 0.4 if mm else 0.8
        xs = [x - w / 2 if mm else x for x in range(len(labs))]
        bars = ax.bar(xs, ms, w, color=[f"C{i}" for i in range(len(labs))],
                      label=f"simulated ({t[k][labs[0]]['gpu']})")
        series = [(bars, ms)]
        if mm:
            mb = ax.bar([x + w for x in xs], mm, w, color=[f"C{i}" for i in range(len(labs))],
                        hatch="//", alpha=0.6, label="H200 measured")
            series.append((mb, mm))
            ax.legend(fontsize=7)
        for bs, vs in series:
            for b, v in zip(bs, vs):
                ax.text(b.get_x() + b.get_width() / 2, v, f"{v:.1f} ms\n{vs[0] / v:.1f}x",
                        ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(labs)))
        ax.set_xticklabels(labs, rotation=15, fontsize=8)
        ax.set_ylabel("latency (ms)" if mm else "predicted latency (ms)")
        ax.set_ylim(0, max(ms + (mm or [])) * 1.25)
        ax.set_title(f"{k[1]} tree ({k[2]}/{k[3]} heads, {t[k][labs[0]]['requests']} requests)",
                     fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(f"FlashForge Fig. 8 reproduction ({common.footer(doc)})", fontsize=10)
    common.save(fig, args.output)
    print(f"{summarize(doc, meas)[1]} -> {args.output}")


if __name__ == "__main__":
    main()
