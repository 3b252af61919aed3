#!/usr/bin/env python3
"""Prints the measured rows of an `anvil validate` run (validation.json) as one table per head
configuration: a row per batch, a column per scheduler label, each cell the chosen field
(default measured_us, the median kernel time). The evidence behind the measured numbers quoted
in docs/reproductions.md, as analysis/rows.py is for the simulated ones.

    python3 analysis/measured_rows.py results/h200/repro/flashforge_fig9 --heads 32/8
    python3 analysis/measured_rows.py results/h200/repro/flashforge_fig8 --field ctas
    python3 analysis/measured_rows.py results/h200/repro/flashinfer_balance --batch Zipf \\
        --ratio "w/o load balancing"

--field is any numeric field of a row (measured_us, measured_min_us, measured_max_us,
predicted_us, floor_us, ape, ctas). --ratio LABEL divides every cell by that label's cell of
the same batch (e.g. speedup columns). --batch keeps batches whose name contains the string.
"""
import argparse
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

PROG = "measured_rows.py"


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` stops quietly
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("validation", help="validation.json of `anvil validate`, or its directory")
    ap.add_argument("--field", default="measured_us", help="row field to print (default measured_us)")
    ap.add_argument("--heads", help="only this head configuration, as Q/KV (e.g. 32/8)")
    ap.add_argument("--batch", help="only batches whose name contains this string")
    ap.add_argument("--ratio", metavar="LABEL",
                    help="print LABEL's value divided by each cell (LABEL / scheduler)")
    args = ap.parse_args()
    if not os.path.exists(args.validation):
        sys.exit(f"{PROG}: {args.validation}: no such file or directory")
    t = common.load_measured(args.validation, PROG)
    if not t:
        sys.exit(f"{PROG}: {args.validation}: no rows")
    heads = []
    for (_, hq, hkv) in t:
        if (hq, hkv) not in heads:
            heads.append((hq, hkv))
    if args.heads:
        try:
            q, kv = (int(x) for x in args.heads.split("/"))
        except ValueError:
            sys.exit(f"{PROG}: --heads: expected Q/KV such as 32/8, got '{args.heads}'")
        if (q, kv) not in heads:
            sys.exit(f"{PROG}: --heads {args.heads}: not measured; have "
                     + ", ".join(f"{a}/{b}" for a, b in heads))
        heads = [(q, kv)]
    labels = []
    for rows in t.values():
        for lab in rows:
            if lab not in labels:
                labels.append(lab)
    if args.ratio and args.ratio not in labels:
        sys.exit(f"{PROG}: --ratio '{args.ratio}': no such scheduler label; have "
                 + ", ".join(labels))
    for (hq, hkv) in heads:
        keys = [k for k in t if (k[1], k[2]) == (hq, hkv)
                and (not args.batch or args.batch in k[0])]
        if not keys:
            continue
        what = f"{args.ratio} / scheduler" if args.ratio else args.field
        print(f"heads {hq}/{hkv}: {what}")
        w = max(len(k[0]) for k in keys) + 2
        cw = max(10, max(len(l) for l in labels) + 2)
        print(f"{'batch':<{w}}" + "".join(f"{l:>{cw}}" for l in labels))
        for k in keys:
            cells = []
            for lab in labels:
                r = t[k].get(lab)
                v = r.get(args.field) if r else None
                if v is None or not isinstance(v, (int, float)):
                    if r and args.field not in r:
                        sys.exit(f"{PROG}: field '{args.field}' not in the rows; have "
                                 + ", ".join(x for x in r if isinstance(r[x], (int, float))))
                    cells.append(f"{'-':>{cw}}")
                    continue
                if args.ratio:
                    b = t[k].get(args.ratio, {}).get(args.field)
                    cells.append(f"{b / v:>{cw}.3f}" if b and v else f"{'-':>{cw}}")
                else:
                    cells.append(f"{v:>{cw}.1f}" if isinstance(v, float) else f"{v:>{cw}}")
            print(f"{k[0]:<{w}}" + "".join(cells))


if __name__ == "__main__":
    main()
