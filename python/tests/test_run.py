"""anvil.run: plans on the caller's CUDA tensors. The argument checks run anywhere (numpy
arrays are CPU tensors to refuse); the run itself needs PyTorch with a CUDA device and is
skipped with one line without them."""
import math

import numpy as np
import pytest

import anvil

TABLE = np.array([[0, 1, 2, 3], [0, 1, 4, 5]], dtype=np.int32)
LENS = np.array([60, 50], dtype=np.int32)


@pytest.fixture(scope="module")
def plan():
    return anvil.plan(anvil.block_table(TABLE, LENS, block_size=16), "profit_pack")


def test_plan_or_planner_is_checked():
    with pytest.raises(TypeError, match="plan_or_planner: expected an anvil.Plan"):
        anvil.run(object(), None, None, None)


def test_plan_needs_its_block_table(plan):
    with pytest.raises(TypeError, match="block_table: a Plan runs with the block table"):
        anvil.run(plan, None, None, None)


def test_block_table_values_follow_the_rule(plan):
    with pytest.raises(ValueError, match="block_table: expected a 2-D array"):
        anvil.run(plan, None, None, None, block_table=[1, 2, 3])


def test_kv_layout_is_named(plan):
    with pytest.raises(ValueError, match="kv_layout: 'NDH'; expected None, 'NHD' or 'HND'"):
        anvil.run(plan, None, None, None, block_table=TABLE, kv_layout="NDH")


def test_tensors_without_a_protocol_are_refused(plan):
    with pytest.raises(TypeError, match="q: expected a CUDA tensor with __dlpack__"):
        anvil.run(plan, [[1.0]], None, None, block_table=TABLE)


def test_cpu_tensors_are_refused(plan):
    q = np.zeros((2, 32, 128), np.float16)
    with pytest.raises(ValueError, match="q: on DLPack device type 1; expected a CUDA tensor"):
        anvil.run(plan, q, q, q, block_table=TABLE)


def test_planner_needs_a_step():
    pl = anvil.Planner("profit_pack")
    with pytest.raises(RuntimeError, match="no step has been planned yet"):
        anvil.run(pl, None, None, None)


def test_stream_is_an_integer_handle(plan):
    class Cuda:  # passes the protocol check; the stream is checked before any device work
        __cuda_array_interface__ = {}
    with pytest.raises(ValueError, match="stream"):
        anvil.run(plan, Cuda(), Cuda(), Cuda(), out=Cuda(), block_table=TABLE, stream=-1)


def _torch_cuda():
    torch = pytest.importorskip("torch", reason="anvil.run on the GPU needs PyTorch")
    if not torch.cuda.is_available():
        pytest.skip("anvil.run on the GPU needs a CUDA device")
    return torch


def _reference(torch, q, k, v, table, lens, bs):
    """fp32 attention of each request over its blocks (NHD cache)."""
    out, lse = torch.empty_like(q, dtype=torch.float32), torch.empty(q.shape[:2])
    g = q.shape[1] // k.shape[2]
    for r in range(q.shape[0]):
        n = int(lens[r])
        ids = torch.as_tensor(table[r, :(n + bs - 1) // bs], device=k.device).long()
        kk = k[ids].reshape(-1, k.shape[2], k.shape[3])[:n].float().repeat_interleave(g, 1)
        vv = v[ids].reshape(-1, v.shape[2], v.shape[3])[:n].float().repeat_interleave(g, 1)
        s = torch.einsum("hd,thd->ht", q[r].float(), kk) / math.sqrt(q.shape[2])
        out[r] = torch.einsum("ht,thd->hd", torch.softmax(s, -1), vv)
        lse[r] = torch.logsumexp(s, -1).cpu()
    return out, lse


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_planner_runs_on_torch_tensors(dtype):
    torch = _torch_cuda()
    dt = getattr(torch, dtype)
    bs, heads = 16, (32, 8, 128)
    gen = torch.Generator(device="cuda").manual_seed(1)
    k = torch.randn(8, bs, 8, 128, device="cuda", generator=gen).to(dt)
    v = torch.randn(8, bs, 8, 128, device="cuda", generator=gen).to(dt)
    q = torch.randn(2, 32, 128, device="cuda", generator=gen).to(dt)
    lse = torch.empty(2, 32, device="cuda")
    pl = anvil.Planner("profit_pack", block_size=bs, heads=heads[:2], head_dim=heads[2],
                       dtype="bf16" if dtype == "bfloat16" else "fp16")
    pl.step(TABLE, LENS)
    out = anvil.run(pl, q, k, v, lse=lse)
    torch.cuda.synchronize()
    ref, ref_lse = _reference(torch, q, k, v, TABLE, LENS, bs)
    err = ((out.float() - ref).norm(dim=-1) / ref.norm(dim=-1)).max().item()
    assert err < (1e-2 if dtype == "bfloat16" else 2e-3), err
    assert (lse.cpu() - ref_lse).abs().max().item() < 1e-3 * (1 + ref_lse.abs().max().item())
    again = anvil.run(pl, q, k, v)
    torch.cuda.synchronize()
    assert torch.equal(out, again)
