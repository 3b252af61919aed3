#!/usr/bin/env python3
"""PAT Figure 12 (ablation): (a) average attention latency and (b) global-memory read+write
bytes of profit_pack (PAT) and its ablations PAT-naive / -compute / -fixed / -serial (and
any further labels in the experiment), averaged over the batches and shown relative to PAT,
as PAT §8.5 reports them. Bytes are drawn twice: the simulator's DRAM traffic (`hbm_bytes`,
after L2 hits) and the plan's own loads and partial-state traffic (`plan_kv_bytes` +
`plan_partial_bytes`). Reads the results of experiments/pat_fig12.json; prints one line."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import plt  # noqa: E402

PROG = "pat_fig12.py"
BASE = "PAT"


def averages(doc):
    """Per label, over the batches every label ran: mean predicted µs, mean DRAM bytes and
    mean plan bytes (KV loads + partial states); and how many batches that is."""
    labs = common.labels(doc)
    t = common.table(doc)
    keys = [k for k in t if all(l in t[k] for l in labs)]

    def avg(lab, f):
        return common.mean(f(t[k][lab]) for k in keys)

    lat = {l: avg(l, lambda r: r["predicted_us"]) for l in labs}
    hbm = {l: avg(l, lambda r: r["hbm_bytes"]) for l in labs}
    plan = {l: avg(l, lambda r: r["plan_kv_bytes"] + r["plan_partial_bytes"]) for l in labs}
    return lat, hbm, plan, len(keys)


def summarize(doc):
    """Per ablation label, (latency, DRAM bytes) relative to PAT minus 1; and the study's one
    summary line (./scripts/reproduce, docs/reproductions.md through analysis/docnums)."""
    lat, hbm, _, _ = averages(doc)
    rel = {l: (lat[l] / lat[BASE] - 1, hbm[l] / hbm[BASE] - 1) for l in lat if l != BASE}
    parts = [f"{l} {100 * a:+.1f}% latency, {100 * b:+.1f}% DRAM bytes"
             for l, (a, b) in rel.items()]
    return rel, f"{doc['experiment']}: vs PAT: " + "; ".join(parts)


def main():
    args = common.parse_args("pat_fig12", __doc__)
    doc = common.load(args.results_json, PROG)
    common.require(doc, PROG, BASE)
    labs = common.labels(doc)
    lat, hbm, plan, nkeys = averages(doc)
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    xs = range(len(labs))
    a.bar(xs, [lat[l] for l in labs], color=["C4"] + ["C0"] * (len(labs) - 1))
    for x, l in zip(xs, labs):
        a.text(x, lat[l], f"{lat[l] / lat[BASE]:.3f}x", ha="center", va="bottom", fontsize=8)
    a.set_ylabel("mean predicted latency (µs)")
    a.set_title("(a) average attention latency", fontsize=10)
    w = 0.4
    b.bar([x - w / 2 for x in xs], [hbm[l] / 1e6 for l in labs], w, label="DRAM (hbm_bytes)")
    b.bar([x + w / 2 for x in xs], [plan[l] / 1e6 for l in labs], w,
          label="plan loads + partials")
    for x, l in zip(xs, labs):
        b.text(x - w / 2, hbm[l] / 1e6, f"{hbm[l] / hbm[BASE]:.3f}", ha="center", va="bottom",
               fontsize=7)
    b.set_ylabel("mean global memory R+W (MB)")
    b.set_title("(b) global memory read and write size", fontsize=10)
    b.legend(fontsize=8, loc="lower left")
    for ax in (a, b):
        ax.set_xticks(list(xs))
        ax.set_xticklabels(labs, rotation=20, fontsize=8)
        ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(f"PAT Fig. 12 reproduction over {nkeys} batches ({common.footer(doc)})",
                 fontsize=10)
    common.save(fig, args.output)
    print(f"{summarize(doc)[1]} -> {args.output}")


if __name__ == "__main__":
    main()
