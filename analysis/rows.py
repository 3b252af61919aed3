#!/usr/bin/env python3
"""Prints chosen columns of chosen rows of an `anvil run` results file, as an aligned table:
the evidence behind the numbers quoted in docs/reproductions.md (e.g. a plan's partial-state
bytes next to its predicted time). Column names are those of results.csv
(docs/experiments.md).

    python3 analysis/rows.py out/pat_fig10_a100 --workload pat-3 --heads 32/8 \\
        --cols scheduler,items,plan_kv_bytes,plan_partial_bytes,predicted_us
"""
import argparse
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

PROG = "rows.py"


def fmt(v):
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1e6 else f"{v:.4e}"
    return str(v)


def main():
    # `rows.py ... | head` should stop quietly, not with a BrokenPipeError trace.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", help="results directory or results.json of `anvil run`")
    ap.add_argument("--workload", action="append", help="keep rows of this workload (repeatable)")
    ap.add_argument("--scheduler", action="append", help="keep rows of this label (repeatable)")
    ap.add_argument("--gpu", action="append", help="keep rows of this GPU (repeatable)")
    ap.add_argument("--heads", help="keep rows with these heads, HQ/HKV")
    ap.add_argument("--cols", default="gpu,workload,hq,hkv,scheduler,items,predicted_us",
                    help="comma-separated columns")
    args = ap.parse_args()
    path = args.results
    if os.path.isdir(path):
        path = os.path.join(path, "results.json")
    doc = common.load(path, PROG)
    cols = [c for c in args.cols.split(",") if c]
    bad = [c for c in cols if c not in doc["rows"][0]]
    if bad:
        sys.exit(f"{PROG}: unknown column(s) {', '.join(bad)}; expected: "
                 f"{', '.join(doc['rows'][0])}")
    rows = doc["rows"]
    if args.workload:
        rows = [r for r in rows if r["workload"] in args.workload]
    if args.scheduler:
        rows = [r for r in rows if r["scheduler"] in args.scheduler]
    if args.gpu:
        rows = [r for r in rows if r["gpu"] in args.gpu]
    if args.heads:
        try:
            hq, hkv = (int(x) for x in args.heads.split("/"))
        except ValueError:
            sys.exit(f"{PROG}: --heads '{args.heads}': expected HQ/HKV, e.g. 32/8")
        rows = [r for r in rows if (r["hq"], r["hkv"]) == (hq, hkv)]
    if not rows:
        sys.exit(f"{PROG}: no rows match")
    table = [cols] + [[fmt(r[c]) for c in cols] for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(cols))]
    for line in table:
        print("  ".join(v.ljust(w) for v, w in zip(line, widths)).rstrip())


if __name__ == "__main__":
    main()
