"""docs/validation.md#a-gpu-you-do-not-have: what error the committed records let one expect
when a Hopper profile predicts another GPU, and which GPUs no record covers. From the
leave-one-GPU-out records (results/<gpu>/transfer/, scripts/transfer-records), the datasheet
specs (gpus/*.json) and the measured validation records' devices."""
import glob
import json
import os

from docnums import label as record_label, load_json
from docnums.validation import TRANSFER, UNCALIBRATED, _rows, stats

PROFILED = ("H100-SXM", "H200-SXM")  # the GPUs with a committed profile (profiles/)


def _arch(ctx, gpu):
    v = load_json(ctx, "gpus", gpu + ".json").get("sm_arch")
    return v.get("value") if isinstance(v, dict) else v


def _measured_gpus(ctx):
    """The spec names the committed measured records were made on (their `spec` field)."""
    names = set()
    for path in glob.glob(ctx.path("results", "*", "*", "**", "validation.json"), recursive=True):
        with open(path, encoding="utf-8") as f:
            spec = json.load(f).get("spec", "")
        names.add(os.path.basename(spec.split()[0]).replace(".spec.json", "")
                  .replace(".json", "") if spec else "")
    return names


def _span(values, fmt):
    lo, hi = min(values), max(values)
    return fmt % lo if fmt % lo == fmt % hi else (fmt % lo) + "–" + (fmt % hi)


def other_gpus(ctx):
    """Hopper to Hopper: the MAPE and `auto` of the realistic records, own profile against the
    other GPU's; datasheet only; then each non-Hopper spec of gpus/ and what covers it."""
    own, moved, auto, labels = [], [], [], set()
    for _, label, mine, carried, _ in TRANSFER:
        if "in-sample" in label:
            continue
        a, b = stats(_rows(ctx, mine)), stats(_rows(ctx, carried))
        labels.add(record_label(ctx, carried))
        own.append(a["mape"])
        moved.append(b["mape"])
        auto.append(b["auto5"] - a["auto5"])
    sheet = [stats(_rows(ctx, unc))["mape"] for _, label, _, unc in UNCALIBRATED
             if "in-sample" not in label]
    hopper = {_arch(ctx, g) for g in PROFILED}
    measured = _measured_gpus(ctx)
    others = []
    for path in sorted(glob.glob(ctx.path("gpus", "*.json"))):
        gpu = os.path.splitext(os.path.basename(path))[0]
        if gpu in PROFILED:
            continue
        arch = _arch(ctx, gpu)
        others.append("%s (sm_%s: %s, %s)" % (
            gpu, arch,
            "a Hopper profile carries over" if arch in hopper else
            "`analysis/transfer.py` refuses a Hopper profile, the kernels differ",
            "a committed record measures it" if gpu in measured else "no committed record "
            "measures it"))
    rise = [b - a for a, b in zip(own, moved)]
    return ("Between the Hopper GPUs, a profile carried from the other GPU predicted the "
            "realistic records (%d, %s) with MAPE %s %% against %s %% with the GPU's own "
            "profile, %s points more on each, and `auto` within 5 %% of the measured best on "
            "%s batches more of 21; the datasheet spec with the GPU's own per-CTA tables "
            "(datasheet only) gave %s %% on the set 1 records. For the other specs of `gpus/` "
            "no record says what to expect: %s. An experiment can still name them (its "
            "`gpu`), but what it predicts there is datasheet only and untested against a "
            "measurement." % (
                len(own), "all " + labels.pop() if len(labels) == 1 else "held-out and seen",
                _span(moved, "%.1f"), _span(own, "%.1f"), _span(rise, "%.1f"),
                _span(auto, "%d").replace("–", " to "), _span(sheet, "%.1f"),
                "; ".join(others)))
