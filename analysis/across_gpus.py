#!/usr/bin/env python3
"""Across GPUs (FlashForge §6.4): predicted latency of query-centric FlashDecoding and of
greedy_division (FlashForge) for one batch on every GPU spec of the experiment, with the
speedup per GPU, GPUs ordered by HBM bandwidth (the paper's claim is that the gap widens as
bandwidth falls). The bandwidth is read back from the results as unique KV bytes / floor.
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


def main():
    args = common.parse_args("across_gpus", __doc__)
    doc = common.load(args.results_json, PROG)
    common.require(doc, PROG, QC, FF)
    t = common.table(doc)
    keys = list(t)

    def bw(k):  # GB/s the floor was computed with
        r = t[k][FF]
        return r["unique_kv_bytes"] / (r["floor_us"] * 1e3)

    keys.sort(key=bw)
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    xs = range(len(keys))
    w = 0.38
    a.bar([x - w / 2 for x in xs], [t[k][QC]["predicted_us"] / 1e3 for k in keys], w, label=QC)
    a.bar([x + w / 2 for x in xs], [t[k][FF]["predicted_us"] / 1e3 for k in keys], w, label=FF)
    a.set_ylabel("predicted latency (ms)")
    a.legend(fontsize=8)
    sp = [t[k][QC]["predicted_us"] / t[k][FF]["predicted_us"] for k in keys]
    b.bar(xs, sp, color="C2")
    for x, s in zip(xs, sp):
        b.text(x, s, f"{s:.2f}x", ha="center", va="bottom", fontsize=8)
    b.set_ylabel("speedup of greedy_division over query_centric")
    meas = common.load_measured(args.measured, PROG)
    measured = ""
    for x, k in zip(xs, keys):
        mq, mf = common.measured_of(meas, k, QC), common.measured_of(meas, k, FF)
        if k[0] != "H200-SXM" or not (mq and mf):
            continue
        a.plot([x - w / 2, x + w / 2], [mq / 1e3, mf / 1e3], "kx", ms=9, label="H200 measured")
        a.legend(fontsize=8)
        b.plot([x], [mq / mf], "kx", ms=9)
        b.text(x, mq / mf, f"  measured {mq / mf:.2f}x", fontsize=7, va="center")
        measured = (f"; H200 measured: query_centric {mq:.0f} us, greedy_division {mf:.0f} us, "
                    f"{mq / mf:.2f}x")
    for ax in (a, b):
        ax.set_xticks(list(xs))
        ax.set_xticklabels([f"{k[0]}\n{bw(k):.0f} GB/s" for k in keys], fontsize=7)
        ax.grid(True, axis="y", alpha=0.3)
    k0 = keys[0]
    fig.suptitle(f"FlashForge §6.4 across GPUs: '{k0[1]}', {k0[2]}/{k0[3]} heads "
                 f"(anvil sim={doc.get('sim')})", fontsize=10)
    common.save(fig, args.output)
    print(f"{doc['experiment']}: speedup by GPU (ascending HBM bandwidth): " +
          ", ".join(f"{k[0]} {s:.2f}x" for k, s in zip(keys, sp)) +
          "; query_centric DRAM/L2 GB " +
          ", ".join(f"{t[k][QC]['hbm_bytes'] / 1e9:.2f}/{t[k][QC]['l2_bytes'] / 1e9:.1f}"
                    for k in keys) + measured + f" -> {args.output}")


if __name__ == "__main__":
    main()
