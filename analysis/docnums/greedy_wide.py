"""The numbers of docs/kernels.md#the-warp-specialised-tile on `greedy_division` with wide=on:
results/h100/kernels/greedy_wide/ (the validation of experiments/kernels_greedy_wide.json, and
the correctness sweep of experiments/kernels_correct_greedy_wide_*.json), on one H100."""
import collections
import math
import statistics

from docnums import load_json
from docnums.wide import Record, _correct

RECORD = "results/h100/kernels/greedy_wide"
FIXED_WIDE = ("wide_k4", "wide_k8")  # fixed_division's m128 plans in the record


def _batches(ctx):
    """{(batch, heads): {scheduler: row}} in the record's order."""
    by = collections.OrderedDict()
    for r in load_json(ctx, RECORD, "validation.json")["rows"]:
        by.setdefault((r["batch"], "%d/%d" % tuple(r["heads"])), {})[r["scheduler"]] = r
    return by


def table(ctx):
    out = ["", "| batch | heads | roofline floor µs | `greedy_division` µs | best `fixed_division` "
           "m128 plan µs | `greedy_division` `wide=on` µs (predicted) | its time / floor |",
           "|---|---|---|---|---|---|---|"]
    for (batch, heads), rows in _batches(ctx).items():
        fixed = min((rows[s] for s in FIXED_WIDE), key=lambda r: r["measured_us"])
        gw = rows["gd_wide"]
        out.append("| %s | %s | %.1f | %.1f | %.1f (`%s`) | %.1f (%.1f) | %.2f× |"
                   % (batch, heads, gw["floor_us"], rows["greedy_division"]["measured_us"],
                      fixed["measured_us"], fixed["scheduler"], gw["measured_us"],
                      gw["predicted_us"], gw["measured_us"] / gw["floor_us"]))
    return "\n".join(out) + "\n"


def _geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def summary(ctx):
    by = _batches(ctx)
    fastest, over_gd, over_fixed, apes = 0, [], [], []
    for rows in by.values():
        plans = {s: r for s, r in rows.items() if not s.startswith("auto")}
        gw = rows["gd_wide"]["measured_us"]
        fastest += gw <= min(r["measured_us"] for r in plans.values())
        over_gd.append(rows["greedy_division"]["measured_us"] / gw)
        over_fixed.append(min(rows[s]["measured_us"] for s in FIXED_WIDE) / gw)
        apes.append(rows["gd_wide"]["ape"])
    return ("`greedy_division` with `wide=on` is the fastest plan on %d of the %d batches; "
            "in geometric mean `greedy_division` takes %.2f× its time and `fixed_division`'s "
            "best m128 plan %.2f×; the simulator predicted it with MAPE %.1f %% (worst %.1f %%)"
            % (fastest, len(by), _geo(over_gd), _geo(over_fixed), 100 * statistics.mean(apes),
               100 * max(apes)))


def correct(ctx):
    return _correct(ctx, Record("H100", RECORD, RECORD))
