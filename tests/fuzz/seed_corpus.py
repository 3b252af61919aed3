#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz harnesses, tests/fuzz/corpus/<harness>/, from the
repository's own valid files and bad-input cases (docs/reliability.md#fuzzing). Plans and
the replay trace are made with the built anvil, so the seeds match the current formats.

Usage: tests/fuzz/seed_corpus.py ANVIL_BINARY
"""
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus")
MAX_SEED_BYTES = 128 * 1024


def files(*patterns):
    out = []
    for p in patterns:
        out += sorted(glob.glob(os.path.join(ROOT, p), recursive=True))
    return [f for f in out if os.path.isfile(f) and os.path.getsize(f) <= MAX_SEED_BYTES]


def put(harness, data):
    """One seed, named by its content (as libFuzzer names what it adds)."""
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(OUT, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def experiment_specs(path):
    """The workload specs inside an experiment file (for the workload harness)."""
    try:
        doc = json.load(open(path))
    except (ValueError, UnicodeDecodeError):
        return []
    ws = doc.get("workloads") if isinstance(doc, dict) else None
    return [w for w in ws if isinstance(w, dict)] if isinstance(ws, list) else []


def make_plans(anvil, tmp):
    """Small plans of each scheduler family, and a measured-trace seed for the replay plan."""
    plans = []
    for i, (levels, sched) in enumerate([("B=1,4 L=128,32", "query_centric"),
                                         ("B=1,4 L=128,32", "node_naive"),
                                         ("B=1,4,8 L=256,64,16", "greedy_division"),
                                         ("B=1,4,8 L=256,64,16", "profit_pack"),
                                         ("B=1,8 L=512,32", "streamk_balance")]):
        out = os.path.join(tmp, f"plan{i}.json")
        subprocess.run([anvil, "plan", "--levels", levels, "-s", sched, "-o", out], check=True,
                       stdout=subprocess.DEVNULL)
        plans.append(out)
    return plans


def replay_trace(plan_path):
    """Every (item, head) of the plan once, 5 us each, one wave (the replay harness's plan)."""
    doc = json.load(open(plan_path))
    plan = doc.get("plan", doc)
    n_items = len(plan["items"])
    ctas, sm = [], 0
    for item in range(n_items):
        for head in range(8):
            ctas.append({"item": item, "head": head, "sm": sm % 132, "start_us": 0, "end_us": 5})
            sm += 1
    return json.dumps({"gpu": "H200-SXM", "makespan_us": 6.5, "ctas": ctas})


# The Python harness's entry points (fuzz_python.py MODES): the first byte picks one; the
# first three take the rest as text, the others as bytes for a FuzzedDataProvider.
PY_SPEC_TEXT, PY_PLAN_TEXT, PY_FILE, PY_STRUCTURED = 0, 1, 2, range(3, 9)


def python_seeds(specs, plans):
    """fuzz_python: the workload specs and plans as text and as a file, and a few byte
    patterns for each entry point that builds Python values."""
    for spec in specs:
        put("fuzz_python", bytes([PY_SPEC_TEXT]) + spec.encode())
    for p in plans:
        put("fuzz_python", bytes([PY_PLAN_TEXT]) + open(p, "rb").read())
    put("fuzz_python", bytes([PY_FILE]) + specs[0].encode())
    put("fuzz_python", bytes([PY_FILE]) + open(plans[0], "rb").read())
    for mode in PY_STRUCTURED:
        for pattern in (b"", bytes(range(48)), b"\x01" * 48, b"\xfe\x07" * 24):
            put("fuzz_python", bytes([mode]) + pattern)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    anvil = os.path.abspath(sys.argv[1])
    shutil.rmtree(OUT, ignore_errors=True)
    experiments = files("experiments/*.json", "tests/bad_input/*/input.json")
    specs = []
    for f in experiments:
        put("fuzz_experiment", open(f, "rb").read())
        specs += [json.dumps(spec) for spec in experiment_specs(f)]
    for case in json.load(open(os.path.join(ROOT, "tests/data/workloads/bad_specs.json")))["cases"]:
        specs.append(json.dumps(case["spec"]))
    for spec in specs:
        put("fuzz_workload", spec)
    for f in files("gpus/*.json", "tests/data/gpus/bad/*/input.json", "profiles/*.spec.json"):
        put("fuzz_gpu", open(f, "rb").read())
    for f in files("kernels/variants.json", "tests/data/gpus/variants_fixture.json",
                   "tests/data/gpus/variants_bad/*/input.json"):
        put("fuzz_variants", open(f, "rb").read())
    for f in files("tests/data/profiles/*.json", "profiles/*.json", "tests/data/start/**/*.json",
                   "tests/data/profile_merge/**/*.json", "tests/data/coresidency/**/*.json"):
        put("fuzz_profile", open(f, "rb").read())
    for f in files("tests/data/workloads/*.jsonl", "tests/bad_input/*/*.jsonl"):
        if "journal" not in f:
            put("fuzz_jsonl", open(f, "rb").read())
    for f in files("tests/data/replay/**/*.json"):
        put("fuzz_replay", open(f, "rb").read())
    with tempfile.TemporaryDirectory() as tmp:
        plans = make_plans(anvil, tmp)
        put("fuzz_replay", replay_trace(plans[0]))
        lines = [json.dumps(s) for s in experiment_specs(os.path.join(ROOT, "experiments/quickstart.json"))]
        put("fuzz_jsonl", "\n".join(lines) + "\n")
        plans += files("tests/data/plans/*.json", "tests/bad_input/check_plan_*/*.json")
        for p in plans:
            put("fuzz_plan", open(p, "rb").read())
        python_seeds(specs, plans)
    for h in sorted(os.listdir(OUT)):
        print(f"{h}: {len(os.listdir(os.path.join(OUT, h)))} seeds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
