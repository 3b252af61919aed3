"""The numbers of docs/kernels.md#the-warp-specialised-tile: the m128 tile on compute-heavy shared
documents on one H200 and one H100 (results/<gpu>/kernels/wide/: three timed and traced runs of
two batches and the GPU test binary; results/<gpu>/kernels/wide_correct/: the correctness
sweep), and on the H100 only its validation (results/h100/validation/wide_tile/: three
batches), its memcheck, its held-out batches and its table in the committed H100 profile
(profiles/H100-SXM.json)."""
import collections
import math
import re
import statistics

from docnums import load_json

# One GPU's record: its name, its speed folder and its correctness folder.
Record = collections.namedtuple("Record", "gpu speed correct")
H200 = Record("H200", "results/h200/kernels/wide", "results/h200/kernels/wide_correct")
H100 = Record("H100", "results/h100/kernels/wide", "results/h100/kernels/wide_correct")
TARGET_TFLOPS = 620.0  # the tile's target on the H200 for the throughput case
VALIDATION = "results/h100/validation/wide_tile"
HELDOUT = "results/h100/validation/heldout3_wide"
WIDE_PLANS = ("wide_k4", "wide_k8", "wide_beside", "node_wide", "gd_wide")
AUTO_WIDE_ROW = "auto_wide"  # auto with wide=on: a measurement of the plan it chose
RUNS = (1, 2, 3)
THROUGHPUT = ("doc120k-q64", "wide_k4")  # the tile's throughput case and its plan
SPEED_BATCHES = ("doc120k-q64", "doc120k-q64-tails")


def _peak(ctx):
    """The dense fp16 tensor rate of the H100's spec, TFLOP/s."""
    return load_json(ctx, "gpus", "H100-SXM.json")["fp16_tensor_tflops"]["value"]


def _validation(ctx):
    return load_json(ctx, VALIDATION, "validation.json")


def _flops(ctx, batch):
    """Attention FLOPs of a batch (the same on any GPU): its compute floor in the H100
    validation times the H100's dense rate."""
    row = next(r for r in _validation(ctx)["rows"] if r["batch"] == batch)
    return row["floor_compute_us"] * 1e-6 * _peak(ctx) * 1e12


def _medians(ctx, rec):
    """{(batch, plan): median over the runs of each run's median time, µs}."""
    times = {}
    for r in RUNS:
        for row in load_json(ctx, rec.speed, f"run{r}", "exec.json")["rows"]:
            times.setdefault((row["batch"], row["scheduler"]), []).append(row["median_us"])
    return {k: statistics.median(v) for k, v in times.items()}


def _attention_spans(ctx, rec, batch, plan):
    """Per run: the first attention CTA's start to the last one's end in the traced run, µs."""
    spans = []
    for r in RUNS:
        t = load_json(ctx, rec.speed, f"run{r}", "traces", f"{batch}__64-8__fp16__{plan}.json")
        att = [c for c in t["ctas"] if c["item"] >= 0]
        spans.append(max(c["end_us"] for c in att) - min(c["start_us"] for c in att))
    return spans


def _device(ctx, rec):
    return load_json(ctx, rec.speed, "run1", "exec.json")["device"].split(" (")[0]


def device(ctx):
    return _device(ctx, H100)


def device_h200(ctx):
    return _device(ctx, H200)


def _rates(ctx, rec):
    """The throughput case's attention-launch TFLOP/s per traced run (sorted) and the whole
    plan's TFLOP/s and µs (median of the runs), with the batch's FLOPs."""
    batch, plan = THROUGHPUT
    fl = _flops(ctx, batch)
    rates = sorted(fl / (s * 1e-6) / 1e12 for s in _attention_spans(ctx, rec, batch, plan))
    whole = _medians(ctx, rec)[(batch, plan)]
    return rates, fl / (whole * 1e-6) / 1e12, whole, fl


def _throughput(ctx, rec):
    batch, plan = THROUGHPUT
    rates, whole_rate, whole, fl = _rates(ctx, rec)
    return ("the attention launch of `%s` on %s runs at %.0f TFLOP/s (median of three traced "
            "runs: %s) and the whole plan, the merge and launch included, at %.0f TFLOP/s "
            "(%.1f µs for %.1f GFLOP)" % (plan, batch, statistics.median(rates),
                                         ", ".join("%.0f" % x for x in rates),
                                         whole_rate, whole, fl / 1e9))


def throughput(ctx):
    return _throughput(ctx, H100)


def throughput_h200(ctx):
    """The H200's figures and whether the attention launch and the whole plan reach the target."""
    rates, whole_rate = _rates(ctx, H200)[:2]
    met = [name for name, x in (("the attention launch", statistics.median(rates)),
                                ("the whole plan", whole_rate)) if x >= TARGET_TFLOPS]
    verdict = ("both reach" if len(met) == 2 else "only %s reaches" % met[0] if met
               else "neither reaches")
    return "%s; %s the target of %.0f TFLOP/s" % (_throughput(ctx, H200), verdict,
                                                    TARGET_TFLOPS)


def profile_rate(ctx):
    """C(128, 16384) of the fp16 m128 table, as TFLOP/s of one CTA times the SMs."""
    prof = load_json(ctx, "profiles", "H100-SXM.json")
    t = next(v for v in prof["variants"] if v["m"] == 128 and v["dtype"] == "fp16")
    us = t["time_us"][t["n_q"].index(128)][-1]
    kv = t["n_kv"][-1]
    sms = load_json(ctx, "gpus", "H100-SXM.json")["sm_count"]["value"]
    fl = 4.0 * 128 * kv * t.get("head_dim", 128)
    return ("one CTA alone over %d tokens with 128 rows takes %.1f µs, %.2f TFLOP/s, %.0f "
            "TFLOP/s over %d SMs" % (kv, us, fl / (us * 1e-6) / 1e12,
                                      fl / (us * 1e-6) / 1e12 * sms, sms))


def _best(times, batch, pred):
    cands = [(t, p) for (b, p), t in times.items() if b == batch and pred(p)]
    return min(cands)


def _speed_rows(ctx, rec):
    """The best m128 grid plan (the bimodal beside plans left out, see beside_runs), the best
    m64 plan and greedy_division of each batch, medians of the runs."""
    times = _medians(ctx, rec)
    out = []
    for b in SPEED_BATCHES:
        w, m, g = (_best(times, b, lambda p: p.startswith("wide") and "beside" not in p),
                   _best(times, b, lambda p: p.startswith("m64")),
                   _best(times, b, lambda p: p == "greedy_division"))
        other = min(m[0], g[0])
        out.append("| %s | %s | %.1f (`%s`) | %.1f (`%s`) | %.1f | %.2f× |"
                   % (rec.gpu, b, w[0], w[1], m[0], m[1], g[0], other / w[0]))
    return out


def speed_table(ctx):
    out = ["", "| GPU | batch | best m128 grid plan µs | best m64 plan µs | "
           "`greedy_division` µs | m128 speed-up |", "|---|---|---|---|---|---|"]
    for rec in (H200, H100):
        out += _speed_rows(ctx, rec)
    return "\n".join(out) + "\n"


def prediction_table(ctx):
    v = _validation(ctx)
    out = ["", "| batch | plan | predicted µs | measured µs | error |", "|---|---|---|---|---|"]
    for r in v["rows"]:
        if r["scheduler"].startswith("wide") or r["scheduler"] == "greedy_division":
            out.append("| %s | `%s` | %.1f | %.1f | %+.1f %% |"
                       % (r["batch"], r["scheduler"], r["predicted_us"], r["measured_us"],
                          100 * (r["predicted_us"] / r["measured_us"] - 1)))
    return "\n".join(out) + "\n"


def prediction_summary(ctx):
    v = _validation(ctx)
    wide = [r["ape"] for r in v["rows"] if r["scheduler"].startswith("wide")]
    grid = [r["ape"] for r in v["rows"] if r["scheduler"].startswith("wide")
            and "beside" not in r["scheduler"]]
    s = v["summary"]
    return ("%d pairs, MAPE %.1f %%, Spearman %.3f; the m128 grids' %d pairs %.1f %% (worst "
            "%.1f %%), with the beside plans %.1f %%" % (s["pairs"], 100 * s["mape"],
                                                       s["spearman"], len(grid),
                                                       100 * statistics.mean(grid),
                                                       100 * max(grid),
                                                       100 * statistics.mean(wide)))


def _beside(ctx, rec):
    """The wide_beside plan of doc120k-q64-tails per exec run of a record."""
    out = []
    for r in RUNS:
        row = next(x for x in load_json(ctx, rec.speed, f"run{r}", "exec.json")["rows"]
                   if x["batch"] == "doc120k-q64-tails" and x["scheduler"] == "wide_beside")
        out.append("%.0f–%.0f µs (median %.0f)" % (row["min_us"], row["max_us"],
                                                   row["median_us"]))
    return "%s in the three runs" % "; ".join(out)


def beside_runs(ctx):
    """The H100's runs, and the same plan in the H100 validation."""
    v = next(x for x in _validation(ctx)["rows"]
             if x["batch"] == "doc120k-q64-tails" and x["scheduler"] == "wide_beside")
    return ("%s, %.0f–%.0f µs in the validation" %
            (_beside(ctx, H100), v["measured_min_us"], v["measured_max_us"]))


def beside_runs_h200(ctx):
    return _beside(ctx, H200)


def _read(ctx, *parts):
    with open(ctx.path(*parts), encoding="utf-8") as f:
        return f.read()


def _correct(ctx, rec):
    """A record's correctness sweep: plans verified, largest errors, unwritten, bitwise."""
    errs, plans, ok, det, unwritten = [], 0, 0, 0, 0
    for dt in ("fp16", "bf16"):
        rows = load_json(ctx, rec.correct, f"correct_{dt}.json")["rows"]
        plans += len(rows)
        ok += sum(1 for r in rows if r["verified"] and r["pass"])
        det += sum(1 for r in rows if r["deterministic"])
        unwritten += sum(r["unwritten"] for r in rows)
        errs.append("%s %.1e" % (dt, max(r["max_rel_err"] for r in rows)))
    return ("%d of %d plans verified against fp64 attention (largest relative error %s), "
            "%d unwritten elements, %d of %d bitwise the same on two runs"
            % (ok, plans, ", ".join(errs), unwritten, det, plans))


def correct(ctx):
    """The H100's sweep and its memcheck over the GPU test binary (run on the H100 only)."""
    summary = [l for l in _read(ctx, H100.correct, "memcheck.log").splitlines()
               if "ERROR SUMMARY" in l][-1]
    n_err = int(summary.split("ERROR SUMMARY:")[1].split()[0])
    return "%s; memcheck over the GPU test binary: %d errors" % (_correct(ctx, H100), n_err)


def correct_h200(ctx):
    return _correct(ctx, H200)


def _gpu_tests(ctx, rec):
    m = re.search(r"Checks: (\d+), Failures: (\d+), Errors: (\d+)",
                  _read(ctx, rec.speed, "gpu_tests.log"))
    n, bad = int(m.group(1)), int(m.group(2)) + int(m.group(3))
    return "%d of %d checks pass" % (n - bad, n)


def gpu_tests(ctx):
    return _gpu_tests(ctx, H100)


def gpu_tests_h200(ctx):
    return _gpu_tests(ctx, H200)


def _geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def heldout(ctx):
    """Set 3 with the m128 plans: where they win, best / floor with and without them, and
    their prediction error on batches drawn before the tile existed."""
    rows = [r for r in load_json(ctx, HELDOUT, "validation.json")["rows"]
            if r["scheduler"] != AUTO_WIDE_ROW]
    batches = list(dict.fromkeys(r["batch"] for r in rows))
    without, with_, won = [], [], []
    for b in batches:
        rs = [r for r in rows if r["batch"] == b]
        old = min(r["measured_us"] for r in rs if r["scheduler"] not in WIDE_PLANS)
        best = min(rs, key=lambda r: r["measured_us"])
        without.append(old / rs[0]["floor_us"])
        with_.append(best["measured_us"] / rs[0]["floor_us"])
        if best["scheduler"] in WIDE_PLANS:
            won.append("%s, %.2f× → %.2f× the floor" % (b, old / rs[0]["floor_us"],
                                                        best["measured_us"] / rs[0]["floor_us"]))
    apes = [r["ape"] for r in rows if r["scheduler"] in WIDE_PLANS]
    return ("an m128 plan is the fastest on %d of the %d batches (%s); the geometric mean of "
            "best plan / roofline floor goes from %.3f to %.3f; the %d pairs of m128 plans are "
            "predicted with MAPE %.1f %% (worst %.1f %%)"
            % (len(won), len(batches), "; ".join(won), _geomean(without), _geomean(with_),
               len(apes), 100 * statistics.mean(apes), 100 * max(apes)))


# auto's candidates in the set's record (its 10 schedulers and alternatives), and the three
# plans `auto` adds with wide=on (fixed_division and node_naive with tiles=per_shape;wide=on,
# greedy_division with wide=on).
AUTO_CANDIDATES = ("qc", "node_naive", "fixed_division", "greedy_division", "pat", "pat-naive",
                   "pat-compute", "pat-fixed", "pat-serial", "flashinfer")
AUTO_WIDE = ("wide_k4", "node_wide", "gd_wide")


def _auto_within(by, cands, k):
    """(within 5 %, within 2 %) of the best plan of each batch (m128 plans included) when the
    fastest measured of the k predicted fastest candidates is kept."""
    w5 = w2 = 0
    for rows in by.values():
        best = min(r["measured_us"] for s, r in rows.items() if s not in ("auto", AUTO_WIDE_ROW))
        got = min(rows[s]["measured_us"]
                  for s in sorted(cands, key=lambda s: rows[s]["predicted_us"])[:k])
        w5 += got <= 1.05 * best
        w2 += got <= 1.02 * best
    return w5, w2


def auto_wide(ctx):
    """`auto` with wide=on, read from set 3's record with the m128 plans: how often it takes
    one, and how close to the best plan it lands, by prediction and by measuring four."""
    by = collections.defaultdict(dict)
    for r in load_json(ctx, HELDOUT, "validation.json")["rows"]:
        by[(r["batch"], tuple(r["heads"]))][r["scheduler"]] = r
    taken = sum(1 for rows in by.values()
                if min(AUTO_CANDIDATES + AUTO_WIDE, key=lambda s: rows[s]["predicted_us"])
                in AUTO_WIDE)
    (a5, a2), (b5, b2) = (_auto_within(by, c, 1) for c in (AUTO_CANDIDATES,
                                                            AUTO_CANDIDATES + AUTO_WIDE))
    (c5, c2), (d5, d2) = (_auto_within(by, c, 4) for c in (AUTO_CANDIDATES,
                                                            AUTO_CANDIDATES + AUTO_WIDE))
    m5 = m2 = 0  # the set's own `auto_wide` row, measured as a user runs it
    for rows in by.values():
        best = min(r["measured_us"] for s, r in rows.items() if s not in ("auto", AUTO_WIDE_ROW))
        m5 += rows[AUTO_WIDE_ROW]["measured_us"] <= 1.05 * best
        m2 += rows[AUTO_WIDE_ROW]["measured_us"] <= 1.02 * best
    return ("with wide=on `auto` takes an m128 plan on %d of the %d batches; the plan it "
            "keeps is within 5 %% / 2 %% of the best plan (m128 plans included) on %d / %d "
            "batches without them and %d / %d with them by prediction alone (%d / %d as "
            "measured in its own row of the run), and on %d / %d and %d / %d when it measures "
            "its four predicted fastest (`--autotune 4`)"
            % (taken, len(by), a5, a2, b5, b2, m5, m2, c5, c2, d5, d2))
