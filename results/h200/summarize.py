#!/usr/bin/env python3
"""Best anvil plan per batch (speed.json from `anvil exec exec_speed.json`) against SDPA
(sdpa.json from validation/peer_sdpa.py): writes summary.csv with the speedup, the floor
fraction and the geometric mean over PAT trees 1-18. Usage (in results/h200):
python3 summarize.py > summary.csv"""
import json
import math

s = json.load(open("speed.json"))
p = json.load(open("sdpa.json"))
sd = {("prefix16k" if "16384" in r["batch"] else r["batch"]): r for r in p["rows"]}
best = {}
for r in s["rows"]:
    if "error" not in r and (r["batch"] not in best or r["median_us"] < best[r["batch"]]["median_us"]):
        best[r["batch"]] = r
print("batch,best_scheduler,anvil_us,sdpa_us,sdpa_backend,speedup,floor_us,floor_fraction")
logs = []
for b, r in best.items():
    q = sd[b]
    sp = q["sdpa_us"] / r["median_us"]
    print("%s,%s,%.1f,%.1f,%s,%.2f,%.1f,%.3f" % (b, r["scheduler"], r["median_us"], q["sdpa_us"],
                                                 q["backend"], sp, r["floor_us"],
                                                 r["floor_fraction"]))
    if b.startswith("pat-") and int(b[4:]) <= 18:
        logs.append(math.log(sp))
print("geomean_speedup_pat_1_18,%.3f" % math.exp(sum(logs) / len(logs)))
