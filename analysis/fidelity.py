"""Fidelity of the simulator per GPU and set, from `anvil validate` reports
(docs/validation.md#results).

  python3 analysis/fidelity.py [--markdown] NAME=DIR [NAME=DIR ...]

DIR holds a validation.json (measured, or re-predicted offline). Prints, per report: pairs,
MAPE, worst pair, Spearman (over all pairs), best-plan agreement, and how often `auto`'s
plan measured within 5 % and within 2 % of the measured best plan of its batch.
"""
import argparse
import json
import os
import sys


def load(d):
    path = d if d.endswith(".json") else os.path.join(d, "validation.json")
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"fidelity.py: {path}: {e}")


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb)


def summarize(doc):
    rows = doc["rows"]
    ape = [abs(r["predicted_us"] - r["measured_us"]) / r["measured_us"] for r in rows]
    batches = {}
    for r in rows:
        batches.setdefault((r["batch"], tuple(r["heads"])), []).append(r)
    auto5 = auto2 = agree = 0
    for rs in batches.values():
        best = min(r["measured_us"] for r in rs)
        pick = min(rs, key=lambda r: r["predicted_us"])
        agree += pick["measured_us"] == best
        auto = [r for r in rs if r["scheduler"] == "auto"]
        if auto:
            auto5 += auto[0]["measured_us"] <= best * 1.05
            auto2 += auto[0]["measured_us"] <= best * 1.02
    worst = max(range(len(rows)), key=lambda i: ape[i])
    return {
        "pairs": len(rows), "batches": len(batches),
        "mape": 100 * sum(ape) / len(ape), "worst": 100 * ape[worst],
        "worst_pair": f"{rows[worst]['batch']} / {rows[worst]['scheduler']}",
        "spearman": spearman([r["predicted_us"] for r in rows],
                             [r["measured_us"] for r in rows]),
        "agree": agree, "auto5": auto5, "auto2": auto2,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reports", nargs="+", metavar="NAME=DIR")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    head = ["set", "pairs", "MAPE", "worst", "Spearman", "best-plan agree",
            "auto within 5%", "auto within 2%"]
    lines = []
    for spec in a.reports:
        name, _, d = spec.partition("=")
        if not d:
            sys.exit(f"fidelity.py: '{spec}': expected NAME=DIR")
        s = summarize(load(d))
        b = s["batches"]
        lines.append([name, str(s["pairs"]), f"{s['mape']:.1f}%",
                      f"{s['worst']:.1f}% ({s['worst_pair']})", f"{s['spearman']:.3f}",
                      f"{s['agree']}/{b}", f"{s['auto5']}/{b} ({100 * s['auto5'] / b:.0f}%)",
                      f"{s['auto2']}/{b} ({100 * s['auto2'] / b:.0f}%)"])
    if a.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for l in lines:
            print("| " + " | ".join(l) + " |")
    else:
        w = [max(len(x[i]) for x in [head] + lines) for i in range(len(head))]
        for l in [head] + lines:
            print("  ".join(x.ljust(w[i]) for i, x in enumerate(l)))


if __name__ == "__main__":
    main()
