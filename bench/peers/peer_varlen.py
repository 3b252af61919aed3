#!/usr/bin/env python3
"""Variable-length peers (docs/kernels.md#peers): the attention a serving engine without
prefix-aware kernels runs today on decode batches whose requests have paths of different
lengths, on the explicit and levels workloads of an anvil experiment file.

- `sdpa_split`: PyTorch's scaled_dot_product_attention has no variable-length path, so the
  batch is split into one batched call per distinct path length (the fastest fused backend
  that accepts every call), the calls timed together;
- `varlen`: FlashAttention's variable-length forward as PyTorch ships it
  (torch.nn.attention.varlen.varlen_attn, else torch.ops.aten._flash_attention_forward), one
  call over the packed KV of every request, GQA heads native when the kernel takes them.

Each request's KV is materialised (a shared prefix copied into every request's cache, as an
engine without prefix sharing holds it). The two peers' outputs are compared on every request
(max abs difference) so both compute the same attention. Timing: CUDA events, warm-up, median
of --repeats, L2 overwritten by a buffer twice its size before every timed run. A batch that
fails (too large, a kernel that refuses it) keeps its error in its row; the others still run.

usage: peer_varlen.py EXPERIMENT.json [--only NAME] [--max-gb 40] --out FILE
"""
import argparse
import json
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from peer_sdpa import l2_flush_buffer, write_report
from peer_sdpa import timed_us as timed  # the same timing as the SDPA peer

BACKENDS = [("flash", SDPBackend.FLASH_ATTENTION), ("efficient", SDPBackend.EFFICIENT_ATTENTION),
            ("cudnn", SDPBackend.CUDNN_ATTENTION)]


def batches(exp, only):
    """(name, heads, path lengths per request) of the experiment's explicit and levels specs."""
    heads_default = (exp.get("heads") or [[32, 8]])
    for w in exp["workloads"]:
        name = w.get("name", w.get("kind"))
        if only and only not in name:
            continue
        if w.get("kind") == "explicit":
            nodes = w["nodes"]
            depth = []
            for n in nodes:  # parents come before children
                depth.append(n["kv_len"] + (depth[n["parent"]] if n["parent"] >= 0 else 0))
            lengths = [depth[r] for r in w["requests"]]
        elif w.get("kind") == "levels":
            B, L = w["B"], w["L"]
            lengths = [sum(L)] * B[-1]
        else:
            continue
        for h in ([w["heads"]] if "heads" in w else heads_default):
            yield name, (int(h[0]), int(h[1])), lengths


def varlen_fn(q, k, v, cu_k, max_k):
    """The library's variable-length forward: (callable, its name)."""
    n = q.shape[0]
    cu_q = torch.arange(n + 1, dtype=torch.int32, device=q.device)
    try:
        from torch.nn.attention.varlen import varlen_attn
        return (lambda: varlen_attn(q, k, v, cu_q, cu_k, 1, max_k)), "torch.nn.attention.varlen"
    except ImportError:
        op = torch.ops.aten._flash_attention_forward
        return (lambda: op(q, k, v, cu_q, cu_k, 1, max_k, 0.0, False, False)[0]), \
            "aten._flash_attention_forward"


def run_batch(hq, hkv, lengths, d, dtype, flush, a):
    g = torch.Generator(device="cuda").manual_seed(1)
    n, total = len(lengths), sum(lengths)
    q = torch.rand(n, hq, d, device="cuda", dtype=dtype, generator=g) * 2 - 1
    k = torch.rand(total, hkv, d, device="cuda", dtype=dtype, generator=g) * 2 - 1
    v = torch.rand(total, hkv, d, device="cuda", dtype=dtype, generator=g) * 2 - 1
    offs = [0]
    for L in lengths:
        offs.append(offs[-1] + L)
    # split: requests of one length in one call, [n_L, heads, L, d] views of their packed KV
    groups = {}
    for r, L in enumerate(lengths):
        groups.setdefault(L, []).append(r)
    calls = []
    for L, rs in groups.items():
        idx = torch.tensor(rs, device="cuda")
        kk = torch.stack([k[offs[r]:offs[r] + L] for r in rs]).transpose(1, 2).contiguous()
        vv = torch.stack([v[offs[r]:offs[r] + L] for r in rs]).transpose(1, 2).contiguous()
        calls.append((idx, q[idx].unsqueeze(2), kk, vv))
    out_split = torch.empty_like(q)

    def split():
        for idx, qq, kk, vv in calls:
            out_split[idx] = F.scaled_dot_product_attention(qq, kk, vv,
                                                            enable_gqa=hq != hkv).squeeze(2)
    row = {"requests": n, "distinct_lengths": len(groups), "calls": len(calls)}
    per = {}
    for name, be in BACKENDS:
        try:
            with sdpa_kernel([be]):
                per[name] = timed(split, flush, a.warmup, a.repeats)
        except RuntimeError:
            torch.cuda.synchronize()
    if per:
        best = min(per, key=per.get)
        with sdpa_kernel([dict(BACKENDS)[best]]):
            split()
        row.update({"sdpa_split_us": per[best], "sdpa_backend": best, "sdpa_per_backend_us": per})
    cu_k = torch.tensor(offs, dtype=torch.int32, device="cuda")
    kv_expanded = False
    fn, lib = varlen_fn(q, k, v, cu_k, max(lengths))
    try:
        out = fn()
    except RuntimeError:  # a kernel without GQA heads: give it hq KV heads (more bytes)
        torch.cuda.synchronize()
        k, v = (x.repeat_interleave(hq // hkv, dim=1).contiguous() for x in (k, v))
        fn, lib = varlen_fn(q, k, v, cu_k, max(lengths))
        out = fn()
        kv_expanded = True
    row.update({"varlen_us": timed(fn, flush, a.warmup, a.repeats), "varlen": lib,
                "varlen_kv_expanded": kv_expanded})
    if per:
        row["max_abs_diff"] = float((out.float() - out_split.float()).abs().max())
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("experiment")
    ap.add_argument("--only", help="batches whose name contains this")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--max-gb", type=float, default=40.0,
                    help="skip batches whose materialised KV exceeds this")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    with open(a.experiment) as f:
        exp = json.load(f)
    d = int(exp.get("head_dim", 128))
    dtype = torch.bfloat16 if exp.get("dtype") == "bf16" else torch.float16
    flush = l2_flush_buffer()
    gpu = torch.cuda.get_device_name(0)
    print("gpu %s, torch %s" % (gpu, torch.__version__), flush=True)
    rows = []
    for name, (hq, hkv), lengths in batches(exp, a.only):
        kv_gb = 2 * sum(lengths) * hkv * d * 2 / 1e9
        row = {"batch": name, "heads": [hq, hkv], "materialised_kv_GB": kv_gb}
        if kv_gb > a.max_gb:
            row["skipped"] = "materialised KV %.1f GB > --max-gb" % kv_gb
        else:
            try:
                row.update(run_batch(hq, hkv, lengths, d, dtype, flush, a))
            except (RuntimeError, torch.cuda.OutOfMemoryError) as e:
                torch.cuda.synchronize()
                row["error"] = str(e).splitlines()[0][:300]
            torch.cuda.empty_cache()
        print("%-22s %-6s split %s us, varlen %s us%s" % (
            name, "%d/%d" % (hq, hkv), "%.1f" % row["sdpa_split_us"] if "sdpa_split_us" in row
            else "-", "%.1f" % row["varlen_us"] if "varlen_us" in row else "-",
            " (" + row.get("error", row.get("skipped", "")) + ")" if "error" in row or
            "skipped" in row else ""), flush=True)
        rows.append(row)
    doc = {"gpu": gpu, "torch": torch.__version__, "experiment": a.experiment,
           "method": "CUDA events, %d warm-up, median of %d, L2 flushed (2x L2 write) before each "
                     "run; per-request materialised KV" % (a.warmup, a.repeats), "rows": rows}
    write_report(a.out, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
