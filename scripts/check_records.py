#!/usr/bin/env python3
"""Re-predicts every committed validation record offline and checks that each prediction is
the recorded one to the last bit (docs/validation.md#re-predicting-offline).

  scripts/check_records.py [--quick] [--anvil PATH] [REPO]

Records: results/<gpu>/validation/<set>/validation.json, re-predicted with
`anvil validate --offline` (which keeps the record's calibration mode), and
results/<gpu>/transfer/<set>/validation.json, re-predicted the same way inside a data
directory holding the other GPU's profile carried over by analysis/transfer.py (the pairing
of scripts/transfer-records). A record that no longer reproduces means the simulator, a
scheduler, a profile or a spec changed what it predicts for measured plans: remake the
records (docs/validation.md) or find the change. --quick skips records of more than 400 pairs
(PAT's trees) for CTest (`offline_records`: a few minutes on two cores); records are
re-predicted one anvil process per core.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import subprocess
import sys
import tempfile

# results/<gpu>/transfer/: the GPU whose profile scripts/transfer-records carried over.
TRANSFER_SOURCE = {"h100": ("H200-SXM", "H100-SXM"), "h200": ("H100-SXM", "H200-SXM")}
QUICK_MAX_PAIRS = 400


def predictions(path):
    """[((batch, heads, scheduler), predicted_us as written)]. Compared as doubles: the text
    of one double differs between JSON writers (16 or 17 digits), its value does not."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f, parse_float=str, parse_int=str)
    return [((r["batch"], tuple(r["heads"]), r["scheduler"]), r["predicted_us"])
            for r in doc["rows"]]


def repredict(repo, anvil, record, out, data_dir=None):
    env = dict(os.environ)
    if data_dir:
        env["ANVIL_DATA_DIR"] = data_dir
    cmd = [anvil, "validate", "--offline", record, "--out", out]
    p = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        return f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}"
    return None


def compare(record, got):
    want, have = predictions(record), predictions(got)
    if [k for k, _ in want] != [k for k, _ in have]:
        return f"{record}: the re-prediction has other rows ({len(have)} vs {len(want)})"
    bad = [(k, a, b) for (k, a), (_, b) in zip(want, have) if float(a) != float(b)]
    if bad:
        (batch, heads, sched), a, b = bad[0]
        return (f"{record}: {len(bad)} of {len(want)} predictions differ, first "
                f"{batch} {list(heads)} {sched}: recorded {a}, now {b}")
    return None


def transfer_data(repo, gpu, tmp, cache):
    """The data directory of analysis/transfer.py for results/<gpu>/transfer/ records."""
    if gpu not in cache:
        source, target = TRANSFER_SOURCE[gpu]
        d = os.path.join(tmp, f"data-{gpu}")
        subprocess.run([sys.executable, "analysis/transfer.py", source, target, "-o", d],
                       cwd=repo, check=True, capture_output=True)
        cache[gpu] = d
    return cache[gpu]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", nargs="?",
                    default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--anvil", default=None, help="the anvil binary (default REPO/build/anvil)")
    ap.add_argument("--quick", action="store_true", help="skip records of > 400 pairs")
    a = ap.parse_args()
    repo = os.path.abspath(a.repo)
    anvil = os.path.abspath(a.anvil or os.path.join(repo, "build", "anvil"))
    records = sorted(glob.glob(os.path.join(repo, "results", "*", "validation", "*",
                                            "validation.json")))
    records += sorted(glob.glob(os.path.join(repo, "results", "*", "transfer", "*",
                                             "validation.json")))
    failures, checked, cache = [], 0, {}
    with tempfile.TemporaryDirectory(prefix="anvil-records-") as tmp:
        jobs = []  # (rel, record, data dir)
        for rec in records:
            rel = os.path.relpath(rec, repo)
            if a.quick and len(predictions(rec)) > QUICK_MAX_PAIRS:
                print(f"skip (--quick) {rel}")
                continue
            parts = rel.split(os.sep)
            data = transfer_data(repo, parts[1], tmp, cache) if parts[2] == "transfer" else None
            jobs.append((rel, rec, data))

        def check(i):
            rel, rec, data = jobs[i]
            out = os.path.join(tmp, f"out{i}")
            return repredict(repo, anvil, rel, out, data) or compare(
                rec, os.path.join(out, "validation.json"))

        # one anvil process per core: each record is re-predicted on its own
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            for (rel, _, _), err in zip(jobs, pool.map(check, range(len(jobs)))):
                print(f"{'FAIL' if err else 'ok  '} {rel}", flush=True)
                if err:
                    failures.append(err)
                checked += 1
    for f in failures:
        print(f, file=sys.stderr)
    print(f"{checked - len(failures)} of {checked} records reproduce their predictions")
    return 1 if failures or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
