"""Held-out validation batches of realistic shape, for any GPU (docs/validation.md#held-out-sets).

  python3 analysis/heldout.py GPU PROFILE [-o EXP.json] [--per-family N] [--salt TEXT]

Writes an `anvil validate` experiment for GPU (a spec name, e.g. H100-SXM) whose batches are
drawn from the families of decode batches serving systems see:

  conversation  multi-turn chats under a 3-level system prompt (base prompt, persona, history)
  agents        tool agents: several first-level tool prefixes, each with its own requests
  docqa         questions over one 20k-120k-token document
  thoughts      a tree of thoughts: a prompt, then a k-ary tree of reasoning steps
  speculative   speculative-decoding candidates: per sequence, a token tree on its context
  skew          no sharing, heavily skewed lengths (log-normal)
  chain         a degenerate chain: every level's first node branches, the others end

each at heads 32/8, 32/32 or 64/8 (rotating), d 128, fp16, with the schedulers of
experiments/validate_pat.json. The seeds are SHA-256 chains over the profile file and the GPU
name (and --salt, when given), so they exist only once the profile does and anyone can
re-derive them; nothing can be tuned on them before they are drawn. A new set on an unchanged
profile takes a salt fixed before it is drawn: the commit of the model, executor and kernels
it is to measure (docs/validation.md#held-out-sets). Every batch is written as an `explicit` workload, so the
experiment does not depend on this script's code staying the same.
"""
import argparse
import hashlib
import json
import math
import random
import sys

HEADS = [[32, 8], [32, 32], [64, 8]]
FAMILIES = ["conversation", "agents", "docqa", "thoughts", "speculative", "skew", "chain"]


class Tree:
    """A forest as the explicit workload kind holds it: nodes (parent, kv_len) and, per
    request, the node its KV path ends at."""

    def __init__(self):
        self.nodes, self.requests = [], []

    def node(self, parent, kv_len):
        self.nodes.append({"parent": parent, "kv_len": max(1, int(kv_len))})
        return len(self.nodes) - 1

    def leaves(self, first=0):
        """The nodes from `first` on that no node has as its parent."""
        parents = {n["parent"] for n in self.nodes}
        return [i for i in range(first, len(self.nodes)) if i not in parents]

    def spec(self, name, heads):
        return {"kind": "explicit", "name": name, "heads": heads,
                "nodes": self.nodes, "requests": self.requests}


def log_uniform(rng, lo, hi):
    return int(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def conversation(rng):
    t = Tree()
    base = t.node(-1, log_uniform(rng, 1000, 4000))
    for _ in range(rng.randint(2, 4)):
        persona = t.node(base, log_uniform(rng, 200, 1000))
        for _ in range(rng.randint(4, 32)):
            t.requests.append(t.node(persona, log_uniform(rng, 500, 8000)))
    return t


def agents(rng):
    t = Tree()
    for _ in range(rng.randint(2, 6)):
        tools = t.node(-1, log_uniform(rng, 2000, 8000))
        for _ in range(rng.randint(8, 48)):
            t.requests.append(t.node(tools, log_uniform(rng, 100, 2000)))
    return t


def docqa(rng):
    t = Tree()
    doc = t.node(-1, log_uniform(rng, 20000, 120000))
    for _ in range(rng.randint(16, 128)):
        t.requests.append(t.node(doc, log_uniform(rng, 20, 300)))
    return t


def thoughts(rng):
    t = Tree()
    level = [t.node(-1, log_uniform(rng, 500, 2000))]
    arity, depth = rng.randint(2, 4), rng.randint(3, 5)
    while arity ** depth > 256:
        depth -= 1
    for _ in range(depth):
        level = [t.node(p, log_uniform(rng, 64, 512)) for p in level for _ in range(arity)]
    t.requests = level
    return t


def speculative(rng):
    t = Tree()
    for _ in range(rng.randint(4, 16)):
        first = len(t.nodes)
        frontier = [t.node(-1, log_uniform(rng, 1000, 16000))]
        for _ in range(rng.randint(3, 6)):
            nxt = []
            for p in frontier:
                for _ in range(rng.randint(1, 3)):
                    if len(nxt) < 16:
                        nxt.append(t.node(p, rng.randint(1, 4)))
            frontier = nxt
        t.requests += t.leaves(first)
    return t


def skew(rng):
    t = Tree()
    for _ in range(rng.randint(16, 256)):
        n = int(min(32768, max(64, rng.lognormvariate(math.log(1500), 1.2))))
        t.requests.append(t.node(-1, n))
    return t


def chain(rng):
    t = Tree()
    spine = t.node(-1, log_uniform(rng, 1000, 8000))
    for _ in range(rng.randint(6, 16)):
        for _ in range(rng.randint(1, 7)):
            t.requests.append(t.node(spine, log_uniform(rng, 64, 1024)))
        spine = t.node(spine, log_uniform(rng, 256, 2048))
    t.requests.append(spine)
    return t


def seeds(profile, gpu, n, salt=""):
    """n 32-bit seeds from SHA-256 chained over the profile file, the GPU name and the salt."""
    with open(profile, "rb") as f:
        h = hashlib.sha256(f.read() + gpu.encode() + salt.encode()).digest()
    out = []
    while len(out) < n:
        out += [int.from_bytes(h[i:i + 4], "little") for i in range(0, 32, 4)]
        h = hashlib.sha256(h).digest()
    return out[:n]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("gpu", help="GPU spec name, e.g. H100-SXM")
    ap.add_argument("profile", help="the GPU's committed profile file (seeds come from it)")
    ap.add_argument("--per-family", type=int, default=3)
    ap.add_argument("--template", default="experiments/validate_pat.json",
                    help="experiment whose scheduler list is reused")
    ap.add_argument("--salt", default="",
                    help="text chained into the seeds (a new set on an unchanged profile)")
    ap.add_argument("-o", "--output", default="-")
    a = ap.parse_args()
    try:
        with open(a.template) as f:
            schedulers = json.load(f)["schedulers"]
        with open(a.profile, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        drawn = seeds(a.profile, a.gpu, len(FAMILIES) * a.per_family, a.salt)
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"heldout.py: {e}")
    salt = f" --salt {a.salt}" if a.salt else ""
    workloads = []
    for i, s in enumerate(drawn):
        fam = FAMILIES[i // a.per_family]
        tree = globals()[fam](random.Random(s))
        workloads.append(tree.spec(f"{fam}-{s % 1000000}", HEADS[i % len(HEADS)]))
    exp = {
        "name": f"heldout-{a.gpu}",
        "description": (f"Held-out realistic batches for {a.gpu}: {a.per_family} per family of "
                        f"{', '.join(FAMILIES)}; seeds from `python3 analysis/heldout.py "
                        f"{a.gpu} {a.profile}{salt}` (profile SHA-256 {digest[:16]}...)."),
        "gpu": a.gpu, "sim": "engine", "head_dim": 128, "dtype": "fp16",
        "cost_model": {"name": "profile"},
        "workloads": workloads, "schedulers": schedulers,
    }
    text = json.dumps(exp, indent=1) + "\n"
    if a.output == "-":
        sys.stdout.write(text)
    else:
        with open(a.output, "w") as f:
            f.write(text)
        sizes = [len(w["requests"]) for w in workloads]
        print(f"{a.output}: {len(workloads)} batches, {min(sizes)}-{max(sizes)} requests")


if __name__ == "__main__":
    main()
