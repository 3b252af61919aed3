"""Prediction for a GPU you do not have: a profile measured on one GPU carried to another through
their specs (docs/validation.md#transfer).

  python3 analysis/transfer.py SOURCE TARGET [--data DIR] -o OUTDIR

SOURCE and TARGET are spec names (gpus/<name>.json); SOURCE must have a profile
(profiles/<SOURCE>.json, .spec.json, .details.json). Writes OUTDIR/profiles/<TARGET>.json,
.spec.json and .details.json, plus OUTDIR/gpus and OUTDIR/kernels, so that
`ANVIL_DATA_DIR=OUTDIR anvil run|validate --offline ...` predicts TARGET with the transferred
profile.

What carries over and how:
- the per-CTA tables C(n_q, n), the co-residency, merge and start curves are measured with one
  CTA (or one SM's CTAs) at a time, so they are properties of the SM: times scale by the ratio
  of SM clocks (source / target), and not at all between chips of one SM generation;
- the GPU-level figures come from the target's own spec: SM count, occupancy limits, L2 size;
  its HBM bandwidth is the target's datasheet figure times the source's measured/datasheet
  efficiency, its tensor rate the target's datasheet figure;
- the dispatch terms measured on the source (launch overhead, CTA fixed cost, join, run tail,
  dispatch, stream gap) are taken as they are: they belong to the driver and the SM's front end.
The tables must be for the same SM architecture: a transfer across architectures (sm_80 to
sm_90, say) is refused, since the kernels themselves differ there.
"""
import argparse
import copy
import json
import os
import shutil
import sys

DISPATCH = ["launch_overhead_us", "cta_fixed_us", "join_overhead_us", "run_tail_us",
            "cta_dispatch_us", "stream_gap_us", "graph_stream_gap_us", "graph_join_overhead_us",
            "graph_run_tail_us", "pdl_join_overhead_us"]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"transfer.py: {path}: {e}")


def value(spec, key):
    v = spec.get(key)
    return v["value"] if isinstance(v, dict) else v


def scale_times(node, factor):
    """Scales every number under a key that holds microseconds (name ends in _us, or the
    table key time_us) in a profile document."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k.endswith("_us") or k == "time_us":
                node[k] = scale_value(v, factor)
            else:
                scale_times(v, factor)
    elif isinstance(node, list):
        for v in node:
            scale_times(v, factor)


def scale_value(v, factor):
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v * factor
    if isinstance(v, list):
        return [scale_value(x, factor) for x in v]
    return v


def transferred_spec(src_cal, src_sheet, tgt_sheet, source):
    spec = copy.deepcopy(tgt_sheet)
    eff = value(src_cal, "hbm_bw_measured_GBps") / value(src_sheet, "hbm_bw_datasheet_GBps")
    bw = value(tgt_sheet, "hbm_bw_datasheet_GBps") * eff
    spec["hbm_bw_measured_GBps"] = {
        "value": round(bw, 1),
        "source": f"transferred from {source}: datasheet x {eff:.3f}, {source}'s "
                  f"measured/datasheet copy bandwidth (analysis/transfer.py)"}
    for k in DISPATCH:
        if k in src_cal:
            spec[k] = copy.deepcopy(src_cal[k])
            spec[k]["source"] = f"transferred from {source}: " + spec[k].get("source", "")
    spec["description"] = f"{tgt_sheet.get('description', '')} (profile transferred from {source})"
    return spec


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source")
    ap.add_argument("target")
    ap.add_argument("--data", default=".", help="anvil's data directory (the repository)")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    gp = lambda n: os.path.join(a.data, "gpus", f"{n}.json")
    pp = lambda n, ext: os.path.join(a.data, "profiles", f"{n}{ext}")
    src_sheet, tgt_sheet = load(gp(a.source)), load(gp(a.target))
    if value(src_sheet, "sm_arch") != value(tgt_sheet, "sm_arch"):
        sys.exit(f"transfer.py: {a.source} is sm_{value(src_sheet, 'sm_arch')} and {a.target} "
                 f"sm_{value(tgt_sheet, 'sm_arch')}: the kernels differ across architectures, "
                 "so a profile does not transfer")
    src_cal = load(pp(a.source, ".spec.json"))
    clock = value(src_sheet, "clock_MHz") / value(tgt_sheet, "clock_MHz")
    os.makedirs(os.path.join(a.out, "profiles"), exist_ok=True)
    for ext in (".json", ".details.json"):
        doc = load(pp(a.source, ext))
        scale_times(doc, clock)
        doc["gpu"] = a.target
        if ext == ".json":
            doc["notes"] = (f"transferred from {a.source} (clock ratio {clock:.3f}; "
                            f"analysis/transfer.py): " + doc.get("notes", ""))
        with open(os.path.join(a.out, "profiles", f"{a.target}{ext}"), "w") as f:
            json.dump(doc, f, indent=1)
    spec = transferred_spec(src_cal, src_sheet, tgt_sheet, a.source)
    with open(os.path.join(a.out, "profiles", f"{a.target}.spec.json"), "w") as f:
        json.dump(spec, f, indent=1)
    for sub in ("gpus", "kernels"):
        dst = os.path.join(a.out, sub)
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(os.path.join(a.data, sub), dst,
                        ignore=shutil.ignore_patterns("*.c", "*.cu", "*.cuh", "*.h", "*.py",
                                                      "*.sh", "*.txt"))
    print(f"{a.out}: {a.source} -> {a.target}, clock ratio {clock:.3f}, HBM "
          f"{value(spec, 'hbm_bw_measured_GBps'):.0f} GB/s")


if __name__ == "__main__":
    main()
