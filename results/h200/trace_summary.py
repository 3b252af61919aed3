#!/usr/bin/env python3
"""Summarises per-CTA traces written by `anvil exec --trace DIR`: per file the makespan, CTA
count, mean/max CTA duration, SMs used, and the busy fraction (sum of CTA durations over
SMs x makespan, counting co-resident CTAs each). Usage: trace_summary.py DIR > summary.csv"""
import glob
import json
import os
import sys

print("trace,makespan_us,ctas,mean_cta_us,max_cta_us,sms,cta_us_per_sm_makespan")
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    t = json.load(open(path))
    c = t["ctas"]
    d = [x["end_us"] - x["start_us"] for x in c]
    sms = len(set(x["sm"] for x in c))
    mk = t["makespan_us"]
    print("%s,%.1f,%d,%.1f,%.1f,%d,%.2f" % (os.path.basename(path), mk, len(c), sum(d) / len(d),
                                          max(d), sms, sum(d) / (sms * mk) if mk else 0))
