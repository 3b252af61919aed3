"""The numbers of docs/validation.md, computed from the per-row predicted and measured times of
the committed `anvil validate` records (results/<gpu>/validation/<set>/validation.json and
results/<gpu>/transfer/<set>/validation.json), never from the summaries the records carry.

The statistics follow pipeline/compare.c: a batch is a (batch, heads) pair; best-plan
agreement and regret rank every scheduler but `auto`, ties to the first listed; `auto` is
within 5 % when its measured time is at most 1.05 x the measured best of the others."""
import functools
import json
import statistics

from docnums import label as record_label, load_json
from docnums.simulator import spec_kind
from fidelity import spearman as _spearman  # the same statistic analysis/fidelity.py prints

# (GPU, set, record folder under results/), in the order the doc's tables list them. Whether a
# set is held out or seen is its record's README's `held_out:` line (docnums.label), shown in
# a column of its own (docs/validation.md#held-out-sets).
HELD_OUT = [
    ("H200", "realistic batches, set 3", "h200/validation/heldout3"),
    ("H200", "realistic batches, set 2", "h200/validation/heldout2"),
    ("H100", "realistic batches, set 3", "h100/validation/heldout3"),
    ("H100", "realistic batches, set 3, its first measurement (before the stream priorities)",
     "h100/launch/priority/set3_plain"),
    ("H100", "realistic batches, set 3, run as CUDA graphs",
     "h100/validation/heldout3_graph"),
    ("H100", "realistic batches, set 3, the merge a programmatic dependent launch",
     "h100/validation/heldout3_pdl"),
    ("H100", "realistic batches, set 2", "h100/validation/heldout2"),
    ("H100", "realistic batches, set 2, run as CUDA graphs",
     "h100/validation/heldout2_graph"),
    ("H200", "realistic batches, set 1", "h200/validation/heldout"),
    ("H200", "random forests", "h200/validation/random"),
    ("H100", "realistic batches, set 1", "h100/validation/heldout"),
    ("H100", "realistic batches, set 1, run as CUDA graphs",
     "h100/validation/heldout_graph"),
]
IN_SAMPLE = [
    ("H200", "PAT trees (in-sample)", "h200/validation/pat"),
    ("H100", "PAT trees (in-sample)", "h100/validation/pat"),
]
# (target GPU, set, its own record, the record predicted with the other GPU's profile)
TRANSFER = [
    ("H200", "realistic batches, set 2", "h200/validation/heldout2",
     "h200/transfer/heldout2", "H100"),
    ("H100", "realistic batches, set 3", "h100/validation/heldout3",
     "h100/transfer/heldout3", "H200"),
    ("H100", "realistic batches, set 2", "h100/validation/heldout2",
     "h100/transfer/heldout2", "H200"),
    ("H100", "realistic batches, set 1", "h100/validation/heldout",
     "h100/transfer/heldout", "H200"),
    ("H100", "PAT trees (in-sample)", "h100/validation/pat", "h100/transfer/pat", "H200"),
    ("H200", "realistic batches, set 1", "h200/validation/heldout",
     "h200/transfer/heldout", "H100"),
]
UNCALIBRATED = [
    ("H200", "realistic batches, set 1", "h200/validation/heldout",
     "h200/validation/heldout_uncalibrated"),
    ("H200", "PAT trees (in-sample)", "h200/validation/pat", "h200/validation/pat_uncalibrated"),
    ("H100", "realistic batches, set 1", "h100/validation/heldout",
     "h100/validation/heldout_uncalibrated"),
    ("H100", "PAT trees (in-sample)", "h100/validation/pat", "h100/validation/pat_uncalibrated"),
]
BIAS_COLUMNS = [("H200 set 2", "h200/validation/heldout2"),
                ("H100 set 3", "h100/validation/heldout3"),
                ("H100 set 2", "h100/validation/heldout2"),
                ("H200 set 1", "h200/validation/heldout"),
                ("H200 random", "h200/validation/random"),
                ("H100 set 1", "h100/validation/heldout"),
                ("H200 PAT", "h200/validation/pat"), ("H100 PAT", "h100/validation/pat")]
BUCKETS = [(0, 25, "< 25 µs"), (25, 100, "25–100 µs"), (100, 400, "100–400 µs"),
           (400, float("inf"), "≥ 400 µs")]


def _rows(ctx, record):
    return load_json(ctx, "results", record, "validation.json")["rows"]


def _ape(r):
    return abs(r["predicted_us"] - r["measured_us"]) / r["measured_us"]


def _batches(rows):
    out = {}
    for r in rows:
        out.setdefault((r["batch"], tuple(r["heads"])), []).append(r)
    return list(out.values())


def stats(rows):
    """MAPE, worst pair, Spearman, best-plan agreement, regret and auto's gap of one record."""
    apes = [_ape(r) for r in rows]
    worst = max(range(len(rows)), key=lambda i: apes[i])
    agree = within = 0
    regrets = []
    batches = _batches(rows)
    for rs in batches:
        ranked = [r for r in rs if r["scheduler"] != "auto"]
        ip = min(range(len(ranked)), key=lambda i: (ranked[i]["predicted_us"], i))
        im = min(range(len(ranked)), key=lambda i: (ranked[i]["measured_us"], i))
        agree += ip == im
        best = ranked[im]["measured_us"]
        regrets.append(ranked[ip]["measured_us"] / best - 1)
        auto = [r for r in rs if r["scheduler"] == "auto"]
        within += bool(auto) and auto[0]["measured_us"] / best - 1 <= 0.05
    return {
        "pairs": len(rows), "batches": len(batches), "mape": 100 * statistics.fmean(apes),
        "worst": 100 * apes[worst],
        "worst_pair": f"{rows[worst]['batch']} / {rows[worst]['scheduler']}",
        "spearman": _spearman([r["predicted_us"] for r in rows],
                              [r["measured_us"] for r in rows]),
        "median": statistics.median(r["predicted_us"] / r["measured_us"] for r in rows),
        "agree": agree, "regret_mean": 100 * statistics.fmean(regrets),
        "regret_max": 100 * max(regrets), "auto5": within,
    }


def _table(head, lines):
    out = ["", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(line) + " |" for line in lines]
    return "\n".join(out) + "\n"


def _frac(k, n):
    return f"{k} / {n} ({100 * k / n:.0f} %)"


def _folder(record):
    """A record's folder as the tables name it: under results/<gpu>/validation/ by its own
    name, elsewhere by its path under results/<gpu>/."""
    _, topic, rest = record.split("/", 2)
    return f"`{rest if topic == 'validation' else topic + '/' + rest}/`"


def _result_line(ctx, gpu, label, record, s):
    b = s["batches"]
    return [gpu, label, record_label(ctx, record), _folder(record), f"{s['pairs']} ({b} batches)",
            f"{s['mape']:.1f} %", f"{s['worst']:.1f} % ({s['worst_pair']})",
            f"{s['spearman']:.3f}", f"{s['agree']} / {b}",
            f"{s['regret_mean']:.1f} % / {s['regret_max']:.1f} %", _frac(s["auto5"], b)]


def results_table(ctx):
    """One line per committed measured record: held-out sets first, then PAT's trees."""
    head = ["GPU", "set", "held-out / seen", "record", "pairs", "MAPE", "worst pair",
            "Spearman ρ", "best-plan agreement", "regret mean / max", "`auto` within 5 %"]
    lines = [_result_line(ctx, g, label, rec, stats(_rows(ctx, rec)))
             for g, label, rec in HELD_OUT + IN_SAMPLE]
    return _table(head, lines)


def _compare_table(ctx, jobs, what):
    head = ["GPU", "set", "held-out / seen", what, "MAPE", "median predicted / measured",
            "Spearman ρ", "best-plan agreement", "`auto` within 5 %"]
    lines = []
    for gpu, label, own, other, source in jobs:
        a, b = stats(_rows(ctx, own)), stats(_rows(ctx, other))
        n = a["batches"]
        seen = record_label(ctx, own)
        if record_label(ctx, other) != seen:
            raise ValueError(f"results/{own} and results/{other} differ in their held-out label")
        lines.append([gpu, label, seen, source.format(gpu=gpu),
                      f"{a['mape']:.1f} % → {b['mape']:.1f} %",
                      f"{a['median']:.2f} → {b['median']:.2f}",
                      f"{a['spearman']:.3f} → {b['spearman']:.3f}",
                      f"{a['agree']} → {b['agree']} / {n}",
                      f"{a['auto5']} → {b['auto5']} / {n}"])
    return _table(head, lines)


def transfer_table(ctx):
    """Each GPU's records predicted with its own profile → with the other GPU's."""
    jobs = [(g, label, own, other, f"profile of the {src}")
            for g, label, own, other, src in TRANSFER]
    return _compare_table(ctx, jobs, "predicted with")


def uncalibrated_table(ctx):
    """Calibrated spec → the datasheet spec (`--no-calibration`), same measured C tables."""
    jobs = [(g, label, own, other, "datasheet only: `gpus/{gpu}-SXM.json`")
            for g, label, own, other in UNCALIBRATED]
    for _, _, _, other, _ in jobs:
        if spec_kind(ctx, other) != "datasheet only":
            raise ValueError(f"results/{other} was not predicted with a datasheet spec")
    return _compare_table(ctx, jobs, "uncalibrated spec")


def _median_ratio(rows, keep):
    v = [r["predicted_us"] / r["measured_us"] for r in rows if keep(r)]
    return f"{statistics.median(v):.2f}" if v else "—"


def _bias_records(ctx):
    """(column head with the record's held-out label, rows) of each BIAS_COLUMNS record."""
    return [(f"{name} ({record_label(ctx, rec)})", _rows(ctx, rec)) for name, rec in BIAS_COLUMNS]


def scheduler_bias_table(ctx):
    """Median predicted / measured per scheduler and record (> 1: predicted too slow)."""
    recs = _bias_records(ctx)
    scheds = list(dict.fromkeys(r["scheduler"] for r in recs[0][1]))
    lines = [[f"`{s}`"] + [_median_ratio(rows, lambda r, s=s: r["scheduler"] == s)
                            for _, rows in recs] for s in scheds]
    lines.append(["all"] + [_median_ratio(rows, lambda r: True) for _, rows in recs])
    return _table(["scheduler"] + [n for n, _ in recs], lines)


def length_bias_table(ctx):
    """Median predicted / measured by the measured time of the pair (pairs in brackets)."""
    recs = _bias_records(ctx)
    lines = []
    for lo, hi, label in BUCKETS:
        line = [label]
        for _, rows in recs:
            n = sum(lo <= r["measured_us"] < hi for r in rows)
            med = _median_ratio(rows, lambda r: lo <= r["measured_us"] < hi)
            line.append(f"{med} ({n})" if n else "—")
        lines.append(line)
    return _table(["measured time"] + [n for n, _ in recs], lines)


def worst_pairs_table(ctx):
    """The three largest errors of each held-out record."""
    lines = []
    for gpu, label, rec in HELD_OUT:
        rows = sorted(_rows(ctx, rec), key=_ape, reverse=True)[:3]
        for r in rows:
            lines.append([gpu, label, record_label(ctx, rec), r["batch"],
                          "/".join(map(str, r["heads"])),
                          f"`{r['scheduler']}`", f"{r['predicted_us']:.1f}",
                          f"{r['measured_us']:.1f}", f"{100 * _ape(r):.0f} %"])
    return _table(["GPU", "set", "held-out / seen", "batch", "heads", "scheduler", "predicted µs",
                   "measured µs", "APE"], lines)


def dispatch_table(ctx):
    """Traced records: replayed vs measured (dispatch) and predicted vs replayed (cost model)."""
    lines = []
    traced = ("h200/validation/random", "h200/validation/pat")
    for gpu, label, rec in [h for h in HELD_OUT + IN_SAMPLE if h[2] in traced]:
        rows = [r for r in _rows(ctx, rec) if r.get("replayed_us")]
        disp = statistics.fmean(abs(r["replayed_us"] - r["measured_us"]) / r["measured_us"]
                                for r in rows)
        cost = statistics.fmean(abs(r["predicted_us"] - r["replayed_us"]) / r["replayed_us"]
                                for r in rows)
        lines.append([gpu, label, record_label(ctx, rec), str(len(rows)),
                      f"{100 * disp:.1f} %", f"{100 * cost:.1f} %"])
    return _table(["GPU", "set", "held-out / seen", "traced pairs", "dispatch error (replayed vs measured)",
                   "cost-model error (predicted vs replayed)"], lines)


def _spec(ctx, gpu):
    return load_json(ctx, "profiles", f"{gpu}.spec.json")


def profile_table(ctx):
    """The calibrated figures of each committed profile next to the datasheet spec's."""
    keys = [("hbm_bw_measured_GBps", "copy bandwidth, GB/s", "{:.0f}"),
            ("launch_overhead_us", "launch overhead, µs", "{:.2f}"),
            ("cta_fixed_us", "lone CTA fixed cost, µs", "{:.2f}"),
            ("cta_dispatch_us", "grid CTA refill gap, µs", "{:.3f}"),
            ("stream_gap_us", "same-stream launch gap, µs", "{:.3f}"),
            ("join_overhead_us", "join before the merge, µs", "{:.2f}")]
    specs = {g: _spec(ctx, g) for g in ("H200-SXM", "H100-SXM")}
    lines = []
    for key, label, fmt in keys:
        line = [label]
        for g in specs:
            v = _value(specs[g], key)
            line.append(fmt.format(v) if isinstance(v, (int, float)) else "—")
        lines.append(line)
    return _table(["figure", "H200-SXM", "H100-SXM"], lines)


def _value(spec, key):
    """A spec field, bare or as {"value": ..., "source": ...}."""
    v = spec.get(key)
    return v.get("value") if isinstance(v, dict) else v


def occupancy_rows(ctx):
    """Rows of the H200's occupancy table and how many of them cannot launch."""
    rows = load_json(ctx, "tests", "data", "occupancy_h200.json")["rows"]
    zero = sum(r["ctas_per_sm"] == 0 for r in rows)
    return f"{len(rows)} rows, {zero} of them 0 = cannot launch"


def remeasured(ctx):
    """Set 2's worst pair against the three later runs of its batch (heldout2/remeasured/)."""
    def pat(rows):
        return [r for r in rows if r["batch"] == "thoughts-583363" and r["scheduler"] == "pat"][0]
    rec = pat(_rows(ctx, "h100/validation/heldout2"))
    runs = [pat(load_json(ctx, "results", "h100/validation/heldout2/remeasured",
                          f"run{i}.json")["rows"]) for i in (1, 2, 3)]
    lo = min(r["measured_us"] for r in runs)
    hi = max(r["measured_us"] for r in runs)
    return ("predicted %.1f µs; measured %.1f µs in the set's run (%.1f–%.1f µs over its runs), "
            "%.1f–%.1f µs in three later runs" % (rec["predicted_us"], rec["measured_us"],
                                                   rec["measured_min_us"], rec["measured_max_us"],
                                                   lo, hi))


def set3_worst_runs(ctx):
    """Set 3's worst pair in its three measurements (the first validation with plain streams,
    results/h100/launch/priority/set3_plain/; the graph record; the record) and in three
    later runs with the clocks logged (heldout3/clocks/)."""
    rows = _rows(ctx, "h100/validation/heldout3")
    w = max(rows, key=_ape)

    def same(rows):
        return [r for r in rows if r["batch"] == w["batch"] and
                r["scheduler"] == w["scheduler"]][0]
    runs = [same(_rows(ctx, "h100/launch/priority/set3_plain")),
            same(_rows(ctx, "h100/validation/heldout3_graph")), w]
    later = [same(load_json(ctx, "results", "h100/validation/heldout3/clocks",
                            f"run{i}.json")["rows"]) for i in (1, 2, 3)]
    return ("%s at %s heads, `%s`, predicted %.1f µs on streams, measured %s µs in the set's "
            "three runs (plain streams, graph, priorities) and %s µs in three later ones" % (
                w["batch"], "/".join(map(str, w["heads"])), w["scheduler"], w["predicted_us"],
                " / ".join("%.1f" % r["measured_us"] for r in runs),
                " / ".join("%.1f" % r["measured_us"] for r in later)))


def set3_worst_clocks(ctx):
    """The SM clocks nvidia-smi sampled (every 50 ms) while the later runs measured it."""
    path = ctx.path("results", "h100/validation/heldout3/clocks", "smi.csv")
    with open(path, encoding="utf-8") as f:
        lines = [l.split(",") for l in f.read().splitlines()[1:] if l.count(",") >= 5]
    busy = [l for l in lines if int(l[5].strip(), 16) & 1 == 0]  # not idle
    clocks = sorted({l[1].strip() for l in busy})
    reasons = sorted({l[5].strip() for l in busy})
    return ("%d samples while the GPU was not idle, SM clock %s, throttle reasons %s" %
            (len(busy), " / ".join(clocks), " / ".join(reasons)))


MULTI_STREAM_PAT = ("pat", "pat-naive", "pat-compute")


def tiny_node_pat(ctx):
    """PAT's multi-stream plans on speculative candidates and trees of thoughts: median
    predicted / measured per fresh set, and the traced replay of the H100's set 3's
    speculative-687594 (results/h100/launch/priority/priorities/run1)."""
    parts = []
    for label, rec in (("H100 set 2", "h100/validation/heldout2"),
                       ("H100 set 3", "h100/validation/heldout3"),
                       ("H200 set 2", "h200/validation/heldout2")):
        rows = [r for r in _rows(ctx, rec) if r["scheduler"] in MULTI_STREAM_PAT and
                r["batch"].split("-")[0] in ("speculative", "thoughts")]
        parts.append("%s %.2f (%d pairs)" % (label, statistics.median(
            r["predicted_us"] / r["measured_us"] for r in rows), len(rows)))
    t = [r for r in load_json(ctx, "results", "h100/launch/priority/priorities/run1",
                              "validation.json")["rows"]
         if r["batch"] == "speculative-687594" and r["scheduler"] == "pat"][0]
    return ("median predicted / measured %s; traced, speculative-687594 `pat` was predicted "
            "%.1f µs, measured %.1f µs, and the replay of its measured CTA durations gave %.1f µs"
            % (", ".join(parts), t["predicted_us"], t["measured_us"], t["replayed_us"]))


CTA_REC = "results/h100/launch/cta_durations"
CTA_TRACES = "results/h100/launch/priority/traces"


@functools.lru_cache(maxsize=8)
def _cta_file(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _cta_events(ctx, *path):
    """A Chrome trace's launches' names by pid, its item CTAs' durations by (launch, item,
    head), and its merge CTAs' durations (item -1; several share a head)."""
    ev = _cta_file(ctx.path(*path))  # each trace read once for the two generators
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    names = {e["pid"]: e["args"]["name"] for e in ev
             if e.get("ph") == "M" and e["name"] == "process_name"}
    ctas = [e for e in ev if e.get("ph") == "X"]
    return (names, {(e["pid"], e["args"]["item"], e["args"]["head"]): e["dur"]
                    for e in ctas if e["args"]["item"] >= 0},
            [e["dur"] for e in ctas if e["args"]["item"] < 0])


def _cta_classes(ctx):
    """speculative-687594 `pat`: per class of CTA, (label, CTAs, median predicted µs, median
    measured µs over the three traced runs' CTAs). Classes: the m16 launch's one-query items
    of at most 8 KV tokens by their segments, its longer items, and the two m32 launches."""
    items = load_json(ctx, CTA_REC, "plan.json")["items"]
    names, pred, _ = _cta_events(ctx, CTA_REC, "predicted.chrome.json")

    def cls(key):
        it = items[key[1]]
        kv = sum(s[2] - s[1] for s in it["segments"])
        tile = names[key[0]].split("partial ")[-1].split(" w=")[0]
        if key[0] == 0 and kv <= 8 and len(it["queries"]) <= 3:
            n = len(it["segments"])
            return "%s, %d segment%s of ≤ 8 tokens in all" % (tile, n, "" if n == 1 else "s")
        return "%s, %s" % (tile, "longer items" if key[0] == 0 else "every item")
    groups = {}
    for run in ("plain_a", "plain_b", "priorities"):
        _, meas, _ = _cta_events(ctx, CTA_TRACES, run + ".measured.chrome.json")
        for key, d in pred.items():
            if key in meas:
                g = groups.setdefault(cls(key), ([], []))
                g[0].append(d)
                g[1].append(meas[key])
    return [(label, len(p) // 3, statistics.median(p), statistics.median(m))
            for label, (p, m) in sorted(groups.items())]


def cta_durations(ctx):
    """The table of predicted and measured CTA durations by class."""
    lines = ["| CTAs (tile, items) | CTAs | predicted µs (median) | measured µs (median of "
             "three runs) | measured / predicted |", "|---|---|---|---|---|"]
    for label, n, p, m in _cta_classes(ctx):
        lines.append("| %s | %d | %.2f | %.2f | %.2f |" % (label, n, p, m, m / p))
    return "\n".join(lines)


def cta_merge(ctx):
    """The merge launch's CTAs: median and 90th percentile, predicted and measured."""
    def q(ds):
        ds = sorted(ds)
        return statistics.median(ds), ds[int(0.9 * (len(ds) - 1))]
    pm, p90 = q(_cta_events(ctx, CTA_REC, "predicted.chrome.json")[2])
    ms = [q(_cta_events(ctx, CTA_TRACES, run + ".measured.chrome.json")[2])
          for run in ("plain_a", "plain_b", "priorities")]
    lo, hi = min(m[1] for m in ms), max(m[1] for m in ms)
    return ("median %.1f µs predicted, %.1f µs measured; 90th percentile %.1f µs predicted, "
            "%s µs measured" % (pm, statistics.median(m[0] for m in ms), p90,
                                "%.1f" % lo if round(lo, 1) == round(hi, 1)
                                else "%.1f–%.1f" % (lo, hi)))


def long_plans(ctx):
    """Plans measured above 250 µs, outside the tiny-node families: median predicted / measured
    per fresh set."""
    parts = []
    for label, rec in (("H100 set 2", "h100/validation/heldout2"),
                       ("H100 set 3", "h100/validation/heldout3"),
                       ("H200 set 1", "h200/validation/heldout"),
                       ("H200 set 2", "h200/validation/heldout2")):
        rows = [r for r in _rows(ctx, rec) if r["measured_us"] > 250 and
                r["batch"].split("-")[0] not in ("speculative", "thoughts")]
        parts.append("%s %.3f (%d pairs)" % (label, statistics.median(
            r["predicted_us"] / r["measured_us"] for r in rows), len(rows)))
    return "median predicted / measured " + ", ".join(parts)


def read_stream(ctx):
    """Each Hopper GPU's fastest DRAM read stream in the copy probe (bulk copies into shared
    memory, no math: results/<gpu>/kernels/ceilings/l2_probe.csv) against the copy bandwidth
    of its profile, which the engine streams KV at."""
    parts = []
    for gpu, spec in (("h100", "H100-SXM"), ("h200", "H200-SXM")):
        path = ctx.path("results", gpu, "kernels/ceilings/l2_probe.csv")
        with open(path, encoding="utf-8") as f:
            best = max(float(line.split(",")[6]) for line in f if line.startswith("DRAM,"))
        copy = load_json(ctx, "profiles", spec + ".spec.json")["hbm_bw_measured_GBps"]["value"]
        parts.append("%s %.2f TB/s, %.3f× the %.2f TB/s of the device-to-device copy in its "
                     "profile" % (spec.split("-")[0], best, best * 1e3 / copy, copy / 1e3))
    return "; ".join(parts)


# --- one validation over two GPUs (results/h200/validation/devices/) ------------------------
_DEV = ("results", "h200", "validation", "devices")


def _devices(ctx):
    one = load_json(ctx, *_DEV, "one_process.json")
    two = load_json(ctx, *_DEV, "devices.json")
    off = load_json(ctx, *_DEV, "offline.json")
    wall = load_json(ctx, *_DEV, "wall.json")
    return one, two, off, wall


def devices_summary(ctx):
    one, two, off, wall = _devices(ctx)
    key = lambda r: (r["batch"], r["heads"], r["scheduler"], r["predicted_us"])  # noqa: E731
    same = sum(key(a) == key(b) for a, b in zip(one["rows"], two["rows"]))
    stats = all(two[k] == off[k] for k in ("summary", "by_scheduler", "batches"))
    return ("%d pairs (%d batches): one process %.1f s, `--devices %s` %.1f s, %.2f× faster; "
            "the prediction of %d of %d rows the same in both reports; the merged report's "
            "statistics %s those `--offline` recomputes from its measurements"
            % (two["summary"]["pairs"], len(two["batches"]), wall["one_process_s"],
               wall["devices"], wall["devices_s"], wall["one_process_s"] / wall["devices_s"],
               same, len(one["rows"]), "equal to" if stats else "DIFFERENT FROM"))
