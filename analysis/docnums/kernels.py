"""The numbers of docs/kernels.md, from the H200 record of scripts/kernel-evidence
(results/h200/kernels/), the machine's ceilings (results/h200/kernels/ceilings/), the GPU spec
(gpus/H200-SXM.json) and the tolerance the executor's check applies (pipeline/exec_experiment.c)."""
import functools
import math
import os
import re
import sys
import tarfile

from docnums import label as record_label, load_json

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import kernel_targets  # noqa: E402

REC = "results/h200/kernels"


@functools.lru_cache(maxsize=None)
def _summary(repo):
    return kernel_targets.summarize(root=repo)


@functools.lru_cache(maxsize=None)
def _ceil(repo):
    return kernel_targets.ceilings(root=repo)


@functools.lru_cache(maxsize=None)
def _log(repo, name):
    with tarfile.open(os.path.join(repo, REC, "logs.tgz")) as t:
        return t.extractfile("logs/" + name).read().decode("utf-8", "replace")


def _row(ctx, batch):
    return next(r for r in _summary(ctx.repo)["rows"] if r["batch"] == batch)


def _pct(x):
    return "%.1f %%" % (100 * x)


def _sci(x):
    m, e = ("%.1e" % x).split("e")
    return "%se%d" % (m, int(e))


# --- the record -----------------------------------------------------------------------------

def device(ctx):
    return load_json(ctx, REC, "speed.json")["device"].split(" (")[0]


def copy_bw(ctx):
    return "%.0f GB/s" % _summary(ctx.repo)["copy_GBps"]


def dense_peak(ctx):
    return "%.1f TFLOP/s" % _summary(ctx.repo)["peak_tflops"]


def speed_plans(ctx):
    rows = load_json(ctx, REC, "speed.json")["rows"]
    return "%d plans (%d batches)" % (len(rows), len({r["batch"] for r in rows}))


def geomean(ctx):
    return "%.2f×" % _summary(ctx.repo)["geomean"]


def speed_table(ctx):
    out = ["", "| batch | best plan | anvil µs | SDPA µs | speed-up | roofline floor µs | bound "
           "| floor / time | merge tail µs |", "|---|---|---|---|---|---|---|---|---|"]
    for r in _summary(ctx.repo)["rows"]:
        tail = "%.1f" % r["merge_tail_us"] if r["merge_tail_us"] > 0 else "–"
        out.append("| %s | `%s` | %.1f | %.1f | %.2f× | %.1f | %s | %s | %s |" % (
            r["batch"], r["scheduler"], r["anvil_us"], r["sdpa_us"], r["speedup"], r["floor_us"],
            r["bound"], _pct(r["floor_fraction"]), tail))
    return "\n".join(out) + "\n"


def sdpa_backend(ctx):
    used = sorted({r["backend"] for r in _summary(ctx.repo)["rows"]})
    return " and ".join(used)


def targets(ctx):
    s = _summary(ctx.repo)
    p16, t3 = _row(ctx, "prefix16k"), _row(ctx, "pat-3")
    t19, t20 = _row(ctx, "pat-19"), _row(ctx, "pat-20")
    out = ["", "| target | measured | met |", "|---|---|---|",
           "| ≥ 3× SDPA, geometric mean over PAT trees 1–18 | %.2f× | %s |" % (
               s["geomean"], "yes" if s["geomean"] >= 3 else "no")]
    for r in (p16, t3):
        out.append("| ≥ 70 %% of the copy floor on %s | %s (%.1f µs; 70 %% is %.1f µs) | %s |" % (
            r["batch"], _pct(r["copy_fraction"]), r["anvil_us"],
            r["copy_floor_us"] / kernel_targets.TARGET_FRACTION,
            "yes" if r["copy_fraction"] >= kernel_targets.TARGET_FRACTION else "no"))
    for r in (t19, t20):
        ratio = r["anvil_us"] / r["sdpa_us"]
        out.append("| %s (no sharing) within 1.1× SDPA's time | %.3f× (%.1f against %.1f µs) "
                   "| %s |" % (r["batch"], ratio, r["anvil_us"], r["sdpa_us"],
                               "yes" if ratio <= 1.1 else "no"))
    return "\n".join(out) + "\n"


def tree3_gflop(ctx):
    return "%.1f GFLOP" % _row(ctx, "pat-3")["gflop"]


def tree3_need(ctx):
    return "%.0f TFLOP/s" % _row(ctx, "pat-3")["tflops_at_target"]


def tree3_need_share(ctx):
    return "%.0f %%" % (100 * _row(ctx, "pat-3")["tflops_at_target"]
                        / _summary(ctx.repo)["peak_tflops"])


def p16k_need(ctx):
    return "%.0f TFLOP/s" % _row(ctx, "prefix16k")["tflops_at_target"]


def p16k_merge_tail(ctx):
    return "%.1f µs" % _row(ctx, "prefix16k")["merge_tail_us"]


def tree12_merge_tail(ctx):
    r = _row(ctx, "pat-12")
    return "%.1f of its %.1f µs" % (r["merge_tail_us"], r["anvil_us"])


# --- correctness ----------------------------------------------------------------------------

def _tolerance(ctx):
    """(fp16, bf16) relative tolerances of `anvil exec`'s check, read from
    pipeline/exec_experiment.c."""
    with open(ctx.path("pipeline", "exec_experiment.c"), encoding="utf-8") as f:
        m = re.search(r"tolerance\(av_dtype_t t\)\s*\{\s*return t == AV_DTYPE_BF16 \? "
                      r"([0-9.e-]+) : ([0-9.e-]+);", f.read())
    return float(m.group(2)), float(m.group(1))


def correctness(ctx):
    tol = dict(zip(("fp16", "bf16"), _tolerance(ctx)))
    out = ["", "| dtype | plans | verified | max relative error | tolerance | unwritten elements "
           "| deterministic |", "|---|---|---|---|---|---|---|"]
    for dt in ("fp16", "bf16"):
        rows = load_json(ctx, REC, "correct_%s.json" % dt)["rows"]
        out.append("| %s | %d | %d | %s | %s | %d | %d of %d |" % (
            dt, len(rows), sum(bool(r["verified"] and r["pass"]) for r in rows),
            _sci(max(r["max_rel_err"] for r in rows)), _sci(tol[dt]),
            sum(r["unwritten"] for r in rows), sum(bool(r["deterministic"]) for r in rows),
            len(rows)))
    return "\n".join(out) + "\n"


def correct_sweep(ctx):
    rows = load_json(ctx, REC, "correct_fp16.json")["rows"]
    return "%d trees × %d head configurations × %d schedulers" % (
        len({r["batch"] for r in rows}), len({tuple(r["heads"]) for r in rows}),
        len({r["scheduler"] for r in rows}))


def gpu_tests(ctx):
    m = re.search(r"Checks: (\d+), Failures: (\d+), Errors: (\d+)", _log(ctx.repo, "gpu_tests.log"))
    n, bad = int(m.group(1)), int(m.group(2)) + int(m.group(3))
    return "%d of %d" % (n - bad, n)


def memcheck(ctx):
    text = _log(ctx.repo, "memcheck.log")
    errors = re.search(r"ERROR SUMMARY: (\d+) error", text).group(1)
    plans = re.search(r"(\d+) plans run", text).group(1)
    return "%s errors on %s plans" % (errors, plans)


# --- the machine's ceilings -----------------------------------------------------------------

def mma_peak(ctx):
    return "%.0f TFLOP/s" % max(float(r["tflops"]) for r in _ceil(ctx.repo)["mma"])


def mma_peak_4w(ctx):
    return "%.0f TFLOP/s" % max(float(r["tflops"]) for r in _ceil(ctx.repo)["mma"]
                                if int(r["warps_per_sm"]) == 4)


def _tile(ctx, n, ahead, mode, cps):
    for r in _ceil(ctx.repo)["tile"]:
        if (int(r["n"]), int(r["ahead"]), r["mode"], int(r["ctas_per_sm"])) == (n, ahead, mode, cps):
            return float(r["tflops"])
    raise ValueError("tile_math.csv has no n%d ahead %d %s at %d" % (n, ahead, mode, cps))


def tile_math_table(ctx):
    out = ["", "| m64 tile, per CTA | 1 CTA an SM | 2 | 3 |", "|---|---|---|---|"]
    for n, ahead, mode, what in ((64, 0, "softmax", "n64, QKᵀ, softmax, PV in order"),
                                 (64, 1, "softmax", "n64, QKᵀ a tile ahead"),
                                 (64, 0, "gemm_only", "n64, the two GEMMs only"),
                                 (128, 0, "softmax", "n128, in order")):
        cells = []
        for cps in (1, 2, 3):
            r = next((x for x in _ceil(ctx.repo)["tile"]
                      if (int(x["n"]), int(x["ahead"]), x["mode"], int(x["ctas_per_sm"]))
                      == (n, ahead, mode, cps)), None)
            if r is None:
                cells.append("–")
            else:
                spill = " (%s B spilled)" % r["local_bytes"] if int(r["local_bytes"]) else ""
                cells.append("%.0f%s" % (float(r["tflops"]), spill))
        out.append("| %s | %s |" % (what, " | ".join(cells)))
    return "\n".join(out) + "\n"


def tile_math_2(ctx):
    return "%.0f TFLOP/s" % _tile(ctx, 64, 0, "softmax", 2)


def _stream(ctx, source, tile, cps):
    return [float(r["TB_per_s"]) for r in _ceil(ctx.repo)["stream"]
            if r["source"] == source and int(r["tile_bytes"]) == tile
            and int(r["ctas_per_sm"]) == cps]


def l2_stream(ctx):
    best = [max(_stream(ctx, "L2", 32768, c)) for c in (2, 3)]
    return "%.1f–%.1f TB/s" % (min(best), max(best))


def l2_stream_one(ctx):
    return "%.1f TB/s" % min(_stream(ctx, "L2", 32768, 1))


def dram_stream(ctx):
    return "%.1f TB/s" % max(max(_stream(ctx, "DRAM", 32768, c)) for c in (1, 2, 3))


def p16k_trace(ctx):
    with open(ctx.path(REC, "trace_summary.csv"), encoding="utf-8") as f:
        rows = {r["trace"]: r for r in kernel_targets.csv.DictReader(f)}
    b = _row(ctx, "prefix16k")
    t = rows["prefix16k__32-8__fp16__%s.json" % b["scheduler"]]
    return ("its last attention CTA ends at %s µs, the merge runs from %s to %s µs" % (
        t["attn_end_us"], t["merge_start_us"], t["merge_end_us"]))


# --- the variant table ----------------------------------------------------------------------

def variants_table(ctx):
    """kernels/variants.json at head dim 128, fp16: resources per architecture."""
    vs = load_json(ctx, "kernels", "variants.json")["variants"]
    archs = sorted({v["arch"] for v in vs})
    names = " / ".join("sm_90a" if a == 90 else "sm_%d" % a for a in archs)
    key = {}
    for v in vs:
        if v["head_dim"] == 128 and v["dtype"] == "fp16":
            key.setdefault((v["kind"], v["m"], v["n"]), {})[v["arch"]] = v
    out = ["", "| kind | m × n | threads | shared memory | registers (%s) | spill bytes |" % names,
           "|---|---|---|---|---|---|"]
    for (kind, m, n), by in key.items():
        top = by[archs[-1]]
        size = "m %d" % m if kind == "merge" else "%d × %d" % (m, n)
        out.append("| %s | %s | %d | %.1f KiB | %s | %s |" % (
            kind, size, top["threads"], top["smem"] / 1024,
            " / ".join(str(by[a]["regs"]) for a in archs),
            " / ".join(str(by[a]["spills"]) for a in archs)))
    return "\n".join(out) + "\n"


def variants_count(ctx):
    vs = load_json(ctx, "kernels", "variants.json")["variants"]
    archs = {v["arch"] for v in vs}
    return "%d variants on each of %d architectures" % (len(vs) // len(archs), len(archs))


# The realistic sets, newest first per GPU: (GPU, set, record folder under results/, the row of
# `auto` whose plan the table counts); each record's README says whether it is held out or seen.
REALISTIC = [("H200", "set 3 (floor: read stream)", "h200/validation/heldout3", "auto"),
             ("H200", "set 2", "h200/validation/heldout2", "auto"),
             ("H100", "set 3", "h100/validation/heldout3", "auto"),
             ("H100", "set 3, run as CUDA graphs", "h100/validation/heldout3_graph", "auto"),
             ("H100", "set 3, the merge a programmatic dependent launch (`pdl`)",
              "h100/validation/heldout3_pdl", "auto"),
             ("H100", "set 3 with the m128 tile's plans, `auto` with `wide=on`",
              "h100/validation/heldout3_wide", "auto_wide")]


def _realistic(ctx, rec, auto="auto"):
    """Per (batch, heads): (best measured µs of the schedulers but `auto`'s rows, the `auto`
    row's measured µs, roofline floor µs) of an `anvil validate` record."""
    by = {}
    for r in load_json(ctx, "results", rec, "validation.json")["rows"]:
        b = by.setdefault((r["batch"], tuple(r["heads"])), [float("inf"), None, r["floor_us"]])
        if r["scheduler"] == auto:
            b[1] = r["measured_us"]
        elif not r["scheduler"].startswith("auto"):
            b[0] = min(b[0], r["measured_us"])
    return by


def realistic_table(ctx):
    """The realistic batches against the roofline floor: the geometric mean and the
    worst of best plan / floor, batches above 1.6x, the small batches (floor <= 25 µs) and
    `auto` within 5 % of the measured best."""
    out = ["", "| GPU | set | held-out / seen | batches | best plan / floor, geomean | worst | above "
           "1.6× | floor ≤ 25 µs: batches, geomean | `auto` within 5 % |",
           "|---|---|---|---|---|---|---|---|---|"]
    for gpu, label, rec, auto_row in REALISTIC:
        by = _realistic(ctx, rec, auto_row)
        ratio = {k: best / floor for k, (best, _, floor) in by.items()}
        worst = max(ratio, key=ratio.get)
        small = [ratio[k] for k, v in by.items() if v[2] <= 25.0]
        auto = sum(1 for best, a, _ in by.values() if a <= 1.05 * best)
        out.append("| %s | %s (`results/%s/`) | %s | %d | %.2f× | %.2f× (%s %d/%d) | %d | %s | %d / %d |"
                   % (gpu, label, rec, record_label(ctx, rec), len(by), _geo(list(ratio.values())), ratio[worst],
                      worst[0], worst[1][0], worst[1][1], sum(1 for x in ratio.values() if x > 1.6),
                      "%d, %.2f×" % (len(small), _geo(small)) if small else "none", auto, len(by)))
    return "\n".join(out) + "\n"


def _geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


SMALL = "results/h100/kernels/small_batches"


def small_batches(ctx):
    """The small batches' fastest plans, one traced run each: the attention phase (first CTA
    start to the last attention CTA's end), the wait for the merge, the merge, and the run's
    makespan (CUDA events), against the roofline floor of the held-out record."""
    floors = {(r["batch"], tuple(r["heads"])): r["floor_us"]
              for r in load_json(ctx, "results", "h100/validation/heldout3",
                                 "validation.json")["rows"]}
    best = {}
    for r in load_json(ctx, SMALL, "exec.json")["rows"]:
        k = (r["batch"], tuple(r["heads"]))
        if r["scheduler"] != "auto" and (k not in best or r["median_us"] < best[k]["median_us"]):
            best[k] = r
    out = ["| batch | heads | roofline floor µs | fastest plan, median µs | traced run µs | "
           "attention phase µs | wait for the merge µs | merge µs |",
           "|---|---|---|---|---|---|---|---|"]
    for k, r in sorted(best.items()):
        t = load_json(ctx, SMALL, "traces", "%s__%d-%d__%s__%s.json" % (
            k[0], k[1][0], k[1][1], r["dtype"], r["scheduler"]))
        c = t["ctas"]
        t0 = min(x["start_us"] for x in c)
        att = max(x["end_us"] for x in c if x["item"] >= 0) - t0
        mg = [x for x in c if x["item"] < 0]
        m0 = min(x["start_us"] for x in mg) - t0
        m1 = max(x["end_us"] for x in mg) - t0
        out.append("| %s | %d/%d | %.1f | %.1f (`%s`) | %.1f | %.1f | %.1f | %.1f |" % (
            k[0], k[1][0], k[1][1], floors[k], r["median_us"], r["scheduler"],
            t["makespan_us"], att, m0 - att, m1 - m0))
    return "\n".join(out)
