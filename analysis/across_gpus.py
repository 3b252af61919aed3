#!/usr/bin/env python3
"""Across GPUs (FlashForge §6.4): predicted latency of query-centric FlashDecoding and of
greedy_division (FlashForge) for one batch on every GPU spec of the experiment, with the
speedup per GPU, GPUs ordered by HBM bandwidth (the paper's claim is that the gap widens as
bandwidth falls). The bandwidth is read back from the results as unique KV bytes / the floor's memory part.
Reads the results of experiments/across_gpus.json; prints the speedup per GPU. With the H200
measurement (results/h200/repro/across_gpus/validation.json, from
results/h200/repro/run_repro.sh; --measured) the H200's measured latencies and speedup are
drawn as black markers and printed after the simulated ones."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import plt  # noqa: E402

PROG = "across_gpus.py"
QC = "FlashDecoding (query_centric)"
FF = "FlashForge (greedy_division)"


def per_gpu(doc, meas=None):
    """One dict per GPU, ascending HBM bandwidth (GB/s the floor was computed with): gpu, bw,
    qc_us, ff_us, speedup, qc_dram / qc_l2 (bytes), floor_us; and the measured H200 point
    (qc_us, ff_us, and the calibrated engine's predictions qc_pred_us, ff_pred_us) or None."""
    t = common.table(doc)
    out, measured = [], None
    for k in t:
        q, f = t[k][QC], t[k][FF]
        out.append({"gpu": k[0], "bw": f["unique_kv_bytes"] / (f["floor_mem_us"] * 1e3),
                    "qc_us": q["predicted_us"], "ff_us": f["predicted_us"],
                    "speedup": q["predicted_us"] / f["predicted_us"], "qc_dram": q["hbm_bytes"],
                    "qc_l2": q["l2_bytes"], "floor_us": f["floor_us"], "key": k})
        mq, mf = common.measured_of(meas, k, QC), common.measured_of(meas, k, FF)
        if k[0] == "H200-SXM" and mq and mf:
            rows = meas[(k[1], k[2], k[3])]
            measured = {"qc_us": mq, "ff_us": mf, "qc_pred_us": rows[QC]["predicted_us"],
                        "ff_pred_us": rows[FF]["predicted_us"]}
    out.sort(key=lambda g: g["bw"])
    return out, measured


def summarize(doc, meas=None):
    """per_gpu() and the study's one summary line (./scripts/reproduce;
    docs/reproductions.md through analysis/docnums)."""
    gpus, m = per_gpu(doc, meas)
    line = (f"{doc['experiment']}: speedup by GPU (ascending HBM bandwidth): " +
            ", ".join(f"{g['gpu']} {g['speedup']:.2f}x" for g in gpus) +
            "; query_centric DRAM/L2 GB " +
            ", ".join(f"{g['qc_dram'] / 1e9:.2f}/{g['qc_l2'] / 1e9:.1f}" for g in gpus))
    if m:
        line += (f"; H200 measured: query_centric {m['qc_us']:.0f} us, greedy_division "
                 f"{m['ff_us']:.0f} us, {m['qc_us'] / m['ff_us']:.2f}x")
    return (gpus, m), line


def main():
    args = common.parse_args("across_gpus", __doc__)
    doc = common.load(args.results_json, PROG)
    common.require(doc, PROG, QC, FF)
    meas = common.load_measured(args.measured, PROG)
    gpus, m = per_gpu(doc, meas)
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    xs = range(len(gpus))
    w = 0.38
    a.bar([x - w / 2 for x in xs], [g["qc_us"] / 1e3 for g in gpus], w, label=QC)
    a.bar([x + w / 2 for x in xs], [g["ff_us"] / 1e3 for g in gpus], w, label=FF)
    a.set_ylabel("predicted latency (ms)")
    a.legend(fontsize=8)
    b.bar(xs, [g["speedup"] for g in gpus], color="C2")
    for x, g in zip(xs, gpus):
        b.text(x, g["speedup"], f"{g['speedup']:.2f}x", ha="center", va="bottom", fontsize=8)
    b.set_ylabel("speedup of greedy_division over query_centric")
    for x, g in zip(xs, gpus):
        if g["gpu"] != "H200-SXM" or not m:
            continue
        mq, mf = m["qc_us"], m["ff_us"]
        a.plot([x - w / 2, x + w / 2], [mq / 1e3, mf / 1e3], "kx", ms=9, label="H200 measured")
        a.legend(fontsize=8)
        b.plot([x], [mq / mf], "kx", ms=9)
        b.text(x, mq / mf, f"  measured {mq / mf:.2f}x", fontsize=7, va="center")
    for ax in (a, b):
        ax.set_xticks(list(xs))
        ax.set_xticklabels([f"{g['gpu']}\n{g['bw']:.0f} GB/s" for g in gpus], fontsize=7)
        ax.grid(True, axis="y", alpha=0.3)
    k0 = gpus[0]["key"]
    fig.suptitle(f"FlashForge §6.4 across GPUs: '{k0[1]}', {k0[2]}/{k0[3]} heads "
                 f"(anvil sim={doc.get('sim')})", fontsize=10)
    common.save(fig, args.output)
    print(f"{summarize(doc, meas)[1]} -> {args.output}")


if __name__ == "__main__":
    main()
