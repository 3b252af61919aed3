#!/usr/bin/env python3
"""The kernels' measured speed against PyTorch SDPA and against the roofline floor
(docs/kernels.md#measured-speed), from one record of `scripts/kernel-evidence`
(default results/h200/kernels/).

Per batch of the speed set (experiments/kernels_speed.json): the best anvil plan (speed.json),
SDPA's fastest backend (sdpa.json), the copy floor (unique KV bytes / the copy bandwidth the
run measured), the FLOP floor (attention FLOPs / the GPU's dense fp16 tensor rate from
gpus/<spec>.json), the roofline floor (the larger, docs/design.md#numbers-that-matter), the
tensor rate that 70 % of the copy floor would need, and the traced run's merge tail (from the
last attention CTA's end to the merge's end, trace_summary.csv). The machine's ceilings
(results/h200/kernels/ceilings/) are read by ceilings().

Usage: python3 analysis/kernel_targets.py [RECORD_DIR]"""
import csv
import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORD = "results/h200/kernels"
SPEED_EXPERIMENT = "experiments/kernels_speed.json"
TARGET_FRACTION = 0.70   # of the copy floor: the bandwidth target of the shared-prefix batches


def _json(root, *parts):
    with open(os.path.join(root, *parts), encoding="utf-8") as f:
        return json.load(f)


def _csv(root, *parts):
    with open(os.path.join(root, *parts), encoding="utf-8") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def attention_flops(B, L, hq, d):
    """QK^T and PV of every request (a leaf of the level tree) against its whole path, each
    query head once: 4 d hq sum(L) per request, whatever the sharing."""
    return 4.0 * d * hq * B[-1] * sum(L)


def _sdpa_by_batch(root, sdpa):
    """SDPA rows keyed by the speed set's batch names (levels batches matched on B and L)."""
    exp = _json(root, SPEED_EXPERIMENT)
    levels = {(tuple(w["B"]), tuple(w["L"])): w["name"]
              for w in exp["workloads"] if w.get("kind") == "levels"}
    return {levels.get((tuple(r["B"]), tuple(r["L"])), r["batch"]): r for r in sdpa["rows"]}


def _best(speed):
    best, order = {}, []
    for r in speed["rows"]:
        if "error" in r or not r.get("pass"):
            continue
        if r["batch"] not in best:
            order.append(r["batch"])
        if r["batch"] not in best or r["median_us"] < best[r["batch"]]["median_us"]:
            best[r["batch"]] = r
    return [best[b] for b in order]


def _merge_tail(traces, r):
    name = "%s__%d-%d__%s__%s.json" % (r["batch"], r["heads"][0], r["heads"][1], r["dtype"],
                                       r["scheduler"])
    t = traces.get(name)
    if not t or not t["merge_end_us"]:
        return 0.0
    return float(t["merge_end_us"]) - float(t["attn_end_us"])


def summarize(root=ROOT, record=RECORD, spec="H200-SXM"):
    """{'rows': per batch, 'geomean': over PAT trees 1-18, 'copy_GBps', 'peak_tflops',
    'device'} of one record."""
    speed = _json(root, record, "speed.json")
    sdpa = _sdpa_by_batch(root, _json(root, record, "sdpa.json"))
    peak = _json(root, "gpus", spec + ".json")["fp16_tensor_tflops"]["value"]
    traces = {t["trace"]: t for t in _csv(root, record, "trace_summary.csv")}
    rows, logs = [], []
    for r in _best(speed):
        q = sdpa[r["batch"]]
        flops = attention_flops(q["B"], q["L"], r["heads"][0], r["head_dim"])
        flop_us = flops / (peak * 1e12) * 1e6
        floor = max(r["floor_us"], flop_us)
        row = {"batch": r["batch"], "scheduler": r["scheduler"], "anvil_us": r["median_us"],
               "sdpa_us": q["sdpa_us"], "backend": q["backend"],
               "speedup": q["sdpa_us"] / r["median_us"], "copy_floor_us": r["floor_us"],
               "flop_floor_us": flop_us, "floor_us": floor,
               "bound": "bytes" if r["floor_us"] >= flop_us else "FLOPs",
               "floor_fraction": floor / r["median_us"], "copy_fraction": r["floor_fraction"],
               "gflop": flops / 1e9,
               "tflops_at_target": flops / (r["floor_us"] / TARGET_FRACTION * 1e-6) / 1e12,
               "merge_tail_us": _merge_tail(traces, r)}
        rows.append(row)
        if r["batch"].startswith("pat-") and int(r["batch"][4:]) <= 18:
            logs.append(math.log(row["speedup"]))
    return {"rows": rows, "geomean": math.exp(sum(logs) / len(logs)),
            "copy_GBps": speed["copy_GBps"], "peak_tflops": peak, "device": speed["device"]}


def ceilings(root=ROOT, record=RECORD):
    """The machine's measured ceilings: mma.sync TFLOP/s by warps per SM, the m64 wgmma tile's
    math by configuration, and the SMs' bulk-copy streaming rate by source and residency."""
    d = os.path.join(record, "ceilings")
    return {"mma": _csv(root, d, "mma_peak.csv"), "tile": _csv(root, d, "tile_math.csv"),
            "stream": _csv(root, d, "l2_probe.csv")}


def main():
    record = sys.argv[1] if len(sys.argv) > 1 else RECORD
    s = summarize(record=record)
    print("device: %s; copy %.0f GB/s; dense fp16 tensor peak %.1f TFLOP/s" % (
        s["device"], s["copy_GBps"], s["peak_tflops"]))
    print("%-10s %-16s %9s %9s %7s %9s %6s %7s %8s %9s %8s" % (
        "batch", "best plan", "anvil_us", "sdpa_us", "speedup", "floor_us", "bound", "floor%",
        "GFLOP", "TFLOPs@70%", "merge_us"))
    for r in s["rows"]:
        print("%-10s %-16s %9.1f %9.1f %7.2f %9.1f %6s %6.1f%% %8.1f %9.0f %8.1f" % (
            r["batch"], r["scheduler"], r["anvil_us"], r["sdpa_us"], r["speedup"], r["floor_us"],
            r["bound"], 100 * r["floor_fraction"], r["gflop"], r["tflops_at_target"],
            r["merge_tail_us"]))
    print("geomean speedup over SDPA, PAT trees 1-18: %.3f" % s["geomean"])
    if record == RECORD:
        c = ceilings()
        print("mma.sync ceiling (H200): %.1f TFLOP/s" % max(float(r["tflops"]) for r in c["mma"]))


if __name__ == "__main__":
    main()
