#!/usr/bin/env python3
"""Mutation check of the rules the proofs and schedulers rest on (docs/reliability.md).

Each mutant below is one plausible mistake in the plan checker, a scheduler's core rule, the
reference merge or the occupancy calculator. The script copies the working tree (tracked and
untracked files git does not ignore) into a scratch directory, builds it CPU-only once, then
plants the mutants one at a time, rebuilds the test binaries that should notice and runs
them. A mutant is killed when a test fails (or times out); it survives when all pass. The
exit status is 1 when any mutant survives, does not build, or no longer applies (its text is not in the
source exactly once), so a rewrite of a rule also rewrites its mutant.

Usage:
  scripts/mutants.py [--work DIR] [--jobs N] [--only NAME[,NAME...]] [--list]
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

CHECKER = ["test_plan", "test_schedulers_a", "test_schedulers_b"]
SCHED = ["test_schedulers_a", "test_schedulers_b", "test_beside"]
REFERENCE = ["test_plan", "test_schedulers_a", "test_schedulers_b"]
OCCUPANCY = ["test_occupancy", "test_gpu"]
LAUNCH = ["test_replay", "test_cli"]

# name, file, text, replacement, test binaries
MUTANTS = [
    ("checker_overlap_slack", "proofs/plan_check.c",
     "    if (x->begin < pos)\n", "    if (x->begin + 1 < pos)\n", CHECKER),
    ("checker_gap_slack", "proofs/plan_check.c",
     "    if (x->begin > pos)\n", "    if (x->begin > pos + 1)\n", CHECKER),
    ("checker_tail_slack", "proofs/plan_check.c",
     "  if (pos < len)\n    return fail(", "  if (pos + 1 < len)\n    return fail(", CHECKER),
    ("greedy_eq4_without_count", "schedulers/greedy_division.c",
     "sum += cl->count * (b == 1 ? cl->c1", "sum += (b == 1 ? cl->c1", SCHED),
    ("wide_tiles_always_offered", "schedulers/sched_util.c",
     "const int wide_ok = ctx->wide_tiles || out[i].m_rows < AV_TILE_WIDE_ROWS;",
     "const int wide_ok = 1;", SCHED),
    ("wide_beside_ignores_free_sms", "schedulers/sched_util.c",
     "ob.ctas_per_sm == 1 && n_big * hkv < sms) {", "ob.ctas_per_sm == 1 && 0) {", SCHED),
    ("streamk_chunk_floor", "schedulers/streamk_balance.c",
     "int64_t L = (total + c->n_cta - 1) / c->n_cta;", "int64_t L = total / c->n_cta;", SCHED),
    ("auto_races_wide_always", "schedulers/auto.c",
     "alts = wide ? all[i]->wide_alternatives : NULL;", "alts = all[i]->wide_alternatives;",
     SCHED),
    ("auto_tie_flipped", "schedulers/auto.c",
     "if (!r->have_best || t < r->best_us) {", "if (!r->have_best || t <= r->best_us) {",
     SCHED),
    ("profit_rule_strict", "schedulers/profit_pack.c",
     "return 4 * s_units >= acc_u;", "return 4 * s_units > acc_u;", SCHED),
    ("reference_merge_weight", "proofs/reference.c",
     "double wa = exp(lse - s), wb = exp(sb - s);",
     "double wa = exp(lse - s), wb = exp(sb - mx);", REFERENCE),
    ("reference_merge_lse_kept", "proofs/reference.c",
     "      lse = s;\n", "      lse = mx;\n", REFERENCE),
    ("occupancy_regs_no_subpartitions", "core/occupancy.c",
     "  return warps_per_part * parts / warps;",
     "  return (g->regs_per_sm / per_warp) / warps;", OCCUPANCY),
    ("occupancy_smem_no_reservation", "core/occupancy.c",
     "round_up(smem_bytes + g->smem_reserved_per_cta_bytes,", "round_up(smem_bytes,",
     OCCUPANCY),
    ("occupancy_tie_order", "core/occupancy.c",
     "  if (out->by_regs <= k) {", "  if (out->by_regs < k) {", OCCUPANCY),
    ("graph_issued_per_launch", "core/gpu.c",
     "  out->issue_step_us = graph ? 0 : g->launch_overhead_us;",
     "  out->issue_step_us = g->launch_overhead_us;", LAUNCH),
    ("graph_tail_of_streams", "core/gpu.c",
     "  out->tail_us = measured ? g->graph_run_tail_us : g->run_tail_us;",
     "  out->tail_us = g->run_tail_us;", LAUNCH),
    ("auto_rank_reversed", "schedulers/auto.c",
     "for (; j > 0 && all[j - 1].predicted_us > c.predicted_us; j--)",
     "for (; j > 0 && all[j - 1].predicted_us < c.predicted_us; j--)", ["test_autotune"]),
    ("l2_lines_at_cta_start", "sim/engine_internal.h",
     "#define AV__L2_PHASE_LINES 1\n", "#define AV__L2_PHASE_LINES 1000000000\n", ["test_engine"]),
]


def run(cmd, cwd, timeout=None, quiet=True):
    out = subprocess.DEVNULL if quiet else None
    try:
        return subprocess.run(cmd, cwd=cwd, stdout=out, stderr=out, timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        return -1


def copy_tree(repo, work):
    if os.path.exists(work):
        shutil.rmtree(work)
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=repo, check=True, stdout=subprocess.PIPE).stdout.split(b"\0")
    for f in files:
        if not f:
            continue
        rel = f.decode()
        src = os.path.join(repo, rel)
        if not os.path.isfile(src):
            continue
        dst = os.path.join(work, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", default="/tmp/anvil-mutants")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    chosen = [m for m in MUTANTS if not a.only or m[0] in a.only.split(",")]
    if a.list:
        for m in chosen:
            print(f"{m[0]:34s} {m[1]}")
        return 0
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    t0 = time.time()
    copy_tree(repo, a.work)
    build = os.path.join(a.work, "build")
    if run(["cmake", "-S", a.work, "-B", build, "-DAV_CUDA=OFF", "-DCMAKE_BUILD_TYPE=Release"],
           a.work) or run(["cmake", "--build", build, "-j", str(a.jobs)], a.work):
        print("mutants: the unmutated tree does not build", file=sys.stderr)
        return 2
    bad = []
    for name, rel, text, repl, tests in chosen:
        path = os.path.join(a.work, rel)
        original = open(path).read()
        if original.count(text) != 1:
            print(f"{name:34s} STALE (its text is in {rel} {original.count(text)} times)")
            bad.append(name)
            continue
        open(path, "w").write(original.replace(text, repl))
        try:
            rc = run(["cmake", "--build", build, "-j", str(a.jobs), "--target"] + tests, a.work)
            if rc:
                verdict, by = "DOES NOT BUILD", ""
            else:
                verdict, by = "SURVIVED", ""
                for t in tests:
                    if run([os.path.join(build, "tests", t)], a.work, timeout=300) != 0:
                        verdict, by = "killed", t
                        break
        finally:
            open(path, "w").write(original)
        print(f"{name:34s} {verdict} {by}".rstrip(), flush=True)
        if verdict != "killed":
            bad.append(name)
    print(f"mutants: {len(chosen) - len(bad)} of {len(chosen)} killed in {time.time() - t0:.0f} s")
    if bad:
        print("mutants: survived or stale: " + ", ".join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
