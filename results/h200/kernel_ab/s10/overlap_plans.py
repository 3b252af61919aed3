#!/usr/bin/env python3
"""Session 10: hand-made prefix16k plans that put the leaves' launch beside the root's, so
the memory-bound leaf CTAs share each SM with the compute-bound root CTAs (issue 5, 70 %
target). Reads a fixed_division plan of the batch (for its workload and hash) and writes
variants: root pieces as one grid launch of m64 tiles (stream 0, launched first), leaves as a
persistent launch of m16 tiles with C CTAs per KV head (stream 1).
Usage: overlap_plans.py BASE.json OUTDIR [NAME,NAME...]"""
import json
import sys


def make(base, k, leaf_n, leaf_ctas, root_first=True, root_persist=0, root_m=64):
    w = base["workload"]
    nodes = w["nodes"]
    reqs = w["requests"]
    root_len = nodes[0]["kv_len"]
    n_req = len(reqs)
    items = []
    rl, ll = (0, 1) if root_first else (1, 0)
    piece = -(-root_len // k)
    piece = -(-piece // w["block_size"]) * w["block_size"]
    qb = 0
    ri = 0
    while qb < n_req:
        q = list(range(qb, min(qb + root_m // 4, n_req)))
        for p in range(k):
            s, e = p * piece, min(root_len, (p + 1) * piece)
            if s >= e:
                continue
            it = {"launch": rl, "queries": q, "segments": [[0, s, e]], "output": "partial",
                  "cta": -1, "order": -1}
            if root_persist:
                it["cta"], it["order"] = ri % root_persist, ri // root_persist
            items.append(it)
            ri += 1
        qb += root_m // 4
    for r in range(n_req):
        leaf = reqs[r]  # a request is its leaf node
        items.append({"launch": ll, "queries": [r], "segments": [[leaf, 0, nodes[leaf]["kv_len"]]],
                      "output": "partial", "cta": r % leaf_ctas, "order": r // leaf_ctas})
    root_l = {"stream": 0, "kind": "persistent" if root_persist else "partial", "m": root_m,
              "n": 64, "warps": root_m // 16, "persistent_ctas": root_persist}
    leaf_l = {"stream": 1, "kind": "persistent", "m": 16, "n": leaf_n,
              "warps": {16: 1, 32: 2}.get(leaf_n, 4), "persistent_ctas": leaf_ctas}
    launches = [root_l, leaf_l] if root_first else [leaf_l, root_l]
    out = {k2: base[k2] for k2 in ("format", "workload", "workload_hash")}
    out["scheduler"] = "fixed_division"
    out["params"] = "hand-made: root k=%d grid m64n64 + leaves persistent m16n%d x %d" % (
        k, leaf_n, leaf_ctas)
    out["launches"] = launches
    out["items"] = items
    return out


def main():
    base = json.load(open(sys.argv[1]))
    outdir = sys.argv[2]
    configs = [
        ("k4_l64x16", dict(k=4, leaf_n=64, leaf_ctas=16)),
        ("k4_l32x16", dict(k=4, leaf_n=32, leaf_ctas=16)),
        ("k4_l32x33", dict(k=4, leaf_n=32, leaf_ctas=33)),
        ("k3_l64x16", dict(k=3, leaf_n=64, leaf_ctas=16)),
        ("k4_l64x16_leaffirst", dict(k=4, leaf_n=64, leaf_ctas=16, root_first=False)),
        ("k4_l64x33", dict(k=4, leaf_n=64, leaf_ctas=33)),
        ("k5_l64x16", dict(k=5, leaf_n=64, leaf_ctas=16)),
        ("k4_l32x33_leaffirst", dict(k=4, leaf_n=32, leaf_ctas=33, root_first=False)),
        ("k4p_l32x33", dict(k=4, leaf_n=32, leaf_ctas=33, root_persist=32)),
        ("k4_l16x33", dict(k=4, leaf_n=16, leaf_ctas=33)),
        ("k4_l16x49", dict(k=4, leaf_n=16, leaf_ctas=49)),
        ("k4_l16x66", dict(k=4, leaf_n=16, leaf_ctas=66)),
        ("m128k4_l64x16", dict(k=4, leaf_n=64, leaf_ctas=16, root_m=128)),
        ("m128k8_l64x16", dict(k=8, leaf_n=64, leaf_ctas=16, root_m=128)),
        ("m128k4_l32x33", dict(k=4, leaf_n=32, leaf_ctas=33, root_m=128)),
    ]
    if len(sys.argv) > 3:
        configs = [c for c in configs if c[0] in sys.argv[3].split(",")]
    for name, cfg in configs:
        with open("%s/%s.json" % (outdir, name), "w") as f:
            json.dump(make(base, **cfg), f)
        print(name)


if __name__ == "__main__":
    main()
