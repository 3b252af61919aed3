"""The numbers of docs/kernels.md#launch-models: the speed set run on streams and as CUDA graphs
on one machine, twice each in alternation (results/h100/launch/), the correctness sweeps run
as graphs and with the pdl model, the H100's set 3 in the three launch models
(results/h100/validation/heldout3*/) and the launch figures of the committed calibrated specs
(profiles/<gpu>.spec.json)."""
import math
import statistics

from docnums import load_json

REC = "results/h100/launch"
RUNS = (1, 2)
SMALL_FLOOR_US = 25.0  # a small batch: its bandwidth floor is at most this


def _plans(ctx, model):
    """{(batch, plan label): (median of the runs' medians, bandwidth floor)}."""
    times, floor = {}, {}
    for r in RUNS:
        for row in load_json(ctx, REC, f"speed_{model}_{r}.json")["rows"]:
            key = (row["batch"], row["scheduler"])
            times.setdefault(key, []).append(row["median_us"])
            floor[key] = row["floor_us"]
    return {k: (statistics.median(v), floor[k]) for k, v in times.items()}


def _best(ctx):
    """Per batch: (best streams time, best graph time, floor), batches in record order."""
    s, g = _plans(ctx, "streams"), _plans(ctx, "graph")
    order = []
    for b, _ in s:
        if b not in order:
            order.append(b)
    out = []
    for b in order:
        bs = min(t for (bb, _), (t, _f) in s.items() if bb == b)
        bg = min(t for (bb, _), (t, _f) in g.items() if bb == b)
        fl = next(f for (bb, _), (_t, f) in s.items() if bb == b)
        out.append((b, bs, bg, fl))
    return out


def _geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def device(ctx):
    return load_json(ctx, REC, "speed_streams_1.json")["device"].split(" (")[0]


def speed_table(ctx):
    out = ["", "| batch | bandwidth floor µs | best plan on streams µs | as a graph µs | "
           "graph / streams |", "|---|---|---|---|---|"]
    for b, bs, bg, fl in _best(ctx):
        out.append("| %s | %.1f | %.1f | %.1f | %.3f |" % (b, fl, bs, bg, bg / bs))
    return "\n".join(out) + "\n"


def summary(ctx):
    rows = _best(ctx)
    small = [r for r in rows if r[3] <= SMALL_FLOOR_US]
    return ("geometric mean of graph / streams %.3f over the %d batches, %.3f over the %d "
            "whose floor is at most %.0f µs (best plan / floor %.2f× on streams, %.2f× as a "
            "graph)" % (_geomean([r[2] / r[1] for r in rows]), len(rows),
                        _geomean([r[2] / r[1] for r in small]), len(small), SMALL_FLOOR_US,
                        _geomean([r[1] / r[3] for r in small]),
                        _geomean([r[2] / r[3] for r in small])))


def plans(ctx):
    n = len(load_json(ctx, REC, "speed_graph_1.json")["rows"])
    bad = sum(1 for r in RUNS for m in ("streams", "graph")
              for row in load_json(ctx, REC, f"speed_{m}_{r}.json")["rows"] if not row["pass"])
    return "%d plans, each verified in both models on every run (%d failed)" % (n, bad)


def _correct(ctx, model):
    """Plans of the stopped correctness sweeps (results/h100/launch/correct/) that passed and
    failed, run with launch model `model`."""
    ok = bad = 0
    for dt in ("fp16", "bf16"):
        with open(ctx.path(REC, "correct", "correct_%s_%s.log" % (dt, model)),
                  encoding="utf-8") as f:
            for line in f:
                ok += line.rstrip().endswith(" ok")
                bad += line.rstrip().endswith(" FAIL")
    return "%d plans verified, %d failed" % (ok, bad)


def correct(ctx):
    return _correct(ctx, "graph")


def correct_pdl(ctx):
    return _correct(ctx, "pdl")


SET3 = "h100/validation/heldout3"


def _set3_best(ctx, suffix):
    """Per (batch, heads) of the H100's set 3 run with a launch model (record heldout3 +
    suffix): (best measured µs over every scheduler but auto, roofline floor µs)."""
    out = {}
    for r in load_json(ctx, "results", SET3 + suffix, "validation.json")["rows"]:
        if r["scheduler"].startswith("auto"):
            continue
        k = (r["batch"], tuple(r["heads"]))
        out[k] = (min(out.get(k, (float("inf"),))[0], r["measured_us"]), r["floor_us"])
    return out


def set3_models(ctx):
    """The H100's set 3 as three records (streams, graph, pdl): the geometric mean of best
    plan / floor, and of pdl / streams on every batch and on the small ones."""
    s, g, p = (_set3_best(ctx, x) for x in ("", "_graph", "_pdl"))
    small = [k for k in s if s[k][1] <= SMALL_FLOOR_US]
    return ("best plan / floor %.2f× on streams, %.2f× as graphs and %.2f× with `pdl` "
            "(geometric means over the %d batches); the best plan with `pdl` / on streams "
            "%.3f over them all and %.3f over the %d whose floor is at most %.0f µs" % (
                _geomean([s[k][0] / s[k][1] for k in s]), _geomean([g[k][0] / g[k][1] for k in s]),
                _geomean([p[k][0] / p[k][1] for k in s]), len(s),
                _geomean([p[k][0] / s[k][0] for k in s]),
                _geomean([p[k][0] / s[k][0] for k in small]), len(small), SMALL_FLOOR_US))


def _value(spec, key):
    v = spec.get(key)
    return v.get("value") if isinstance(v, dict) else v


def figures_table(ctx):
    keys = [("launch_overhead_us", "streams: host issue per launch, µs"),
            ("stream_gap_us", "streams: same-stream gap, µs"),
            ("join_overhead_us", "streams: join before the merge, µs"),
            ("run_tail_us", "streams: run tail, µs"),
            ("graph_stream_gap_us", "graph: same-stream gap, µs"),
            ("graph_join_overhead_us", "graph: join before the merge, µs"),
            ("graph_run_tail_us", "graph: start and tail, µs"),
            ("pdl_join_overhead_us", "pdl: join before the merge, µs")]
    gpus = ("H200-SXM", "H100-SXM")
    specs = {g: load_json(ctx, "profiles", f"{g}.spec.json") for g in gpus}
    out = ["", "| figure | " + " | ".join(gpus) + " |", "|---|" + "---|" * len(gpus)]
    for key, label in keys:
        cells = []
        for g in gpus:
            v = _value(specs[g], key)
            cells.append("%.2f" % v if isinstance(v, (int, float)) else "not measured")
        out.append("| %s | %s |" % (label, " | ".join(cells)))
    return "\n".join(out) + "\n"


PRIORITY = "h100/launch/priority"


def _priority_runs(ctx, executor):
    """{(batch, scheduler): [measured median of each run]} of results/h100/launch/priority/."""
    out = {}
    for i in (1, 2, 3):
        for r in load_json(ctx, "results", PRIORITY, executor, f"run{i}", "validation.json")["rows"]:
            out.setdefault((r["batch"], r["scheduler"]), []).append(r["measured_us"])
    return out


def priority_table(ctx):
    """PAT's plans of the three batches, three runs each, plain streams against streams with
    priorities in launch order."""
    plain, prio = _priority_runs(ctx, "plain"), _priority_runs(ctx, "priorities")
    out = ["", "| batch | scheduler | streams | plain streams, µs | priorities, µs | change |",
           "|---|---|---|---|---|---|"]
    spec = load_json(ctx, "results", PRIORITY, "experiment.json")
    for batch in [w["name"] for w in spec["workloads"]]:
        for sched in ("pat", "pat-serial"):
            a, b = plain[(batch, sched)], prio[(batch, sched)]
            change = statistics.median(b) / statistics.median(a) - 1
            out.append("| %s | `%s` | %s | %s | %s | %+.1f %% |" % (
                batch, sched, "several" if sched == "pat" else "one",
                " / ".join("%.1f" % x for x in a), " / ".join("%.1f" % x for x in b),
                100 * change))
    return "\n".join(out) + "\n"


def _launch_starts(ctx, name):
    """[(launch, first CTA start µs)] of a measured Chrome trace, by start (the merge last)."""
    d = load_json(ctx, "results", PRIORITY, "traces", f"{name}.measured.chrome.json")
    first = {}
    for e in d["traceEvents"] if isinstance(d, dict) else d:
        if e.get("ph") == "X":
            first[e["pid"]] = min(first.get(e["pid"], math.inf), e["ts"])
    return sorted(first.items(), key=lambda x: x[1])[:-1]


def priority_orders(ctx):
    """The order in which the three launches of PAT's plan for speculative-687594 started."""
    def fmt(name):
        return ", ".join("%d (%.0f µs)" % (launch, t) for launch, t in _launch_starts(ctx, name))
    return ("with plain streams %s in one run and %s in another; with priorities %s" %
            (fmt("plain_a"), fmt("plain_b"), fmt("priorities")))
