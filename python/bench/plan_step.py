"""Planning cost per decode step from Python, binding included (median of many calls).

    python python/bench/plan_step.py [--runs N] [--gpu NAME]

The batch: 256 requests in a vLLM-style block table (block size 16) sharing one 2048-token
prompt, 16 second-level prefixes of 512 tokens and 120 tokens of their own (the
B=[1,16,256] L=[2048,512,128] shape of `anvil bench plan`). For every scheduler but `auto`:
  fresh   anvil.plan(anvil.block_table(table, kv_lens), scheduler): tree built and planned;
  reuse   Planner.step on a step whose tokens grew inside each request's last block.
Then the reuse rate of a 1,000-step decode trace (one token per request per step), with the
requests' own lengths equal (they cross block boundaries together) and staggered."""
import argparse
import statistics
import time

import numpy as np

import anvil
from anvil.decode import DecodeBatch


def median_us(fn, runs):
    fn()
    t = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        fn()
        t.append(time.perf_counter_ns() - t0)
    return statistics.median(t) / 1e3


def reuse_steps(planner, batch, runs):
    """Median of steps that reuse: tokens grow by one inside the last block, then the
    step that fills it is replaced by a fresh plan outside the timing."""
    t = []
    while len(t) < runs:
        lens0 = batch.kv_lens.copy()
        planner.step(batch.table, lens0)
        bs = batch.block_size
        room = int((bs - lens0 % bs).min()) % bs      # tokens every request can still take
        for k in range(1, room + 1):
            lens = lens0 + k
            t0 = time.perf_counter_ns()
            reused = planner.step(batch.table, lens)
            t.append(time.perf_counter_ns() - t0)
            assert reused
    return statistics.median(t) / 1e3


def trace_reuse(scheduler, gpu, staggered, steps=1000):
    own = 120 + (np.arange(256) % 16 if staggered else 0)
    b = DecodeBatch(256, own=own)
    pl = anvil.Planner(scheduler, gpu=gpu)
    for _ in range(steps):
        pl.step(b.table, b.kv_lens)
        b.step()
    planned, reused = pl.counts
    return reused / (planned + reused)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=201)
    ap.add_argument("--gpu", default="H200-SXM")
    a = ap.parse_args()
    b = DecodeBatch(256, own=120)
    # Lengths whose last block has room to grow: 2048 + 512 + 120 = 2680 = 167 blocks + 8.
    print(f"# anvil {anvil.__version__}, gpu {a.gpu}, 256 requests, block size 16, "
          f"{int(np.ceil(b.kv_lens / 16).sum())} block ids, median of {a.runs} calls (us)")
    print(f"{'scheduler':<18}{'fresh_us':>10}{'reuse_us':>10}")
    worst = [0.0, 0.0]
    for s in anvil.schedulers():
        if s == "auto":
            continue
        fresh = median_us(lambda: anvil.plan(anvil.block_table(b.table, b.kv_lens), s, gpu=a.gpu),
                          a.runs)
        reuse = reuse_steps(anvil.Planner(s, gpu=a.gpu), DecodeBatch(256, own=120), a.runs)
        worst = [max(worst[0], fresh), max(worst[1], reuse)]
        print(f"{s:<18}{fresh:>10.1f}{reuse:>10.1f}")
    print(f"fresh_us_max={worst[0]:.1f} reuse_us_max={worst[1]:.1f}")
    for staggered in (False, True):
        rate = trace_reuse("profit_pack", a.gpu, staggered)
        label = "staggered own lengths" if staggered else "equal own lengths"
        print(f"reuse rate, 1000 decode steps, profit_pack, {label}: {100 * rate:.1f}%")


if __name__ == "__main__":
    main()
