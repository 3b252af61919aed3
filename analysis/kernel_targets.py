#!/usr/bin/env python3
"""Issue 5's H200 speed targets next to what bounds them: per batch of results/h200/summary.csv
(best anvil plan, SDPA, unique-bytes floor at the measured copy bandwidth) the attention FLOPs
(4 * d * hq * sum of context lengths: QK^T and PV, each query row against each of its tokens
once, whatever the sharing), the time those FLOPs need at the measured mma.sync ceiling
(results/h200/kernel_ab/mma_peak_h200.csv), and the tensor rate the 70 %-of-copy-bandwidth
target would require. Usage: python3 analysis/kernel_targets.py"""
import csv
import json
import math
import os

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
HQ, D = 32, 128


def contexts():
    trees = json.load(open(os.path.join(ROOT, "experiments/workloads/pat_kernel_trees.json")))["trees"]
    out = {"pat-%d" % t["id"]: (t["B"], t["L"]) for t in trees}
    out["prefix16k"] = ([1, 128], [16384, 512])
    return out


def flops(B, L):
    # every request (a leaf of the level tree) attends to the sum of L over the levels
    return 4.0 * D * HQ * B[-1] * sum(L)


def main():
    peak = max(float(r["tflops"]) for r in csv.DictReader(
        open(os.path.join(ROOT, "results/h200/kernel_ab/mma_peak_h200.csv"))))
    rows = list(csv.DictReader(open(os.path.join(ROOT, "results/h200/summary.csv"))))
    ctx = contexts()
    print("mma.sync ceiling (measured): %.0f TFLOP/s" % peak)
    print("%-10s %9s %9s %7s %9s %8s %9s %10s %10s" % (
        "batch", "anvil_us", "sdpa_us", "speedup", "floor_us", "floor%", "GFLOP",
        "mma_min_us", "TFLOPs@70%"))
    for r in rows:
        if r["batch"] not in ctx:
            continue
        f = flops(*ctx[r["batch"]])
        fl = float(r["floor_us"])
        need = f / (fl / 0.7 * 1e-6) / 1e12
        print("%-10s %9.1f %9.1f %7.2f %9.1f %7.1f%% %9.1f %10.1f %10.0f" % (
            r["batch"], float(r["anvil_us"]), float(r["sdpa_us"]), float(r["speedup"]), fl,
            100 * float(r["floor_fraction"]), f / 1e9, f / (peak * 1e12) * 1e6, need))
    g = [r for r in rows if r["batch"] == "geomean_speedup_pat_1_18"]
    if g:
        print("geomean speedup over SDPA, PAT trees 1-18: %s" % g[0]["best_scheduler"])


if __name__ == "__main__":
    main()
