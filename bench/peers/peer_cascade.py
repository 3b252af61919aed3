#!/usr/bin/env python3
"""FlashInfer's shared-prefix (cascade) attention as a peer (docs/kernels.md#peers): the
prefix-aware attention of a serving engine, on the explicit workloads of an anvil experiment.

FlashInfer's `MultiLevelCascadeAttentionWrapper` (FlashInfer §3.1, its composable formats)
runs one batch-prefill pass per level of a paged KV cache and merges each level's partial
state into the next with the log-sum-exp composition. A tree becomes levels as follows:

- the KV of every node is stored once, in pages of --page-size tokens (node boundaries on page
  boundaries), so a shared prefix is read once per level entry, not once per request;
- requests are ordered depth-first, so the requests under a node are contiguous;
- level i (i < L - 1, L the longest path) has one entry per node at depth i whose requests go
  on below it: its query rows are those requests' (GQA heads fused into rows by the kernel);
- the last level has one entry per request's own last node, so every request's last level is
  not empty; a request whose path is shorter than L has empty entries (no pages) on the levels
  between, whose output FlashInfer writes as zero with log-sum-exp -inf.

A node where one request ends and others go on is read on both levels (the wrapper's levels
are fixed per request).

The wrapper runs batch prefill on every level with the backend FlashInfer picks for the GPU;
a level whose entries each have one query row is a decode batch, which FlashInfer's decode
wrapper serves with split KV. So each batch runs in every configuration of --kinds, the same
levels and merges: `cascade` (the library's wrapper as it is), `prefill-fa2` (batch prefill
on FlashAttention-2's backend on every level), `decode` and `decode-tc` (the decode wrapper on
CUDA cores / tensor cores on the one-row levels). The fastest configuration whose output is
within --tolerance of an fp32 reference (computed request by request from the same cache) is
the peer, as the fastest SDPA backend is. Timing is that of the other peers
(bench/peers/peer_sdpa.py): CUDA events around `run`, warm-up, median of --repeats, L2
overwritten before every run; planning runs once, untimed, as an engine plans once per decode
step for every layer. A configuration that fails keeps its error; a batch with none that runs
keeps the errors in its row, and the other batches still run.

With --graphs every configuration that matches the reference is also captured as one CUDA
graph (FlashInfer's runs of every level and the merges) and its replay timed the same way,
as a serving engine replays a captured decode step; the replay's output is checked too.

usage: peer_cascade.py EXPERIMENT.json [--only NAME] [--page-size 16] [--kinds K,K]
                       [--graphs] --out FILE
"""
import argparse
import json
import math
import sys

import torch

from cascade_levels import levels, paths  # the tree as FlashInfer's cascade levels
from peer_sdpa import l2_flush_buffer, write_report
from peer_sdpa import timed_us as timed  # the same timing as the SDPA peer

WORKSPACE_BYTES = 256 << 20


def trees(exp, only):
    """(name, heads, parents, kv lengths, request nodes) of the experiment's explicit specs."""
    heads_default = exp.get("heads") or [[32, 8]]
    for w in exp["workloads"]:
        name = w.get("name", w.get("kind"))
        if w.get("kind") != "explicit" or (only and only not in name):
            continue
        parents = [int(n["parent"]) for n in w["nodes"]]
        lens = [int(n["kv_len"]) for n in w["nodes"]]
        for h in ([w["heads"]] if "heads" in w else heads_default):
            yield name, (int(h[0]), int(h[1])), parents, lens, [int(r) for r in w["requests"]]


def reference(q, cache, parents, lens, requests, order, first, page_size):
    """fp32 attention of every request over its path's tokens, in the cascade's row order."""
    hq, d = q.shape[1], q.shape[2]
    hkv = cache.shape[3]
    flat_k = cache[:, 0].reshape(-1, hkv, d)
    flat_v = cache[:, 1].reshape(-1, hkv, d)
    ps = paths(parents, requests)
    out = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    for row, r in enumerate(order):
        tok = torch.cat([torch.arange(first[n] * page_size, first[n] * page_size + lens[n],
                                      device=q.device) for n in ps[r]])
        k, v = flat_k[tok].float(), flat_v[tok].float()  # [T, hkv, d]
        qg = q[row].float().view(hkv, hq // hkv, d)  # query head h reads KV head h // group
        s = torch.einsum("kgd,tkd->kgt", qg, k) / math.sqrt(d)
        out[row] = torch.einsum("kgt,tkd->kgd", torch.softmax(s, dim=-1), v).reshape(hq, d)
    return out


class Levels:
    """One decode step of a cascade whose levels each run a FlashInfer wrapper of the given
    kind, planned once: "prefill-fa2" / "prefill-fa3" (BatchPrefillWithPagedKVCacheWrapper on
    that backend) on every level, or "decode" / "decode-tc" (BatchDecodeWithPagedKVCacheWrapper,
    CUDA cores / tensor cores) on the levels where every entry has one query row and some KV,
    FlashAttention-3 prefill on the others. `run` is MultiLevelCascadeAttentionWrapper.run:
    the last level, then every other level merged into it with merge_state_in_place."""

    def __init__(self, fi, lv, hq, hkv, d, page_size, dtype, work, kind):
        self.fi, self.steps = fi, []
        i32 = dict(dtype=torch.int32, device="cuda")
        for qo, kv, idx, last in lv:
            t = [torch.tensor(x, **i32) for x in (qo, kv, idx, last)]
            one_row = all(b - a == 1 for a, b in zip(qo, qo[1:])) and min(last) > 0
            if kind.startswith("decode") and one_row:
                w = fi.BatchDecodeWithPagedKVCacheWrapper(work, "NHD",
                                                          use_tensor_cores=kind == "decode-tc")
                w.plan(t[1], t[2], t[3], hq, hkv, d, page_size, q_data_type=dtype)
            else:
                backend = "fa2" if kind == "prefill-fa2" else "fa3"
                w = fi.BatchPrefillWithPagedKVCacheWrapper(work, "NHD", backend=backend)
                w.plan(t[0], t[1], t[2], t[3], hq, hkv, d, page_size, q_data_type=dtype)
            self.steps.append(w)

    def run(self, q, cache):
        out, lse = self.steps[-1].run(q, cache, return_lse=True)
        for w in self.steps[:-1]:
            o, s = w.run(q, cache, return_lse=True)
            self.fi.merge_state_in_place(out, lse, o, s)
        return out


KINDS = ("cascade", "prefill-fa2", "decode", "decode-tc")  # timed by default
VALID_KINDS = KINDS + ("prefill-fa3",)  # the wrapper's own choice on Hopper, by Levels


def run_batch(fi, hq, hkv, parents, lens, requests, d, dtype, flush, a):
    """Every FlashInfer configuration of --kinds on one batch: its time, or why it could not
    run, and whether its output matches the reference; the fastest correct one is the peer."""
    order, n_pages, first, lv = levels(parents, lens, requests, a.page_size)
    g = torch.Generator(device="cuda").manual_seed(1)
    cache = torch.rand(n_pages, 2, a.page_size, hkv, d, device="cuda", dtype=dtype,
                       generator=g) * 2 - 1
    q = torch.rand(len(requests), hq, d, device="cuda", dtype=dtype, generator=g) * 2 - 1
    ref = reference(q, cache, parents, lens, requests, order, first, a.page_size)
    work = torch.empty(WORKSPACE_BYTES, dtype=torch.uint8, device="cuda")
    row = {"requests": len(requests), "levels": len(lv), "entries": [len(x[0]) - 1 for x in lv],
           "cached_kv_GB": 2 * n_pages * a.page_size * hkv * d * q.element_size() / 1e9,
           "per_kind": {}}
    for kind in a.kinds.split(","):
        try:
            if kind == "cascade":  # the library's own wrapper, its backend chosen by itself
                w = fi.MultiLevelCascadeAttentionWrapper(len(lv), work, "NHD")
                i32 = dict(dtype=torch.int32, device="cuda")
                w.plan(*[[torch.tensor(x[j], **i32) for x in lv] for j in range(4)],
                       hq, hkv, d, a.page_size, q_data_type=dtype)
                row["cascade_backend"] = getattr(w._batch_prefill_wrappers[0], "_backend", "")
            else:
                w = Levels(fi, lv, hq, hkv, d, a.page_size, dtype, work, kind)
            diff = float((w.run(q, cache).float() - ref).abs().max())
            k = {"max_abs_diff": diff}
            if diff <= a.tolerance:
                k["us"] = timed(lambda: w.run(q, cache), flush, a.warmup, a.repeats)
                if a.graphs:
                    k.update(time_graph(lambda: w.run(q, cache), ref, flush, a))
            else:
                k["error"] = "output differs from the reference by %.3g" % diff
        except (RuntimeError, ValueError, NotImplementedError, torch.cuda.OutOfMemoryError) as e:
            torch.cuda.synchronize()
            k = {"error": str(e).splitlines()[0][:300] if str(e) else type(e).__name__}
        row["per_kind"][kind] = k
    ok = {kind: k for kind, k in row["per_kind"].items() if "us" in k}
    if not ok:
        raise RuntimeError("no FlashInfer configuration ran: " + "; ".join(
            "%s: %s" % (kind, k["error"]) for kind, k in row["per_kind"].items()))
    best = min(ok, key=lambda kind: ok[kind]["us"])
    row.update({"cascade_us": ok[best]["us"], "kind": best,
                "max_abs_diff": ok[best]["max_abs_diff"]})
    graphed = {kind: k for kind, k in ok.items() if "graph_us" in k}
    if graphed:
        best = min(graphed, key=lambda kind: graphed[kind]["graph_us"])
        row.update({"cascade_graph_us": graphed[best]["graph_us"], "graph_kind": best})
    return row


def time_graph(run, ref, flush, a):
    """One configuration's `run` captured as a CUDA graph and replayed, as an engine replays a
    decode step's captured launches: its time and its output's difference from the reference,
    or why it could not be captured."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    try:
        with torch.cuda.stream(side):  # capture needs the lazy initialisations done
            for _ in range(2):
                run()
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            out = run()
        g.replay()
        diff = float((out.float() - ref).abs().max())
    except (RuntimeError, ValueError, NotImplementedError, torch.cuda.OutOfMemoryError) as e:
        torch.cuda.synchronize()
        return {"graph_error": str(e).splitlines()[0][:300] if str(e) else type(e).__name__}
    if diff > a.tolerance:
        return {"graph_error": "replayed output differs from the reference by %.3g" % diff}
    return {"graph_us": timed(g.replay, flush, a.warmup, a.repeats),
            "graph_max_abs_diff": diff}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("experiment")
    ap.add_argument("--only", help="batches whose name contains this")
    ap.add_argument("--page-size", type=int, default=16)
    ap.add_argument("--kinds", default=",".join(KINDS),
                    help="FlashInfer configurations to time, the fastest kept (default: all)")
    ap.add_argument("--tolerance", type=float, default=2e-2,
                    help="largest absolute difference from the fp32 reference accepted")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--graphs", action="store_true",
                    help="also capture each correct configuration as a CUDA graph and time "
                         "its replay (graph_us; the fastest is cascade_graph_us)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    unknown = [k for k in a.kinds.split(",") if k not in VALID_KINDS]
    if unknown:
        ap.error("--kinds: unknown configuration %s; expected a comma-separated list of %s"
                 % (", ".join(repr(k) for k in unknown), ", ".join(VALID_KINDS)))
    try:
        import flashinfer as fi
    except ImportError as e:
        print("peer_cascade: FlashInfer is not importable here (%s); install flashinfer-python "
              "(docs/kernels.md#peers)" % e, file=sys.stderr)
        return 2
    with open(a.experiment) as f:
        exp = json.load(f)
    d = int(exp.get("head_dim", 128))
    dtype = torch.bfloat16 if exp.get("dtype") == "bf16" else torch.float16
    flush = l2_flush_buffer()
    gpu = torch.cuda.get_device_name(0)
    print("gpu %s, torch %s, flashinfer %s" % (gpu, torch.__version__, fi.__version__),
          flush=True)
    rows = []
    for name, (hq, hkv), parents, lens, requests in trees(exp, a.only):
        row = {"batch": name, "heads": [hq, hkv]}
        try:
            row.update(run_batch(fi, hq, hkv, parents, lens, requests, d, dtype, flush, a))
        except (RuntimeError, ValueError, torch.cuda.OutOfMemoryError) as e:
            torch.cuda.synchronize()
            row["error"] = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
        torch.cuda.empty_cache()
        print("%-22s %-6s %s" % (name, "%d/%d" % (hq, hkv), "%.1f us (%s), %d levels, diff %.1e; %s"
              % (row["cascade_us"], row["kind"], row["levels"], row["max_abs_diff"], ", ".join(
                  "%s %s" % (kind, "%.1f" % k["us"] if "us" in k else "failed")
                  for kind, k in row["per_kind"].items()))
            + ("; graph %.1f us (%s)" % (row["cascade_graph_us"], row["graph_kind"])
               if "cascade_graph_us" in row else "") if "cascade_us" in row
            else "(" + row["error"] + ")"), flush=True)
        rows.append(row)
    doc = {"gpu": gpu, "torch": torch.__version__, "flashinfer": fi.__version__,
           "experiment": a.experiment, "page_size": a.page_size,
           "kinds": a.kinds.split(","),
           "method": "each configuration's run timed with CUDA events, %d warm-up, median of "
                     "%d, L2 flushed (2x L2 write) before each run; plan untimed; the fastest "
                     "configuration whose output is within %g of the fp32 reference is the "
                     "peer" % (a.warmup, a.repeats, a.tolerance)
                     + ("; with --graphs each correct configuration is also captured as one "
                        "CUDA graph and its replay timed the same way" if a.graphs else ""),
           "graphs": a.graphs, "rows": rows}
    write_report(a.out, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
