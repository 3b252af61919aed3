"""Replays a JSONL decode trace (one block-table batch per line, as `anvil trace` reads it)
step by step through a planner that reuses its plan while only the requests' last blocks
fill up (PAT §5.1 lazy update), simulating every step.

    python examples/replay_trace.py [TRACE.jsonl] [--scheduler profit_pack] [--gpu H200-SXM]

Without a trace it writes one first (decode.jsonl: 64 requests under a shared prompt, one
token each per step, 200 steps); `anvil trace decode.jsonl -s profit_pack` replays the same
file and reports the same planned/reused counts.
"""
import argparse
import json

import numpy as np

import anvil
from anvil.decode import DecodeBatch


def table_of(spec):
    """A {"kind": "block_table"} spec as the arrays a serving engine holds."""
    bs = spec["block_size"]
    reqs = [r if isinstance(r, dict) else {"blocks": r} for r in spec["requests"]]
    width = max(len(r["blocks"]) for r in reqs)
    table = np.full((len(reqs), width), -1, dtype=np.int32)
    kv = np.empty(len(reqs), dtype=np.int32)
    for i, r in enumerate(reqs):
        n = len(r["blocks"])
        table[i, :n] = r["blocks"]
        kv[i] = (n - 1) * bs + (r.get("last_block_tokens") or bs)
    return table, kv, bs


def write_trace(path, steps=200, requests=64):
    b = DecodeBatch(requests, levels=(1024,), fanout=(1,), own=100)
    with open(path, "w") as f:
        for _ in range(steps):
            f.write(b.jsonl_line() + "\n")
            b.step()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", nargs="?")
    ap.add_argument("--scheduler", default="profit_pack")
    ap.add_argument("--gpu", default="H200-SXM")
    a = ap.parse_args()
    if a.trace is None:
        a.trace = "decode.jsonl"
        write_trace(a.trace)
        print(f"wrote {a.trace}")
    planner = None
    total_us = 0.0
    with open(a.trace) as f:
        for step, line in enumerate(f):
            table, kv, bs = table_of(json.loads(line))
            if planner is None:
                planner = anvil.Planner(a.scheduler, gpu=a.gpu, block_size=bs)
            reused = planner.step(table, kv)
            r = anvil.simulate(planner.current(), gpu=a.gpu)
            total_us += r.predicted_us
            if step % 20 == 0 or not reused:
                print(f"step {step:4d}: {len(kv)} requests, "
                      f"{'reused ' if reused else 'planned'}  {r.predicted_us:8.2f} us")
    planned, reused = planner.counts
    print(f"steps={planned + reused} planned={planned} reused={reused} "
          f"reuse_rate={planner.reuse_rate:.3f} total_predicted_us={total_us:.1f}")


if __name__ == "__main__":
    main()
