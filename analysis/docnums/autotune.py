"""The numbers of docs/validation.md#auto-by-measurement: how often auto's choice is within 5 %
and 2 % of the measured best when it measures its K predicted-fastest candidates, first from
the committed validation records (the candidates' recorded predictions and measurements), then
from `anvil exec --autotune` runs (results/h100/autotune/, results/h200/autotune/)."""
import collections
import statistics

from docnums import label as record_label, load_json

RECORDS = [("H200", "PAT trees (in-sample)", "h200/validation/pat"),
           ("H100", "PAT trees (in-sample)", "h100/validation/pat"),
           ("H200", "realistic batches, set 2", "h200/validation/heldout2"),
           ("H100", "realistic batches, set 3", "h100/validation/heldout3"),
           ("H100", "realistic batches, set 2", "h100/validation/heldout2"),
           ("H200", "realistic batches, set 1", "h200/validation/heldout"),
           ("H200", "random forests", "h200/validation/random"),
           ("H100", "realistic batches, set 1", "h100/validation/heldout")]
KS = (1, 2, 3, 4, 5)
# (GPU, set, the `anvil exec --autotune 4` report under results/<gpu>/autotune/, its `auto` row);
# the set's validation record of the same name (results/<gpu>/validation/) gives its label.
RUNS = [("H200", "realistic batches, set 2", "heldout2", "auto"),
        ("H100", "realistic batches, set 3", "heldout3", "auto"),
        ("H100", "realistic batches, set 3 with the m128 tile's plans, `auto` with "
         "`wide=on`", "heldout3_wide", "auto_wide"),
        ("H100", "realistic batches, set 2", "heldout2", "auto"),
        ("H100", "realistic batches, set 1", "heldout", "auto"),
        ("H100", "PAT trees (in-sample)", "pat", "auto")]


def _frac(k, n):
    return "%d / %d (%.0f %%)" % (k, n, 100.0 * k / n)


def _pick(cands, k):
    """The measured time of the fastest measured among the k predicted fastest."""
    return min(m for _, m in sorted(cands, key=lambda c: c[0])[:k])


def _within(ctx, rec, k):
    """(batches, within 5 %, within 2 %) of record rec when the fastest measured of the k
    predicted fastest is kept."""
    by = collections.defaultdict(list)
    for r in load_json(ctx, "results", rec, "validation.json")["rows"]:
        if r["scheduler"] != "auto":
            by[(r["batch"], tuple(r["heads"]))].append((r["predicted_us"], r["measured_us"]))
    w5 = w2 = 0
    for cands in by.values():
        best, got = min(m for _, m in cands), _pick(cands, k)
        w5 += got <= 1.05 * best
        w2 += got <= 1.02 * best
    return len(by), w5, w2


def k_choice(ctx):
    """The smallest K that leaves at most one batch outside 5 % on every in-sample record."""
    ins = [rec for _, label, rec in RECORDS if "in-sample" in label]
    for k in KS:
        if all(_within(ctx, rec, k)[1] >= _within(ctx, rec, k)[0] - 1 for rec in ins):
            return "K = %d" % k
    return "no K up to %d" % KS[-1]


def k_table(ctx):
    out = ["", "| GPU | set | held-out / seen | batches | " +
           " | ".join("K = %d" % k for k in KS) + " |", "|---|---|---|---|" + "---|" * len(KS)]
    for gpu, label, rec in RECORDS:
        cells, n = [], 0
        for k in KS:
            n, w5, w2 = _within(ctx, rec, k)
            cells.append("%d / %d" % (w5, w2))
        out.append("| %s | %s | %s | %d | %s |" % (gpu, label, record_label(ctx, rec), n,
                                                  " | ".join(cells)))
    return "\n".join(out) + "\n"


def _bias(ctx, rec):
    """Median predicted / measured of each scheduler on record rec."""
    by = collections.defaultdict(list)
    for r in load_json(ctx, "results", rec, "validation.json")["rows"]:
        if r["scheduler"] != "auto":
            by[r["scheduler"]].append(r["predicted_us"] / r["measured_us"])
    return {k: statistics.median(v) for k, v in by.items()}


def _picks(ctx, rec, bias):
    """(within 5 %, within 2 %, batches) when the predictions are divided by bias."""
    by = collections.defaultdict(list)
    for r in load_json(ctx, "results", rec, "validation.json")["rows"]:
        if r["scheduler"] != "auto":
            by[(r["batch"], tuple(r["heads"]))].append(
                (r["predicted_us"] / bias.get(r["scheduler"], 1.0), r["measured_us"]))
    w5 = w2 = 0
    for cands in by.values():
        best, got = min(m for _, m in cands), min(cands)[1]
        w5 += got <= 1.05 * best
        w2 += got <= 1.02 * best
    return w5, w2, len(by)


def bias_alternative(ctx):
    """The per-scheduler error model: each prediction divided by its scheduler's median
    predicted / measured on the same GPU's PAT record, read on the held-out records."""
    parts = []
    for gpu, rec, pat in (("H200", "h200/validation/heldout", "h200/validation/pat"),
                          ("H200", "h200/validation/random", "h200/validation/pat"),
                          ("H100", "h100/validation/heldout", "h100/validation/pat")):
        a, b = _picks(ctx, rec, {}), _picks(ctx, rec, _bias(ctx, pat))
        parts.append("%s %s: within 5 %% %d → %d, within 2 %% %d → %d of %d" % (
            gpu, rec.split("/")[-1], a[0], b[0], a[1], b[1], a[2]))
    return "; ".join(parts)


def _run_stats(ctx, gpu, name, auto_row):
    by = collections.defaultdict(dict)
    for r in load_json(ctx, "results/%s/autotune" % gpu.lower(), name + ".json")["rows"]:
        by[(r["batch"], tuple(r["heads"]))][r["scheduler"]] = r
    s = collections.Counter()
    for rows in by.values():
        best = min(r["median_us"] for lab, r in rows.items() if not lab.startswith("auto"))
        auto = rows[auto_row]
        first = auto["autotune"]["candidates"][0]["measured_us"]
        s["n"] += 1
        s["t5"] += auto["median_us"] <= 1.05 * best
        s["t2"] += auto["median_us"] <= 1.02 * best
        s["f5"] += first <= 1.05 * best
        s["f2"] += first <= 1.02 * best
    return s


def measured_table(ctx):
    out = ["", "| GPU | set | held-out / seen | batches | predicted fastest within 5 % | "
           "within 2 % | `--autotune 4` within 5 % | within 2 % |",
           "|---|---|---|---|---|---|---|---|"]
    for gpu, label, name, auto_row in RUNS:
        s = _run_stats(ctx, gpu, name, auto_row)
        seen = record_label(ctx, "%s/validation/%s" % (gpu.lower(), name))
        out.append("| %s | %s | %s | %d | %s | %s | %s | %s |" % (
            gpu, label, seen, s["n"], _frac(s["f5"], s["n"]), _frac(s["f2"], s["n"]),
            _frac(s["t5"], s["n"]), _frac(s["t2"], s["n"])))
    return "\n".join(out) + "\n"
