"""The numbers of the README's per-step planning table and docs/schedulers.md#per-step-planning:
the decode-loop benchmark's record (results/host/planning/decode_loop.json, written by
python/bench/decode_loop.py --out)."""
from docnums import load_json

REC = ("results", "host", "planning", "decode_loop.json")


def _rec(ctx):
    return load_json(ctx, *REC)


def decode_loop_table(ctx):
    rec = _rec(ctx)
    out = ["", "| scheduler | requests | steps | median µs (CPU / wall) | p99 µs (CPU / wall) | "
           "reused | patched | replanned (drift) | planned (table) |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rec["rows"]:
        n = r["steps"]
        out.append("| %s | %d | %d | %.1f / %.1f | %.1f / %.1f | %.1f %% | %.1f %% | %.1f %% | "
                   "%.1f %% |" % (r["scheduler"], r["requests"], n, r["cpu_median_us"],
                                  r["wall_median_us"], r["cpu_p99_us"], r["wall_p99_us"],
                                  100 * r["reused"] / n, 100 * r["patched"] / n,
                                  100 * r["replanned"] / n, 100 * r["planned"] / n))
    return "\n".join(out) + "\n"


def decode_loop_machine(ctx):
    rec = _rec(ctx)
    m = rec["machine"]
    return "%s, %d cores, load average %.1f at the end, commit %s, `%s`" % (
        m["cpu"], m["cores"], m["load_average"][0], rec["commit"], rec["command"])
