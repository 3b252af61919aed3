#!/usr/bin/env python3
"""FlashForge Figure 6 (global memory access): bytes of query-centric FlashDecoding over
bytes of greedy_division (FlashForge) per workload, log scale. Two byte counts are drawn:
the global loads and stores the plans issue (KV loads + partial-state writes and merge
reads: `plan_kv_bytes + plan_partial_bytes`), which is what the paper's reduction counts,
and the simulator's DRAM traffic after L2 hits (`hbm_bytes`). Reads the results of
experiments/flashforge_memory.json; prints the range and mean reduction of both."""
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import plt  # noqa: E402

PROG = "flashforge_memory.py"
QC = "FlashDecoding (query_centric)"
FF = "FlashForge (greedy_division)"


def issued(r):
    return r["plan_kv_bytes"] + r["plan_partial_bytes"]


def reductions(doc):
    """Per workload (file order): query-centric over greedy_division bytes as issued by the
    plans, as reaching DRAM in the simulation, and the ideal (query-centric / unique KV)."""
    t = common.table(doc)
    keys = list(t)
    return ([k[1] for k in keys], [issued(t[k][QC]) / issued(t[k][FF]) for k in keys],
            [t[k][QC]["hbm_bytes"] / t[k][FF]["hbm_bytes"] for k in keys],
            [t[k][QC]["sharing_ratio"] for k in keys])


def summarize(doc):
    """reductions() and the study's one summary line (./scripts/reproduce;
    docs/reproductions.md through analysis/docnums)."""
    names, red_issued, red_hbm, ideal = reductions(doc)
    return (names, red_issued, red_hbm, ideal), (
        f"{doc['experiment']}: reduction over {len(names)} workloads: issued bytes "
        f"{min(red_issued):.2f}-{max(red_issued):.2f}x (mean {common.mean(red_issued):.2f}x); "
        f"DRAM bytes {min(red_hbm):.2f}-{max(red_hbm):.2f}x (mean {common.mean(red_hbm):.2f}x); "
        f"ideal {min(ideal):.2f}-{max(ideal):.2f}x")


def main():
    args = common.parse_args("flashforge_memory", __doc__)
    doc = common.load(args.results_json, PROG)
    common.require(doc, PROG, QC, FF)
    names, red_issued, red_hbm, ideal = reductions(doc)
    fig, ax = plt.subplots(figsize=(12, 4.5))
    xs = range(len(names))
    w = 0.28
    ax.bar([x - w for x in xs], ideal, w, label="query-centric / unique KV bytes (ideal)",
           color="0.75")
    ax.bar(list(xs), red_issued, w, label="issued loads+stores (plan bytes)", color="C0")
    ax.bar([x + w for x in xs], red_hbm, w, label="DRAM bytes after L2 (simulated)", color="C1")
    ax.set_yscale("log")
    ax.axhline(1.0, color="k", lw=0.6)
    ax.set_xticks(list(xs))
    ax.set_xticklabels(names, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("FlashDecoding bytes / FlashForge bytes")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"FlashForge Fig. 6 reproduction: global memory access reduction "
                 f"({common.footer(doc)})", fontsize=10)
    common.save(fig, args.output)
    print(f"{summarize(doc)[1]} -> {args.output}")
    measured_dram(dict(zip(names, red_hbm)))


NCU_CSV = os.path.join(common.REPO, "results", "h200", "repro", "memory_ncu", "bytes.csv")


def measured_bytes(path=NCU_CSV):
    """{workload: (query_centric, greedy_division) DRAM bytes read + written} from the H200
    Nsight Compute counters (results/h200/repro/run_memory_ncu.sh); {} without the file."""
    if not os.path.exists(path):
        return {}
    by = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            by.setdefault(r["workload"], {})[r["scheduler"]] = (
                float(r["dram_read_bytes"]) + float(r["dram_write_bytes"]))
    return {w: (d["query_centric"], d["greedy_division"]) for w, d in by.items()
            if "query_centric" in d and "greedy_division" in d}


def measured_dram(sim_hbm):
    """Prints measured_bytes() per workload as the query-centric / greedy_division ratio,
    next to the simulated DRAM ratio (A100 spec)."""
    red = []
    for wname, (qc, gd) in measured_bytes().items():
        red.append(qc / gd)
        print(f"  measured H200 {wname:10s} DRAM GB qc {qc / 1e9:7.2f} "
              f"greedy {gd / 1e9:7.2f} reduction {red[-1]:5.2f}x "
              f"(sim, A100 spec: {sim_hbm.get(wname, float('nan')):.2f}x)")
    if red:
        print(f"measured H200 DRAM reduction over {len(red)} workloads: "
              f"{min(red):.2f}-{max(red):.2f}x (mean {common.mean(red):.2f}x)")


if __name__ == "__main__":
    main()
