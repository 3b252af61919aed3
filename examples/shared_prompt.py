"""A shared-system-prompt decode batch as vLLM holds it (a block table), planned by every
scheduler, simulated on the H100 and H200 specs, and plotted against the bandwidth floor.

    python examples/shared_prompt.py [--requests 128] [--prompt 4096] [--out shared_prompt.png]
"""
import argparse

import matplotlib
import numpy as np

import anvil

matplotlib.use("Agg")  # files only: runs the same on a desktop, a server and CI
import matplotlib.pyplot as plt  # noqa: E402


def shared_prompt_table(requests, prompt_tokens, own_tokens, block_size):
    """Every request's row starts with the system prompt's blocks (the same physical ids,
    as vLLM's prefix caching shares them), then blocks of its own."""
    prompt_blocks = prompt_tokens // block_size
    own_blocks = -(-own_tokens // block_size)
    table = np.empty((requests, prompt_blocks + own_blocks), dtype=np.int32)
    table[:, :prompt_blocks] = np.arange(prompt_blocks)
    table[:, prompt_blocks:] = prompt_blocks + np.arange(requests * own_blocks).reshape(
        requests, own_blocks)
    kv_lens = np.full(requests, prompt_tokens + own_tokens, dtype=np.int32)
    return table, kv_lens


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=128)
    ap.add_argument("--prompt", type=int, default=4096, help="system prompt tokens")
    ap.add_argument("--own", type=int, default=300, help="tokens of each request's own")
    ap.add_argument("--block-size", type=int, default=16)
    ap.add_argument("--out", default="shared_prompt.png")
    a = ap.parse_args()
    table, kv_lens = shared_prompt_table(a.requests, a.prompt, a.own, a.block_size)
    batch = anvil.block_table(table, kv_lens, block_size=a.block_size)
    print(batch)
    gpus = ["H100-SXM", "H200-SXM"]
    scheds = anvil.schedulers()
    pred = np.zeros((len(gpus), len(scheds)))
    floor = np.zeros(len(gpus))
    for g, gpu in enumerate(gpus):
        for s, name in enumerate(scheds):
            plan = anvil.plan(batch, name, gpu=gpu)
            plan.check()
            r = anvil.simulate(plan, gpu=gpu)
            pred[g, s], floor[g] = r.predicted_us, r.floor_us
            print(f"{gpu:<9} {name:<16} {len(plan.items):5d} items  {r.predicted_us:8.1f} us"
                  f"  ({r.ratio_to_floor:.2f}x the floor)")
    fig, ax = plt.subplots(figsize=(8, 4))
    x = np.arange(len(scheds))
    for g, gpu in enumerate(gpus):
        ax.bar(x + 0.4 * g - 0.2, pred[g], 0.4, label=f"{gpu} predicted")
        ax.axhline(floor[g], ls="--", color=f"C{g}", lw=1, label=f"{gpu} floor")
    ax.set_xticks(x, scheds, rotation=30, ha="right")
    ax.set_ylabel("attention time (us)")
    ax.set_title(f"{a.requests} requests sharing a {a.prompt}-token prompt")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)
    print(f"figure: {a.out}")


if __name__ == "__main__":
    main()
