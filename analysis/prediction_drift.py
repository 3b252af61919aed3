#!/usr/bin/env python3
"""How far a change to the simulator moved the committed records' predictions
(docs/validation.md#remaking-the-records): after scripts/repredict-records, compares every
validation record in the working tree with the same file at a git revision.

    python3 analysis/prediction_drift.py [REV]        (default HEAD)

Per set: pairs, MAPE before and after (points), and the largest change of one pair's
prediction (--json: also how many pairs moved past --pair-percent and how many of those moved
toward their measured time); exits 1 when a set's MAPE moved by more than --mape-points (0.3) or a pair by
more than --pair-percent (1.0).
"""
import argparse
import glob
import json
import subprocess
import sys


def rows_at(rev, path):
    try:
        text = subprocess.run(["git", "show", "%s:%s" % (rev, path)], check=True,
                              capture_output=True, text=True).stdout
    except subprocess.CalledProcessError:
        return None
    return json.loads(text)["rows"]


def key(row):
    return (row["batch"], tuple(row["heads"]), row["scheduler"], row.get("params", ""))


def mape(rows):
    errs = [abs(r["predicted_us"] - r["measured_us"]) / r["measured_us"]
            for r in rows if r.get("measured_us") and r.get("predicted_us")]
    return 100 * sum(errs) / len(errs) if errs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rev", nargs="?", default="HEAD")
    ap.add_argument("--mape-points", type=float, default=0.3)
    ap.add_argument("--pair-percent", type=float, default=1.0)
    ap.add_argument("--json", metavar="FILE", help="also write the sets' figures as JSON")
    a = ap.parse_args()
    bad, sets = 0, []
    print("%-40s %6s %8s %8s %9s  %s" % ("set", "pairs", "MAPE", "now", "worst", "worst pair"))
    for path in sorted(glob.glob("results/*/validation/*/validation.json")):
        old = rows_at(a.rev, path)
        if old is None:
            continue
        with open(path, encoding="utf-8") as f:
            new = json.load(f)["rows"]
        before = {key(r): r for r in old}
        worst, where, moved, toward = 0.0, "-", 0, 0
        for r in new:
            o = before.get(key(r))
            if not o or not o.get("predicted_us") or r.get("predicted_us") is None:
                continue
            d = 100 * (r["predicted_us"] - o["predicted_us"]) / o["predicted_us"]
            meas = r.get("measured_us")
            if meas and abs(d) > a.pair_percent:  # moved more than the tolerance: which way?
                moved += 1
                toward += abs(r["predicted_us"] - meas) < abs(o["predicted_us"] - meas)
            if abs(d) > abs(worst):
                worst, where = d, "%s %s %s (%.1f -> %.1f us, measured %.1f)" % (
                    r["batch"], "/".join(map(str, r["heads"])), r["scheduler"],
                    o["predicted_us"], r["predicted_us"], r.get("measured_us") or 0)
        m0, m1 = mape(old), mape(new)
        flag = abs(m1 - m0) > a.mape_points or abs(worst) > a.pair_percent
        bad |= flag
        sets.append({"set": path.split("/validation.json")[0], "pairs": len(new),
                     "mape_before": m0, "mape_after": m1, "worst_pair_percent": worst,
                     "worst_pair": where, "pairs_moved": moved, "moved_toward_measured": toward})
        print("%-40s %6d %7.2f%% %7.2f%% %+8.2f%%  %s%s" % (
            path.split("/validation.json")[0], len(new), m0, m1, worst, where,
            "  <- over" if flag else ""))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"rev": a.rev, "mape_points": a.mape_points,
                       "pair_percent": a.pair_percent, "sets": sets}, f, indent=1)
            f.write("\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
