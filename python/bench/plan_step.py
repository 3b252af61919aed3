"""Planning cost per decode step from Python, binding included (median of many calls).

    python python/bench/plan_step.py [--runs N] [--gpu NAME]

The batch: 256 requests in a vLLM-style block table (block size 16) sharing one 2048-token
prompt, 16 second-level prefixes of 512 tokens and 120 tokens of their own (the
B=[1,16,256] L=[2048,512,128] shape of `anvil bench plan`). For every scheduler but `auto`:
  oneshot  anvil.plan(anvil.block_table(table, kv_lens), scheduler): tree built and planned;
  step     Planner.step on a step whose block table changed (one request's last block id):
           tree built and planned anew, in the planner's kept buffers;
  reuse    Planner.step on a step whose tokens grew inside each request's last block.
Then the reuse rate of a 1,000-step decode trace (one token per request per step), with the
requests' own lengths equal (they cross block boundaries together) and staggered."""
import argparse
import statistics
import time

import numpy as np

import anvil
from anvil.decode import DecodeBatch


# CPU time of this thread (what the call costs, not the time other jobs on a shared machine
# take the core away), as `anvil bench sim` reports; --wall for wall-clock time.
clock = time.thread_time_ns


def median_us(fn, runs):
    fn()
    t = []
    for _ in range(runs):
        t0 = clock()
        fn()
        t.append(clock() - t0)
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
            t0 = clock()
            reused = planner.step(batch.table, lens)
            t.append(clock() - t0)
            assert reused
    return statistics.median(t) / 1e3


def changed_steps(planner, batch, runs):
    """Median of steps that plan anew: request 0's last block id alternates."""
    tables = [batch.table.copy(), batch.table.copy()]
    col = int(-(-int(batch.kv_lens[0]) // batch.block_size)) - 1
    tables[1][0, col] = batch.next_id
    planner.step(tables[1], batch.kv_lens)
    t = []
    for i in range(runs):
        t0 = clock()
        reused = planner.step(tables[i % 2], batch.kv_lens)
        t.append(clock() - t0)
        assert not reused
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
    ap.add_argument("--wall", action="store_true", help="time wall clock, not thread CPU time")
    a = ap.parse_args()
    global clock
    if a.wall:
        clock = time.perf_counter_ns
    b = DecodeBatch(256, own=120)
    # Lengths whose last block has room to grow: 2048 + 512 + 120 = 2680 = 167 blocks + 8.
    print(f"# anvil {anvil.__version__}, gpu {a.gpu}, 256 requests, block size 16, "
          f"{int(np.ceil(b.kv_lens / 16).sum())} block ids, median of {a.runs} calls (us, "
          f"{'wall clock' if a.wall else 'thread CPU time'}, no allocator setting)")
    print(f"{'scheduler':<18}{'oneshot_us':>11}{'step_us':>9}{'reuse_us':>10}")
    worst = [0.0, 0.0, 0.0]
    for s in anvil.schedulers():
        if s == "auto":
            continue
        one = median_us(lambda: anvil.plan(anvil.block_table(b.table, b.kv_lens), s, gpu=a.gpu),
                        a.runs)
        step = changed_steps(anvil.Planner(s, gpu=a.gpu), b, a.runs)
        reuse = reuse_steps(anvil.Planner(s, gpu=a.gpu), DecodeBatch(256, own=120), a.runs)
        worst = [max(worst[0], one), max(worst[1], step), max(worst[2], reuse)]
        print(f"{s:<18}{one:>11.1f}{step:>9.1f}{reuse:>10.1f}")
    print(f"oneshot_us_max={worst[0]:.1f} step_us_max={worst[1]:.1f} reuse_us_max={worst[2]:.1f}")
    for staggered in (False, True):
        rate = trace_reuse("profit_pack", a.gpu, staggered)
        label = "staggered own lengths" if staggered else "equal own lengths"
        print(f"reuse rate, 1000 decode steps, profit_pack, {label}: {100 * rate:.1f}%")


if __name__ == "__main__":
    main()
