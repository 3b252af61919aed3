"""Shared helpers of the reproduction scripts in analysis/: load the results that
`anvil run EXP.json --out DIR` writes (DIR/results.json; docs/experiments.md has the schema),
index rows by batch and scheduler label, summarise, and save a figure with matplotlib's Agg
backend (no display needed)."""
import argparse
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402,F401  (re-exported for the scripts)


def parse_args(study, doc):
    """Command line of every study script: the results (a directory holding results.json,
    or the file itself; default out/<study>) and an optional PNG path."""
    ap = argparse.ArgumentParser(description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="?", default=os.path.join("out", study),
                    help=f"results directory or results.json of `anvil run` (default out/{study})")
    ap.add_argument("-o", "--output", help="PNG path (default: <results dir>/<study>.png)")
    ap.add_argument("--measured", default=measured_default(study),
                    help="`anvil validate` results of the study on the H200 (a directory holding "
                         "validation.json, or the file; default results/h200/repro/<study>/ when "
                         "it exists; 'none' = simulated only)")
    args = ap.parse_args()
    path = args.results
    if os.path.isdir(path):
        path = os.path.join(path, "results.json")
    args.results_json = path
    if not args.output:
        args.output = os.path.join(os.path.dirname(os.path.abspath(path)), f"{study}.png")
    return args


REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def measured_default(study):
    """Where results/h200/repro/run_repro.sh's output for a study is committed."""
    return os.path.join(REPO, "results", "h200", "repro", study)


def load_measured(path, prog):
    """The measured column of a study: {(workload, hq, hkv): {label: row}} from the
    validation.json that `anvil validate` writes (rows with batch, heads, scheduler label,
    predicted_us from the calibrated H200 spec, measured_us: median kernel time). None when
    there is no such file (the study then prints its simulated numbers only). The CSV next to
    it is not read: it does not quote batch names, and some hold commas ('U(512,2048) b=4')."""
    if not path or path == "none":
        return None
    if os.path.isdir(path):
        path = os.path.join(path, "validation.json")
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            doc = json.load(f)
        t = {}
        for r in doc["rows"]:
            hq, hkv = r["heads"]
            t.setdefault((r["batch"], hq, hkv), {})[r["scheduler"]] = r
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"{prog}: {path}: {e}; expected the validation.json of `anvil validate`")
    return t or None


def measured_of(meas, key, label):
    """Measured µs of (gpu, workload, hq, hkv) key's label, or None when not measured."""
    if not meas:
        return None
    r = meas.get((key[1], key[2], key[3]), {}).get(label)
    return r["measured_us"] if r and r.get("measured_us", 0) > 0 else None


def load(path, prog):
    """The results document; exits with one line naming the file when it cannot be read."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"{prog}: {path}: {e} (run `anvil run experiments/<study>.json --out DIR` first)")
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list) or not doc["rows"]:
        sys.exit(f"{prog}: {path}: no rows; expected the results.json of `anvil run`")
    return doc


def labels(doc):
    """Scheduler labels in the experiment's order."""
    return [s["label"] for s in doc["schedulers"]]


def batch_key(r):
    return (r["gpu"], r["workload"], r["hq"], r["hkv"])


def table(doc):
    """{(gpu, workload, hq, hkv): {label: row}}, batches in file order (dicts keep it)."""
    t = {}
    for r in doc["rows"]:
        t.setdefault(batch_key(r), {})[r["scheduler"]] = r
    return t


def require(doc, prog, *wanted):
    have = labels(doc)
    missing = [w for w in wanted if w not in have]
    if missing:
        sys.exit(f"{prog}: results of '{doc.get('experiment')}' lack scheduler(s) "
                 f"{', '.join(missing)}; have: {', '.join(have)}")


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs) if xs else float("nan")


def global_bytes(r):
    """Global-memory bytes of a plan as the simulator counts them: HBM traffic plus the
    bytes served from L2 would be all loads; the papers' 'global memory access' counts
    what reaches DRAM, which is `hbm_bytes`."""
    return r["hbm_bytes"]


def heads_label(hq, hkv):
    return f"{hq}/{hkv}"


def save(fig, path):
    fig.tight_layout()
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def footer(doc):
    """Where the numbers come from, for figure titles."""
    return f"anvil sim={doc.get('sim')}, {', '.join(doc.get('gpus', []))}"
