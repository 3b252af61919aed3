"""The numbers of the README's per-step planning table and docs/schedulers.md#per-step-planning:
the decode-loop benchmark's record (results/host/planning/decode_loop.json, written by
python/bench/decode_loop.py --out), and which of the planning targets each row meets."""
from docnums import load_json

REC = ("results", "host", "planning", "decode_loop.json")
# The targets of per-step planning (CPU time per step; share of steps that kept the plan).
MEDIAN_US, P99_US, KEPT, AUTO_US = 30.0, 100.0, 0.95, 1000.0


def _rec(ctx):
    return load_json(ctx, *REC)


def decode_loop_table(ctx):
    rec = _rec(ctx)
    out = ["", "| scheduler | requests | steps | median µs (CPU / wall) | p99 µs (CPU / wall) | "
           "first / longest other step µs (CPU) | reused | patched | replanned (drift) | "
           "planned (table) |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rec["rows"]:
        n = r["steps"]
        out.append("| %s | %d | %d | %.1f / %.1f | %.1f / %.1f | %.0f / %.0f | %.1f %% | %.1f %% | "
                   "%.1f %% | %.1f %% |" % (
                       r["scheduler"], r["requests"], n, r["cpu_median_us"], r["wall_median_us"],
                       r["cpu_p99_us"], r["wall_p99_us"], r["cpu_first_us"],
                       r["cpu_max_rest_us"], 100 * r["reused"] / n, 100 * r["patched"] / n,
                       100 * r["replanned"] / n, 100 * r["planned"] / n))
    return "\n".join(out) + "\n"


def decode_loop_machine(ctx):
    rec = _rec(ctx)
    m = rec["machine"]
    return "%s, %d cores, load average %.1f at the end, commit %s, `%s`, times the median of " \
        "%d runs" % (m["cpu"], m["cores"], m["load_average"][0], rec["commit"], rec["command"],
                     rec.get("repeats", 1))


def _names(rows):
    return ", ".join("%s at %d" % (r["scheduler"], r["requests"]) for r in rows) or "none"


def decode_loop_targets(ctx):
    """Which rows meet the targets: the fixed schedulers' median, p99 and kept share, and
    auto's time per step (its p99 over few steps is its first step, the race)."""
    rows = _rec(ctx)["rows"]
    fixed = [r for r in rows if r["scheduler"] != "auto"]
    auto = [r for r in rows if r["scheduler"] == "auto"]
    miss_med = [r for r in fixed if r["cpu_median_us"] > MEDIAN_US]
    miss_p99 = [r for r in fixed if r["cpu_p99_us"] > P99_US]
    miss_kept = [r for r in fixed if (r["reused"] + r["patched"]) / r["steps"] < KEPT]
    out = ["", "Targets (CPU time): ≤ %.0f µs median and ≤ %.0f µs p99 per step, ≥ %.0f %% of "
           "steps reused or patched, `auto` ≤ %.0f µs per step. Rows that miss the median: %s; "
           "the p99: %s; the kept share: %s." % (MEDIAN_US, P99_US, 100 * KEPT, AUTO_US,
                                                 _names(miss_med), _names(miss_p99),
                                                 _names(miss_kept))]
    if auto:
        out.append("`auto` rows past %.0f µs p99: %s. After its first step its longest step is "
                   "%s µs; the first (the race over every candidate, on a batch built from the "
                   "table) %s µs." % (
                       AUTO_US, _names([r for r in auto if r["cpu_p99_us"] > AUTO_US]),
                       " / ".join("%.0f" % r["cpu_max_rest_us"] for r in auto),
                       " / ".join("%.0f" % r["cpu_first_us"] for r in auto)))
    return "\n".join(out) + "\n"
