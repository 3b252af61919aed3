#!/usr/bin/env python3
"""Summarises per-CTA traces written by `anvil exec --trace DIR`: per file the makespan, CTA
count, mean/max CTA duration, SMs used, and the busy fraction (sum of CTA durations over
SMs x makespan, counting co-resident CTAs each) -- all CTAs, merge CTAs (item -1) included --
then the merge phase alone: its CTAs, the last attention CTA's end, the first merge CTA's start
and the last one's end, and the median and longest merge CTA.
Made trace_summary.csv of results/h200/kernels/ (scripts/kernel-evidence).
Usage: python3 analysis/trace_summary.py DIR > trace_summary.csv"""
import glob
import json
import os
import statistics
import sys

print("trace,makespan_us,ctas,mean_cta_us,max_cta_us,sms,cta_us_per_sm_makespan,"
      "merge_ctas,attn_end_us,merge_start_us,merge_end_us,merge_median_us,merge_max_us")
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    t = json.load(open(path))
    c = t["ctas"]
    d = [x["end_us"] - x["start_us"] for x in c]
    sms = len(set(x["sm"] for x in c))
    mk = t["makespan_us"]
    m = [x for x in c if x["item"] < 0]
    a = [x for x in c if x["item"] >= 0]
    md = [x["end_us"] - x["start_us"] for x in m]
    merge = ("%d,%.1f,%.1f,%.1f,%.2f,%.2f" % (
        len(m), max(x["end_us"] for x in a), min(x["start_us"] for x in m),
        max(x["end_us"] for x in m), statistics.median(md), max(md))) if m and a else "0,,,,,"
    print("%s,%.1f,%d,%.1f,%.1f,%d,%.2f,%s" % (os.path.basename(path), mk, len(c),
                                             sum(d) / len(d), max(d), sms,
                                             sum(d) / (sms * mk) if mk else 0, merge))
