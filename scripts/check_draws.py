#!/usr/bin/env python3
"""Re-draws every committed validation set whose drawing profile is in git and compares its
batches with the record's (docs/validation.md#held-out-sets).

A set's README names the command that draws it again, on a line of its own:

    redraw: git show COMMIT:profiles/GPU.json > profile.json && python3 analysis/heldout.py GPU profile.json
    redraw: git show COMMIT:profiles/GPU.json > profile.json && python3 analysis/validation.py seeds profile.json -o EXP.json

This script runs the same drawing (the profile as it was at COMMIT, into a temporary file) and
compares the drawn batches with the record's: every workload of the folder's
`experiment.json` (or of the committed EXP.json the command writes), and the batch names and
heads of its `validation.json` rows.

    scripts/check_draws.py [REPO]    exit 1 listing each set that does not re-derive (CTest
                                     check_draws); 77 when REPO has no git history to show
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

REDRAW = re.compile(r"^redraw: git show ([0-9a-f]{7,40}):(\S+) > profile\.json && "
                    r"python3 (analysis/heldout\.py (\S+)|analysis/validation\.py seeds) "
                    r"profile\.json((?: --per-family \d+)?(?: --salt \S+)?)(?: -o (\S+))?\s*$",
                    re.M)


def redraws(repo):
    """(record folder, commit, profile path, GPU or None, committed experiment or None, the
    drawing's extra arguments: --per-family N, --salt TEXT) of every README under results/
    with a redraw line."""
    out = []
    for readme in sorted(glob.glob(os.path.join(repo, "results", "*", "*", "*", "README.md"))):
        with open(readme, encoding="utf-8") as f:
            m = REDRAW.search(f.read())
        if m:
            out.append((os.path.dirname(readme), m.group(1), m.group(2), m.group(4),
                        m.group(6), m.group(5).split()))
    return out


def drawn_folders(repo):
    """Validation record folders whose experiment.json says analysis/heldout.py drew all its
    batches (subsets of a set elsewhere under results/ are not sets)."""
    out = []
    for exp in sorted(glob.glob(os.path.join(repo, "results", "*", "validation", "*",
                                             "experiment.json"))):
        with open(exp, encoding="utf-8") as f:
            if "analysis/heldout.py" in json.load(f).get("description", ""):
                out.append(os.path.dirname(exp))
    return out


def draw(repo, commit, profile, gpu, tmp, extra=()):
    """The workloads drawn from the profile at commit: analysis/heldout.py GPU (realistic
    batches) or, without GPU, analysis/validation.py seeds (random forests)."""
    blob = subprocess.run(["git", "-C", repo, "show", f"{commit}:{profile}"], check=True,
                          capture_output=True).stdout
    path = os.path.join(tmp, "profile.json")
    with open(path, "wb") as f:
        f.write(blob)
    exp = os.path.join(tmp, "drawn.json")
    if gpu:
        cmd = ["analysis/heldout.py", gpu, path, *extra, "-o", exp]
    else:
        cmd = ["analysis/validation.py", "seeds", path, "-o", exp]
    subprocess.run([sys.executable] + cmd, cwd=repo, check=True, capture_output=True)
    with open(exp, encoding="utf-8") as f:
        return json.load(f)["workloads"]


def batches(workloads, heads=None):
    """[(name, heads)] of an experiment's workloads (heads from the experiment when the
    workload has none)."""
    return [(w["name"], tuple(w.get("heads", heads or [None]))) for w in workloads]


def compare(repo, folder, drawn, committed):
    rel = os.path.relpath(folder, repo)
    faults = []
    exp_path = (os.path.join(repo, committed) if committed else
                os.path.join(folder, "experiment.json"))
    if os.path.isfile(exp_path):
        with open(exp_path, encoding="utf-8") as f:
            exp = json.load(f)["workloads"]
        if exp != drawn:
            same = sum(a == b for a, b in zip(exp, drawn))
            faults.append(f"{rel}: {os.path.relpath(exp_path, repo)} holds {len(exp)} "
                          f"workloads, the re-draw {len(drawn)}; {same} identical")
    rec = os.path.join(folder, "validation.json")
    if os.path.isfile(rec):
        with open(rec, encoding="utf-8") as f:
            rows = json.load(f)["rows"]
        have = list(dict.fromkeys((r["batch"], tuple(r["heads"])) for r in rows))
        want = batches(drawn, [32, 8]) if not drawn or "heads" not in drawn[0] else batches(drawn)
        if set(have) != set(want):
            faults.append(f"{rel}: validation.json measured {len(set(have) - set(want))} "
                          f"batches the re-draw lacks, first {sorted(set(have) - set(want))[:1]}")
    return faults


def main():
    repo = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if subprocess.run(["git", "-C", repo, "rev-parse", "--verify", "-q", "HEAD"],
                      capture_output=True).returncode != 0:
        print("check_draws: skipped, not a git checkout (the drawing profiles are in history)")
        return 77
    sets = redraws(repo)
    faults = [f"{os.path.relpath(d, repo)}: drawn by analysis/heldout.py, but its README has "
              "no 'redraw:' line" for d in drawn_folders(repo) if d not in {s[0] for s in sets}]
    with tempfile.TemporaryDirectory(prefix="anvil-draws-") as tmp:
        for folder, commit, profile, gpu, committed, extra in sets:
            try:
                drawn = draw(repo, commit, profile, gpu, tmp, extra)
            except subprocess.CalledProcessError as e:
                faults.append(f"{os.path.relpath(folder, repo)}: {' '.join(e.cmd)}: exit "
                              f"{e.returncode}: {e.stderr.decode(errors='replace').strip()}")
                continue
            faults += compare(repo, folder, drawn, committed)
    for f in faults:
        print(f"check_draws: {f}", file=sys.stderr)
    if faults or not sets:
        print(f"check_draws: {len(faults)} fault(s) in {len(sets)} set(s)", file=sys.stderr)
        return 1
    print(f"check_draws: {len(sets)} sets re-drawn from the profiles they were drawn from, "
          "batch for batch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
