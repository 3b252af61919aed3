#!/usr/bin/env python3
"""Mutation check of the rules the proofs, schedulers and simulator rest on
(docs/reliability.md#mutation-check).

Each mutant below is one plausible mistake in one function: the plan checker, a scheduler's
core rule, the reference merge, the occupancy calculator, the simulator's bandwidth sharing or
plan reuse. A mutant names its target by file and function (or `#define NAME` for a macro);
the script finds that function's extent by parsing the C source (its definition at the start
of a line, then its body from `{` to the matching `}`, skipping comments, strings and
character literals), and the mutant's text must occur exactly once inside that body. A target
that moved, a function that is gone or defined twice, or a text found zero or several times
makes the mutant STALE: the script names it and exits 1, so a rewrite of a rule rewrites its
mutant too.

The working tree (tracked and untracked files git does not ignore) is copied into a scratch
directory (default build-mutants/, which git ignores) and configured CPU-only; only the test binaries the mutants name are built (the
libraries they link with them), then the mutants are planted one at a time, those binaries
rebuilt and run. The tests are Check unit tests, none of them a record snapshot, and the
first failing check is reported as the killer. A mutant is killed when a test fails (or
times out); the exit status is 1 when any survives, does not build, or is stale.

Usage:
  scripts/mutants.py [--work DIR] [--jobs N] [--only NAME[,NAME...]] [--list] [--locate]
  --locate only checks that every mutant still finds its target (no build; seconds)
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

CHECKER = ["test_plan", "test_schedulers_a", "test_schedulers_b"]
SCHED = ["test_schedulers_a", "test_schedulers_b", "test_beside"]
STREAMK = ["test_streamk_heap", "test_schedulers_b"]
GREEDY = ["test_greedy_bounds", "test_schedulers_a"]
REFERENCE = ["test_plan", "test_schedulers_a", "test_schedulers_b"]
OCCUPANCY = ["test_occupancy", "test_gpu"]
LAUNCH = ["test_replay", "test_cli"]
BANDWIDTH = ["test_engine"]
REUSE = ["test_api", "test_planner"]
PAT = ["test_schedulers_b", "test_profit_pack_tiles"]


def M(name, path, func, text, repl, tests):
    return {"name": name, "file": path, "func": func, "text": text, "repl": repl,
            "tests": tests}


MUTANTS = [
    M("checker_overlap_slack", "proofs/plan_check.c", "tile_node",
      "    if (x->begin < pos)\n", "    if (x->begin + 1 < pos)\n", CHECKER),
    M("checker_gap_slack", "proofs/plan_check.c", "tile_node",
      "    if (x->begin > pos)\n", "    if (x->begin > pos + 1)\n", CHECKER),
    M("checker_tail_slack", "proofs/plan_check.c", "tile_node",
      "  if (pos < len)\n    return fail(", "  if (pos + 1 < len)\n    return fail(", CHECKER),
    M("checker_rows_without_group", "proofs/plan_check.c", "check_item_queries",
      "int64_t rows = (int64_t)it->n_q * av_heads_group(&p->heads);",
      "int64_t rows = (int64_t)it->n_q;", CHECKER),
    M("greedy_eq4_without_count", "schedulers/greedy_search.c", "avg_load",
      "sum += cl->count * (b == 1 ? cl->c1", "sum += (b == 1 ? cl->c1", GREEDY),
    M("greedy_eq4_without_overhead", "schedulers/greedy_search.c", "avg_load",
      "sum += cl->count * (b == 1 ? cl->c1 : b * av__gd_class_cost(g, cl, b));",
      "sum += cl->count * cl->c1;", GREEDY),
    M("greedy_eq5_floor", "schedulers/greedy_search.c", "av__gd_bound_divisions",
      "ceil(c->c1 / cost_l)", "floor(c->c1 / cost_l)", GREEDY),
    M("wide_tiles_always_offered", "schedulers/sched_util.c", "av_sched_tiles",
      "const int wide_ok = ctx->wide_tiles || out[i].m_rows < AV_TILE_WIDE_ROWS;",
      "const int wide_ok = 1;", SCHED),
    M("wide_beside_ignores_free_sms", "schedulers/sched_util.c", "av_sched_beside_queues",
      "ob.ctas_per_sm == 1 && n_big * hkv < sms) {", "ob.ctas_per_sm == 1 && 0) {", SCHED),
    M("streamk_chunk_floor", "schedulers/streamk_balance.c", "sk_assign",
      "int64_t L = (total + c->n_cta - 1) / c->n_cta;", "int64_t L = total / c->n_cta;",
      STREAMK),
    M("streamk_heap_right_child", "schedulers/streamk_balance.c", "sk_sift_down",
      "    if (r < n && sk_less(&h[r], &h[m])) m = r;\n", "", STREAMK),
    M("streamk_heap_tie_by_higher_cta", "schedulers/streamk_balance.c", "sk_less",
      "(a->cost == b->cost && a->cta < b->cta)", "(a->cost == b->cost && a->cta > b->cta)",
      STREAMK),
    M("auto_races_wide_always", "selectors/auto.c", "race_collect",
      "a = wide ? all[i]->wide_alternatives : NULL;", "a = all[i]->wide_alternatives;",
      SCHED),
    M("auto_tie_flipped", "selectors/auto.c", "ranks_before",
      "(r->c[a].time_us == r->c[b].time_us && a < b)",
      "(r->c[a].time_us == r->c[b].time_us && a > b)", SCHED),
    M("profit_rule_strict", "schedulers/profit_pack.c", "pp_merge",
      "return 4 * s_units >= acc_u;", "return 4 * s_units > acc_u;", PAT),
    M("pat_tile_rounds_past_equal_m", "schedulers/profit_pack.c", "pp_tile_select",
      "if (c->menu[i].m_rows >= rows) {", "if (c->menu[i].m_rows > rows) {", PAT),
    M("reference_merge_weight", "proofs/reference.c", "merge_request",
      "double wa = exp(lse - s), wb = exp(sb - s);",
      "double wa = exp(lse - s), wb = exp(sb - mx);", REFERENCE),
    M("reference_merge_lse_kept", "proofs/reference.c", "merge_request",
      "      lse = s;\n", "      lse = mx;\n", REFERENCE),
    M("occupancy_regs_no_subpartitions", "core/occupancy.c", "regs_limit",
      "  return warps_per_part * parts / warps;",
      "  return (g->regs_per_sm / per_warp) / warps;", OCCUPANCY),
    M("occupancy_smem_no_reservation", "core/occupancy.c", "smem_limit",
      "round_up(smem_bytes + g->smem_reserved_per_cta_bytes,", "round_up(smem_bytes,",
      OCCUPANCY),
    M("occupancy_tie_order", "core/occupancy.c", "av_occupancy",
      "  if (out->by_regs <= k) {", "  if (out->by_regs < k) {", OCCUPANCY),
    M("graph_issued_per_launch", "core/gpu.c", "av_gpu_launch_costs",
      "  out->issue_step_us = graph ? 0 : g->launch_overhead_us;",
      "  out->issue_step_us = g->launch_overhead_us;", LAUNCH),
    M("graph_tail_of_streams", "core/gpu.c", "av_gpu_launch_costs",
      "  out->tail_us = measured ? g->graph_run_tail_us : g->run_tail_us;",
      "  out->tail_us = g->run_tail_us;", LAUNCH),
    M("auto_rank_reversed", "selectors/auto.c", "av_auto_rank",
      "for (; j > 0 && all[j - 1].predicted_us > c->time_us; j--)",
      "for (; j > 0 && all[j - 1].predicted_us < c->time_us; j--)", ["test_autotune"]),
    M("l2_lines_at_cta_start", "sim/engine_internal.h", "#define AV__L2_PHASE_LINES",
      "#define AV__L2_PHASE_LINES 1\n", "#define AV__L2_PHASE_LINES 1000000000\n",
      ["test_l2_ranges", "test_engine"]),
    M("bandwidth_capped_share_not_given_back", "sim/engine_loop.c", "water_level",
      "f = (e->B - capped) / free_ctas;", "f = e->B / free_ctas;", BANDWIDTH),
    M("reuse_inner_node_may_grow", "pipeline/plan_reuse.c", "av_plan_reusable",
      "if (b->kv_len_tokens < a->kv_len_tokens || b->first_child != -1 ||",
      "if (b->kv_len_tokens < a->kv_len_tokens ||", REUSE),
]


def mask_code(src):
    """src with comments, string and character literals blanked (same length, newlines kept),
    so braces and names inside them are not code."""
    out, i, n = list(src), 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
        else:
            i += 1
            continue
        for k in range(i, j):
            if out[k] != "\n":
                out[k] = " "
        i = j
    return "".join(out)


def function_extent(src, func):
    """(start, end) of func's definition in src: from its first line to its closing brace.
    Raises LookupError when it is not defined exactly once."""
    code = mask_code(src)
    if func.startswith("#define "):
        hits = [m for m in re.finditer(r"^" + re.escape(func) + r"\b.*$", code, re.M)]
        if len(hits) != 1:
            raise LookupError(f"'{func}' is defined {len(hits)} times")
        return hits[0].start(), hits[0].end() + 1
    # A definition: a line starting at column 0 (not a preprocessor line) naming func and its
    # parameter list, then a '{' before any ';' (a prototype ends at the ';').
    pat = re.compile(r"^(?![#\s}]).*?\b" + re.escape(func) + r"\s*\(", re.M)
    found = []
    for m in pat.finditer(code):
        depth, j = 0, m.end() - 1
        while j < len(code):
            if code[j] == "(":
                depth += 1
            elif code[j] == ")":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        k = j + 1
        while k < len(code) and code[k] in " \t\n":
            k += 1
        if k >= len(code) or code[k] != "{":
            continue
        depth, e = 0, k
        while e < len(code):
            if code[e] == "{":
                depth += 1
            elif code[e] == "}":
                depth -= 1
                if depth == 0:
                    break
            e += 1
        found.append((m.start(), e + 1))
    if len(found) != 1:
        raise LookupError(f"function {func} is defined {len(found)} times")
    return found[0]


def locate(root, mut):
    """(path, source, offset of the mutant's text) or raises LookupError saying why not."""
    path = os.path.join(root, mut["file"])
    if not os.path.isfile(path):
        raise LookupError(f"{mut['file']} does not exist")
    with open(path, encoding="utf-8") as f:
        src = f.read()
    start, end = function_extent(src, mut["func"])
    body = src[start:end]
    count = body.count(mut["text"])
    if count != 1:
        raise LookupError(f"its text is in {mut['func']} of {mut['file']} {count} times")
    return path, src, start + body.index(mut["text"])


def run(cmd, cwd, timeout=None):
    """(status, output); status -1 on a timeout."""
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout)
        return p.returncode, p.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return -1, "timed out"


def first_failure(output):
    """The first failing Check test in a binary's output ("tcase:test"), or ""."""
    m = re.search(r"^[^:\n]+:\d+:[FE]:([^:\n]+):([^:\n]+):", output, re.M)
    return m.group(2) if m else ""


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


def try_mutant(mut, work, build, jobs):
    """Plants mut, rebuilds and runs its tests, restores the file; returns (verdict, by)."""
    path, src, at = locate(work, mut)
    with open(path, "w", encoding="utf-8") as f:
        f.write(src[:at] + mut["repl"] + src[at + len(mut["text"]):])
    try:
        rc, _ = run(["cmake", "--build", build, "-j", str(jobs), "--target"] + mut["tests"], work)
        if rc:
            return "DOES NOT BUILD", ""
        for t in mut["tests"]:
            rc, out = run([os.path.join(build, "tests", t)], work, timeout=300)
            if rc != 0:
                why = "timed out" if rc == -1 else first_failure(out) or f"exit {rc}"
                return "killed", f"{t} ({why})"
        return "SURVIVED", ""
    finally:
        with open(path, "w", encoding="utf-8") as f:
            f.write(src)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", default=None, help="scratch copy (default build-mutants/)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--locate", action="store_true")
    a = ap.parse_args()
    names = [n for n in a.only.split(",") if n]
    unknown = [n for n in names if n not in {m["name"] for m in MUTANTS}]
    if unknown:
        print(f"mutants: --only: unknown mutant(s) {', '.join(unknown)}", file=sys.stderr)
        return 1
    chosen = [m for m in MUTANTS if not names or m["name"] in names]
    if a.list:
        for m in chosen:
            print(f"{m['name']:38s} {m['file']}:{m['func']}  ({', '.join(m['tests'])})")
        return 0
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    a.work = os.path.abspath(a.work or os.path.join(repo, "build-mutants"))
    stale = []
    for m in chosen:
        try:
            locate(repo, m)
        except LookupError as e:
            print(f"{m['name']:38s} STALE: {e}", flush=True)
            stale.append(m["name"])
    if a.locate or stale:
        if stale:
            print("mutants: stale (fix their targets): " + ", ".join(stale), file=sys.stderr)
            return 1
        print(f"mutants: all {len(chosen)} mutants find their targets")
        return 0
    t0 = time.time()
    copy_tree(repo, a.work)
    build = os.path.join(a.work, "build")
    targets = sorted({t for m in chosen for t in m["tests"]})
    rc, out = run(["cmake", "-S", a.work, "-B", build, "-DAV_CUDA=OFF",
                   "-DCMAKE_BUILD_TYPE=Release"], a.work)
    if not rc:
        rc, out = run(["cmake", "--build", build, "-j", str(a.jobs), "--target"] + targets,
                      a.work)
    if rc:
        print(out[-3000:], file=sys.stderr)
        print("mutants: the unmutated tree does not build", file=sys.stderr)
        return 2
    for t in targets:  # a test that fails unmutated would kill every mutant
        rc, out = run([os.path.join(build, "tests", t)], a.work, timeout=300)
        if rc:
            print(out[-3000:], file=sys.stderr)
            print(f"mutants: {t} fails on the unmutated tree", file=sys.stderr)
            return 2
    print(f"mutants: built and ran {len(targets)} test binaries in {time.time() - t0:.0f} s",
          flush=True)
    bad = []
    for m in chosen:
        verdict, by = try_mutant(m, a.work, build, a.jobs)
        print(f"{m['name']:38s} {verdict} {by}".rstrip(), flush=True)
        if verdict != "killed":
            bad.append(m["name"])
    print(f"mutants: {len(chosen) - len(bad)} of {len(chosen)} killed in {time.time() - t0:.0f} s")
    if bad:
        print("mutants: survived or did not build: " + ", ".join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
