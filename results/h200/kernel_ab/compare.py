#!/usr/bin/env python3
"""Per (batch, scheduler) median time of two `anvil exec --csv` files, the ratio, and per batch
the best plan of each. Usage: compare.py A.csv B.csv"""
import csv
import math
import sys


def load(p):
    return {(r["batch"], r["scheduler"]): r for r in csv.DictReader(open(p))}


a, b = load(sys.argv[1]), load(sys.argv[2])
best = {}
fails = 0
for k in sorted(set(a) & set(b)):
    ta, tb = float(a[k]["median_us"]), float(b[k]["median_us"])
    fails += b[k].get("pass", "1") != "1"
    ba, bb = best.get(k[0], (math.inf, math.inf, "", ""))[:2], None
    cur = best.get(k[0], [math.inf, "", math.inf, "", float(b[k]["floor_us"])])
    if ta < cur[0]:
        cur[0:2] = [ta, k[1]]
    if tb < cur[2]:
        cur[2:4] = [tb, k[1]]
    best[k[0]] = cur
print("batch,best_A_us,sched_A,best_B_us,sched_B,B_over_A,floor_frac_B")
g = []
for batch, (ta, sa, tb, sb, fl) in best.items():
    g.append(tb / ta)
    print("%s,%.1f,%s,%.1f,%s,%.3f,%.3f" % (batch, ta, sa, tb, sb, tb / ta, fl / tb))
print("geomean B/A over batches: %.3f; B rows failing verification: %d" %
      (math.exp(sum(map(math.log, g)) / len(g)), fails))
if len(sys.argv) > 3:  # sdpa.json from validation/peer_sdpa.py: the SDPA ratio
    import json
    sd = {("prefix16k" if "16384" in r["batch"] else r["batch"]): r["sdpa_us"]
          for r in json.load(open(sys.argv[3]))["rows"]}
    for lab, col in (("A", 0), ("B", 2)):
        lg = [math.log(sd[k] / v[col]) for k, v in best.items()
              if k.startswith("pat-") and int(k[4:]) <= 18 and k in sd]
        print("%s: geomean speedup over SDPA, PAT trees 1-18: %.3f (%d trees)" %
              (lab, math.exp(sum(lg) / len(lg)), len(lg)))
# Kernel-only view: rows of schedulers whose plans do not depend on anvil_core changes made
# between the builds (profit_pack and auto may plan differently), ratio per (batch, scheduler).
fixed = [k for k in set(a) & set(b) if k[1] not in ("profit_pack", "pp_serial", "auto")]
lr = [math.log(float(b[k]["median_us"]) / float(a[k]["median_us"])) for k in fixed]
print("geomean B/A per (batch, scheduler), %d rows without profit_pack/auto: %.3f" %
      (len(lr), math.exp(sum(lr) / len(lr))))
