"""Planning cost per step of a realistic decode loop, binding included.

    python python/bench/decode_loop.py [--steps 1000] [--requests 128 256] [--auto-steps 1000]
                                       [--repeats 5]
                                       [--out results/host/planning/decode_loop.json]

The batch, as a serving engine holds it: N requests under one 4,096-token shared prompt, each
with 64-2,047 tokens of its own (staggered), block size 16, blocks taken from a free list
(last freed, first reused). Each step every request decodes one token (a new block when its
last is full); a request that has decoded its budget (1-1,000 tokens) finishes (its row is
removed, its blocks freed) and a new request with 64-2,047 own tokens arrives at the end of
the batch. `Planner(s).step(table, kv_lens)` is timed on every step (numpy int32 arrays, no
copy; no allocator setting). Reported per scheduler and batch size: median and p99 per step
(thread CPU time and wall clock) and the fraction of steps reused, patched and planned anew
(replanned by the drift rule, or planned from the table), and the CPU time of the first step
(a fresh plan: for `auto`, its race) and the longest of the others. Each row is run --repeats
times on a fresh loop and planner, and its times are the medians over the runs (the steps'
kinds do not change from run to run). `auto` runs --auto-steps steps and is reported on its
own."""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

import anvil

BS = 16
PROMPT = 4096


class Loop:
    def __init__(self, n, steps, seed):
        self.rng = np.random.default_rng(seed)
        self.n = n
        width = (PROMPT + 2047 + steps + 2 * BS) // BS
        pool = n * width * 2 + PROMPT // BS
        self.free = list(range(pool - 1, PROMPT // BS - 1, -1))
        self.table = np.full((n, width), -1, dtype=np.int32)
        self.kv = np.zeros(n, dtype=np.int32)
        self.left = np.zeros(n, dtype=np.int64)
        for r in range(n):
            self._admit(r)

    def _admit(self, r):
        own = int(self.rng.integers(64, 2048))
        tok = PROMPT + own
        nb = -(-tok // BS)
        self.table[r, :PROMPT // BS] = np.arange(PROMPT // BS, dtype=np.int32)
        for j in range(PROMPT // BS, nb):
            self.table[r, j] = self.free.pop()
        self.kv[r] = tok
        self.left[r] = int(self.rng.integers(1, 1001))

    def step(self):
        done = np.nonzero(self.left <= 0)[0]
        for r in done[::-1]:                       # finish: free blocks, close the gap
            nb = -(-int(self.kv[r]) // BS)
            self.free.extend(int(x) for x in self.table[r, PROMPT // BS:nb][::-1])
            self.table[r:-1] = self.table[r + 1:]
            self.kv[r:-1] = self.kv[r + 1:].copy()
            self.left[r:-1] = self.left[r + 1:].copy()
        for k in range(len(done)):                 # arrivals at the end
            self._admit(self.n - len(done) + k)
        full = np.nonzero(self.kv % BS == 0)[0]
        for r in full:
            self.table[r, self.kv[r] // BS] = self.free.pop()
        self.kv += 1
        self.left -= 1


def run(scheduler, n, steps, seed, gpu):
    loop = Loop(n, steps, seed)
    pl = anvil.Planner(scheduler, gpu=gpu)
    cpu, wall = [], []
    for _ in range(steps):
        t0, w0 = time.thread_time_ns(), time.perf_counter_ns()
        pl.step(loop.table, loop.kv)
        cpu.append(time.thread_time_ns() - t0)
        wall.append(time.perf_counter_ns() - w0)
        loop.step()
    # packages before the Planner counted its steps have no stats: the times still compare
    st = getattr(pl, "stats", None) or {"reused": 0, "patched": 0, "replanned": 0, "planned": 0}

    def pct(xs, q):
        return float(np.percentile(np.array(xs) / 1e3, q))

    return {"scheduler": scheduler, "requests": n, "steps": steps,
            "cpu_median_us": statistics.median(cpu) / 1e3, "cpu_p99_us": pct(cpu, 99),
            "wall_median_us": statistics.median(wall) / 1e3, "wall_p99_us": pct(wall, 99),
            "cpu_first_us": cpu[0] / 1e3, "cpu_max_rest_us": max(cpu[1:], default=0) / 1e3,
            "reused": st["reused"], "patched": st["patched"], "replanned": st["replanned"],
            "planned": st["planned"],
            "kept_fraction": (st["reused"] + st["patched"]) / steps}


TIMES = ("cpu_median_us", "cpu_p99_us", "wall_median_us", "wall_p99_us", "cpu_first_us",
         "cpu_max_rest_us")


def repeated(scheduler, n, steps, seed, gpu, repeats):
    """run() `repeats` times; each time the median over the runs."""
    runs = [run(scheduler, n, steps, seed, gpu) for _ in range(repeats)]
    row = dict(runs[0])
    for k in TIMES:
        row[k] = statistics.median(r[k] for r in runs)
    row["repeats"] = repeats
    return row


def machine():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        model = next(line.split(":", 1)[1].strip() for line in out.splitlines()
                     if line.startswith("Model name"))
    except (OSError, subprocess.CalledProcessError, StopIteration):
        model = platform.processor()
    return {"cpu": model, "cores": os.cpu_count(), "load_average": list(os.getloadavg())}


def commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--requests", type=int, nargs="+", default=[128, 256])
    ap.add_argument("--schedulers", nargs="+",
                    default=["profit_pack", "greedy_division", "streamk_balance"])
    ap.add_argument("--auto-steps", type=int, default=1000, help="steps of `auto` (0: skip)")
    ap.add_argument("--repeats", type=int, default=5,
                    help="runs of each row; its times are the medians over them")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--gpu", default="H200-SXM")
    ap.add_argument("--out", help="write the record (JSON) here")
    a = ap.parse_args()
    rows = []
    print(f"{'scheduler':<17}{'req':>5}{'cpu_med':>9}{'cpu_p99':>9}{'wall_med':>10}"
          f"{'wall_p99':>10}{'reused':>8}{'patched':>8}{'replan':>8}{'planned':>8}")
    jobs = [(s, n, a.steps) for n in a.requests for s in a.schedulers]
    if a.auto_steps:
        jobs += [("auto", n, a.auto_steps) for n in a.requests]
    for s, n, steps in jobs:
        r = repeated(s, n, steps, a.seed, a.gpu, max(1, a.repeats))
        rows.append(r)
        print(f"{s:<17}{n:>5}{r['cpu_median_us']:>9.1f}{r['cpu_p99_us']:>9.1f}"
              f"{r['wall_median_us']:>10.1f}{r['wall_p99_us']:>10.1f}{r['reused']:>8}"
              f"{r['patched']:>8}{r['replanned']:>8}{r['planned']:>8}", flush=True)
    if a.out:
        rec = {"command": "python python/bench/decode_loop.py " + " ".join(sys.argv[1:]),
               "commit": commit(), "machine": machine(), "anvil": anvil.__version__,
               "gpu": a.gpu, "repeats": max(1, a.repeats), "rows": rows}
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w", encoding="utf-8") as f:
            json.dump(rec, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
