"""anvil from Python: plan prefix-shared decode attention batches, prove the plans exact,
predict their time on a GPU spec, and run experiment files, over the C library's public API.

    import numpy as np, anvil
    table = np.array([[0, 1, 2, 3], [0, 1, 4, 5]], dtype=np.int32)   # block ids per request
    batch = anvil.block_table(table, kv_lens=[60, 50], block_size=16)
    plan = anvil.plan(batch, "profit_pack")
    plan.check()
    print(anvil.simulate(plan, gpu="H100-SXM").predicted_us)

Numbers and arrays follow one rule at every entry point (anvil._values): integers, or floats
that are finite and whole; bool, str and None are not numbers. Mistakes in the input raise
anvil.Error (a ValueError) with the one-line message the `anvil` program prints; a value of
the wrong type raises TypeError and a value out of range (a number no C integer holds, NaN,
1.9, a negative block id) raises ValueError, each naming the argument.

Threads: every function and object may be used from several threads at once. Plans, batches
and targets are never changed once made, so threads share them freely; a Planner serves one
call at a time (a lock of its own: concurrent calls wait their turn), and a Plan from
Planner.current() reads the plan the planner holds at that call, under the same lock.
Planning and simulation keep the GIL (a target's cost model cache serves one call at a
time); building a block-table batch, proving a plan, its fp64 reference, experiments and the
GPU executor run without it.
"""
from __future__ import annotations

import functools
import json
import sys
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from . import _anvil, _values
from ._anvil import Error
from .commands import merge, replay, trace, validate_offline
from ._values import INT64, int_array, integer, name, setting

__all__ = ["Error", "Workload", "Plan", "Planner", "SimResult", "block_table", "levels",
           "explicit", "random", "from_spec", "load_workload", "plan", "load_plan",
           "plan_from_json", "simulate", "run_experiment", "exec", "run", "data_dir", "schedulers",
           "cost_models", "LAUNCH_DTYPE", "ITEM_DTYPE", "SEGMENT_DTYPE", "EVENT_DTYPE",
           "trace", "replay", "merge", "validate_offline"]
__version__ = _anvil.version

# The public C structs of include/anvil/plan.h and sim.h, as numpy record types.
LAUNCH_DTYPE = np.dtype([("stream", "i4"), ("kind", "i4"), ("m_rows", "i4"),
                         ("n_tokens", "i4"), ("warps", "i4"), ("persistent_ctas", "i4"),
                         ("n_items", "i4")])
ITEM_DTYPE = np.dtype([("launch", "i4"), ("q_begin", "i4"), ("n_q", "i4"),
                       ("seg_begin", "i4"), ("n_seg", "i4"), ("partial", "i4"),
                       ("slot_begin", "i4"), ("cta", "i4"), ("order", "i4")])
SEGMENT_DTYPE = np.dtype([("node", "i4"), ("pad_", "i4"), ("begin", "i8"), ("end", "i8")])
EVENT_DTYPE = np.dtype([("item", "i4"), ("launch", "i4"), ("head", "i4"), ("sm", "i4"),
                        ("start_us", "f8"), ("end_us", "f8")])
KERNEL_KINDS = ("partial", "persistent", "decode", "merge")
_DTYPES = {"fp16": 0, "bf16": 1}


def data_dir() -> str:
    """Where anvil reads GPU specs, the kernel variant table and profiles."""
    return _anvil.data_dir()


def _heads(heads, head_dim, dtype):
    if heads is None and head_dim is None and dtype is None:
        return None
    if heads is None:
        heads = (32, 8)
    if not isinstance(heads, (tuple, list, np.ndarray)) or len(heads) != 2:
        raise TypeError(f"heads: expected a pair (q_heads, kv_heads), got {heads!r}")
    if dtype is not None and (not isinstance(dtype, str) or dtype not in _DTYPES):
        raise ValueError(f"dtype {dtype!r}: expected one of {', '.join(_DTYPES)}")
    return (integer(heads[0], "heads"), integer(heads[1], "heads"),
            integer(128 if head_dim is None else head_dim, "head_dim"),
            _DTYPES[dtype or "fp16"])


def _assignments(params, what: str = "params") -> list:
    """{"split": "fixed", "eq5": False, "k": 3.0} -> ["split=fixed", "eq5=false", "k=3"]."""
    if not isinstance(params, dict):
        raise TypeError(f"{what}: expected a dict, got {type(params).__name__}")
    return [setting(k, v, what) for k, v in params.items()]


def _handle(obj, cls, what: str):
    """The extension's handle of a Workload or a Plan argument."""
    if not isinstance(obj, cls):
        raise TypeError(f"{what}: expected an anvil.{cls.__name__}, got {type(obj).__name__}")
    return obj._w if cls is Workload else obj._p


def _block_table(table, kv_lens):
    """The block table (a row, or one row per request) and kv_lens as int32 arrays. Block ids
    and token counts within int32 here; a negative id among the blocks a request uses, and
    token counts outside [1, the row's tokens], are refused by the extension."""
    t = int_array(table, np.int32, "block_table", ndim=(1, 2))
    return (t.reshape(1, -1) if t.ndim == 1 else t), int_array(kv_lens, np.int32, "kv_lens")


class Workload:
    """A decode batch: a forest of KV nodes, each request ending at one node."""

    __slots__ = ("_w",)

    def __init__(self, handle):
        if not isinstance(handle, _anvil.Workload):
            raise TypeError("Workload: made by block_table, levels, explicit, from_spec, ... "
                            f"(got {type(handle).__name__})")
        self._w = handle

    @property
    def info(self) -> dict:
        return self._w.info()

    @property
    def requests(self) -> int:
        return self._w.info()["requests"]

    @property
    def nodes(self) -> int:
        return self._w.info()["nodes"]

    def arrays(self) -> dict:
        """parents, kv_lens (per node), request_node, request_kv_lens (per request)."""
        par, lens, rn, rk = self._w.arrays()
        return {"parents": np.frombuffer(par, np.int32), "kv_lens": np.frombuffer(lens, np.int64),
                "request_node": np.frombuffer(rn, np.int32),
                "request_kv_lens": np.frombuffer(rk, np.int64)}

    def to_json(self) -> str:
        return self._w.to_json()

    def __repr__(self):
        i = self.info
        return (f"<anvil.Workload {i['requests']} requests, {i['nodes']} nodes, "
                f"sharing {i['sharing_ratio']:.2f}>")


def block_table(table, kv_lens, block_size: int = 16, heads=None, head_dim=None,
                dtype=None) -> Workload:
    """The batch of a vLLM-style block table: row r holds request r's block ids (padded),
    of which the first ceil(kv_lens[r] / block_size) are used."""
    t, k = _block_table(table, kv_lens)
    return Workload(_anvil.workload_from_block_table(t, k, integer(block_size, "block_size"),
                                                     _heads(heads, head_dim, dtype)))


def levels(B, L, heads=None, head_dim=None, dtype=None) -> Workload:
    """PAT/FastTree B/L notation: level i has B[i] nodes of L[i] tokens."""
    return Workload(_anvil.workload_from_levels(int_array(B, np.int64, "B"),
                                                int_array(L, np.int64, "L"),
                                                _heads(heads, head_dim, dtype)))


def explicit(parents, kv_lens, request_node, heads=None, head_dim=None, dtype=None) -> Workload:
    """A forest given node by node (parents precede children, -1 for roots)."""
    return Workload(_anvil.workload_from_explicit(
        int_array(parents, np.int32, "parents"), int_array(kv_lens, np.int64, "kv_lens"),
        int_array(request_node, np.int32, "request_node"), _heads(heads, head_dim, dtype)))


def from_spec(spec, heads=None, head_dim=None, dtype=None, source: str = "workload") -> Workload:
    """Any workload spec of docs/experiments.md, as a dict or JSON text."""
    if not isinstance(spec, (str, dict)):
        raise TypeError(f"spec: expected a dict or JSON text, got {type(spec).__name__}")
    text = spec if isinstance(spec, str) else json.dumps(spec, allow_nan=False)
    return Workload(_anvil.workload_from_json(text, name(source, "source"),
                                              _heads(heads, head_dim, dtype)))


def random(seed: int, heads=None, head_dim=None, dtype=None, **spec) -> Workload:
    """A seeded random forest ({"kind": "random"} keys: max_depth, max_requests, ...)."""
    return from_spec({"kind": "random", "seed": integer(seed, "seed", 0, INT64[1]), **spec},
                     heads, head_dim, dtype)


def load_workload(path, heads=None, head_dim=None, dtype=None) -> Workload:
    """A workload spec file (errors name the file as `anvil plan SPEC.json` does)."""
    return Workload(_anvil.workload_load(_values.path(path, "path"),
                                         _heads(heads, head_dim, dtype)))


@functools.lru_cache(maxsize=32)
def _target(gpu: str, cost_model: str, cost_params: tuple,
            launch_model: str = "streams") -> _anvil.Target:
    return _anvil.Target(gpu, cost_model, list(cost_params), launch_model)


def _target_of(gpu, cost_model, cost_params, launch_model="streams"):
    cp = tuple(_assignments({} if cost_params is None else cost_params, "cost_params"))
    if not isinstance(launch_model, str):
        raise ValueError("launch_model: expected \"streams\", \"graph\" or \"pdl\", got %r"
                         % (launch_model,))
    gpu = _values.path(gpu, "gpu", "a GPU name or a spec file's path")
    return _target(gpu, name(cost_model, "cost_model", none_ok=True), cp, launch_model)


class Plan:
    """A scheduler's plan for one batch: launches, items, segments and merge lists. A plan
    of plan(), load_plan() or plan_from_json() never changes, and threads share it freely;
    one of Planner.current() reads its planner's plan as it is at each call."""

    __slots__ = ("_p",)

    def __init__(self, handle):
        if not isinstance(handle, _anvil.Plan):
            raise TypeError("Plan: made by plan, load_plan, plan_from_json or "
                            f"Planner.current() (got {type(handle).__name__})")
        self._p = handle

    def check(self) -> None:
        """Prove the plan exact; raises anvil.Error naming the first offending item."""
        self._p.check()

    def reference(self, seed: int = 1, dim: int = 0, max_requests: int = 0) -> float:
        """Run the plan in fp64 against direct attention; the largest relative error."""
        return self._p.reference(integer(seed, "seed", -2**64, 2**64 - 1) % 2**64,
                                 integer(dim, "dim"), integer(max_requests, "max_requests"))

    def to_json(self) -> str:
        """The file `anvil plan -o` writes, byte for byte."""
        return self._p.to_json()

    def tables(self) -> dict:
        t = self._p.tables()
        return {"launches": np.frombuffer(t["launches"], LAUNCH_DTYPE),
                "items": np.frombuffer(t["items"], ITEM_DTYPE),
                "item_queries": np.frombuffer(t["item_queries"], np.int32),
                "segments": np.frombuffer(t["segments"], SEGMENT_DTYPE),
                "merge_offsets": np.frombuffer(t["merge_offsets"], np.int32),
                "merge_slots": np.frombuffer(t["merge_slots"], np.int32)}

    @property
    def launches(self) -> np.ndarray:
        return self.tables()["launches"]

    @property
    def items(self) -> np.ndarray:
        return self.tables()["items"]

    @property
    def segments(self) -> np.ndarray:
        return self.tables()["segments"]

    @property
    def scheduler(self) -> str:
        return self._p.scheduler

    @property
    def params(self) -> str:
        return self._p.params

    @property
    def launch_model(self) -> str:
        return self._p.launch_model

    @property
    def workload(self) -> Workload:
        return Workload(self._p.workload)

    def __repr__(self):
        t = self._p.tables()
        return (f"<anvil.Plan {self.scheduler} ({self.params or 'defaults'}): "
                f"{len(t['items']) // ITEM_DTYPE.itemsize} items, "
                f"{len(t['launches']) // LAUNCH_DTYPE.itemsize} launches>")


def plan(batch: Workload, scheduler: str, gpu: str = "H200-SXM", cost_model: str = "roofline",
         cost_params: Optional[dict] = None, launch_model: str = "streams", **params) -> Plan:
    """Plan `batch` with `scheduler` and its parameters (anvil list shows them).
    launch_model "graph" plans for a GPU that replays the plan as one CUDA graph, "pdl" for
    one that launches the merge as a programmatic dependent of the launch before it
    (docs/kernels.md#launch-models); the plan carries it, and simulate() charges it."""
    w = _handle(batch, Workload, "batch")
    t = _target_of(gpu, cost_model, cost_params, launch_model)
    return Plan(_anvil.plan(t, w, name(scheduler, "scheduler"), _assignments(params)))


def load_plan(path) -> Plan:
    """A plan file (indices range-checked; call check() to prove it exact)."""
    return Plan(_anvil.plan_load(_values.path(path, "path")))


def plan_from_json(text: str, source: str = "plan") -> Plan:
    return Plan(_anvil.plan_from_json(name(text, "text"), name(source, "source")))


@dataclass
class SimResult:
    predicted_us: float
    partial_us: float
    merge_us: float
    floor_us: float            # roofline floor: the larger of the two below
    floor_mem_us: float        # unique KV bytes / HBM bandwidth
    floor_compute_us: float    # attention FLOPs / dense fp16 tensor rate
    hbm_bytes: float
    l2_bytes: float
    achieved_bw_GBps: float
    bubble_frac: float
    timeline: Optional[np.ndarray] = None   # EVENT_DTYPE records, one per CTA

    @property
    def ratio_to_floor(self) -> float:
        return self.predicted_us / self.floor_us if self.floor_us > 0 else 0.0


def simulate(plan: Plan, gpu: str = "H200-SXM", cost_model: str = "roofline",
             cost_params: Optional[dict] = None, model: str = "engine", timeline: bool = False,
             chrome_trace: Optional[str] = None) -> SimResult:
    """Predict the plan's time and bytes on a GPU spec (name or spec file path). With
    timeline=True the result carries every CTA; chrome_trace writes a Perfetto file."""
    p = _handle(plan, Plan, "plan")
    t = _target_of(gpu, cost_model, cost_params)
    r, events = _anvil.simulate(t, p, name(model, "model", none_ok=True), bool(timeline),
                                None if chrome_trace is None else
                                _values.path(chrome_trace, "chrome_trace"))
    tl = np.frombuffer(events, EVENT_DTYPE) if events is not None else None
    return SimResult(timeline=tl, **r)


def run_experiment(path, check: bool = True) -> list:
    """`anvil run` without files: one dict per (GPU, batch, scheduler) row, the columns of
    results.csv; pandas.DataFrame(rows) loads them. A row that fails alone is kept (status
    "failed", its "error"), as `anvil run` keeps it; with check=True (the default) such a row
    raises anvil.Error with the first failure's message, the rows in its .rows."""
    text, failure = _anvil.run_experiment(_values.path(path, "path"))
    rows = json.loads(text)
    if failure is not None and check:
        failure.rows = rows
        raise failure
    return rows


def schedulers() -> list:
    """The registered schedulers' names."""
    return _anvil.registry()[0]


def cost_models() -> list:
    """The registered cost models' names."""
    return _anvil.registry()[1]


class Planner(_anvil.Planner):
    """Per-step planning for a serving loop: step(block_table, kv_lens) plans a decode step
    (int32 arrays, the block table padded per request; rows are requests, arrivals and
    finishes insert and remove rows) and returns True when the previous plan was kept. A step
    reuses the plan when tokens only grew inside the last blocks (PAT §5.1), patches it when
    requests took new blocks, arrived or finished, and plans anew past the drift bound or
    when a shared prefix changes (docs/schedulers.md#per-step-planning). `plan` is the
    latest step's plan; `counts` is (planned, kept); `stats` counts each kind.

    Threads may share a planner: it serves one call at a time (a lock of its own, held by
    every call and by every read of its plan through current()), so concurrent calls wait.
    Arrays follow the package's one rule for numbers (anvil._values)."""

    def __new__(cls, scheduler: str, gpu: str = "H200-SXM", cost_model: str = "roofline",
                cost_params: Optional[dict] = None, block_size: int = 16, heads=None,
                head_dim=None, dtype=None, **params):
        t = _target_of(gpu, cost_model, cost_params)
        return super().__new__(cls, t, name(scheduler, "scheduler"), _assignments(params),
                               integer(block_size, "block_size"), _heads(heads, head_dim, dtype))

    def set_drift(self, bound) -> None:
        """Plan anew when a patched plan is estimated past 1 + bound of a fresh one."""
        super().set_drift(_values.number(bound, "drift"))

    def step(self, block_table, kv_lens) -> bool:
        """Plan one decode step; True when the previous plan was kept. The arrays follow the
        package's one rule (block_table does the same). The planner keeps a reference to the
        table (the int32 array it was given, or its conversion): anvil.run(planner, ...) reads
        the step's physical block ids from it, so change it only after the step's run."""
        table, lens = _block_table(block_table, kv_lens)
        kept = super().step(table, lens)
        self._table = table
        return kept

    @property
    def reuse_rate(self) -> float:
        planned, reused = self.counts
        return reused / (planned + reused) if planned + reused else 0.0

    def current(self) -> Plan:
        """The planner's plan: each call on it reads the plan the planner holds at that
        moment (a later step changes it). RuntimeError before the first step."""
        p = self.plan
        if p is None:
            raise RuntimeError("Planner.current(): no step has been planned yet; call "
                               "step(block_table, kv_lens) first")
        return Plan(p)


def exec(plan: Plan, seed: int = 1, repeats: int = 20) -> dict:
    """Run the plan on this machine's GPU (a CUDA build of the package) over a paged KV cache
    of seeded random data, verified against fp64 attention and timed. Raises anvil.Error
    (ANVIL_ERR_NODEVICE) on a build without CUDA or a machine without a GPU. anvil.run runs
    a plan on the caller's own tensors."""
    return _anvil.exec_seeded(_handle(plan, Plan, "plan"),
                              integer(seed, "seed", -2**64, 2**64 - 1) % 2**64,
                              integer(repeats, "repeats"))


_KV_LAYOUTS = {None: 0, "NHD": 1, "HND": 2}


def _stream_of(stream, q) -> int:
    """The CUDA stream as an integer handle: the caller's, else torch's current stream for a
    torch tensor, else 0 (the legacy default stream)."""
    if stream is None:
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(q, torch.Tensor) and q.is_cuda:
            return int(torch.cuda.current_stream(q.device).cuda_stream)
        return 0
    for attr in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        if hasattr(stream, attr):
            stream = getattr(stream, attr)
            break
    return integer(stream, "stream", 0, 2**64 - 1)


def _cuda_tensor(x, what: str, none_ok: bool = False):
    """x itself when it is a CUDA tensor by __dlpack__ or __cuda_array_interface__."""
    if x is None and none_ok:
        return None
    if hasattr(x, "__cuda_array_interface__"):
        return x
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"{what}: expected a CUDA tensor with __dlpack__ or "
                        f"__cuda_array_interface__ (torch, CuPy, JAX), got {type(x).__name__}")
    device = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else None
    if device not in (2, 13):  # kDLCUDA, kDLCUDAManaged
        raise ValueError(f"{what}: on DLPack device type {device}; expected a CUDA tensor "
                         "(device type 2)")
    return x


def _empty_like(q):
    """A tensor of q's library, shape and dtype for the output."""
    if hasattr(q, "new_empty"):  # torch
        return q.new_empty(q.shape)
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(q, cupy.ndarray):
        return cupy.empty_like(q)
    raise TypeError("out: pass the output tensor (anvil allocates it only for torch and CuPy "
                    f"queries, got {type(q).__name__})")


def run(plan_or_planner, q, k_cache, v_cache, out=None, lse=None, stream=None,
        block_table=None, kv_layout: Optional[str] = None):
    """Run a plan on the caller's CUDA tensors (docs/serving.md): q [requests, hq, d],
    k_cache and v_cache paged NHD [blocks, block, hkv, d] or HND [blocks, hkv, block, d]
    (told apart by the shape; kv_layout "NHD" or "HND" where block size equals hkv), out like
    q (allocated when None, for torch and CuPy) and lse [requests, hq] float32 (natural log;
    optional). Tensors come through __dlpack__ or __cuda_array_interface__; the work is issued
    on `stream` (default: torch's current stream for torch tensors, else the legacy default
    stream). A Planner runs its current plan with the block table of its last step and keeps
    one device plan, whose tables keep their device addresses from step to step (CUDA graph
    replays read each step's plan); a Plan needs its block_table and gets a device plan per
    call. Returns out."""
    if isinstance(plan_or_planner, Planner):
        p = plan_or_planner.current()
        table = getattr(plan_or_planner, "_table", None) if block_table is None else None
        holder = plan_or_planner
    elif isinstance(plan_or_planner, Plan):
        p, table, holder = plan_or_planner, None, None
    else:
        raise TypeError("plan_or_planner: expected an anvil.Plan or anvil.Planner, got "
                        f"{type(plan_or_planner).__name__}")
    if table is None:
        if block_table is None:
            raise TypeError("block_table: a Plan runs with the block table it was made from "
                            "(int32 [requests, blocks]); pass block_table=")
        table = int_array(block_table, np.int32, "block_table", ndim=(2,))
    if kv_layout not in _KV_LAYOUTS:
        raise ValueError(f"kv_layout: {kv_layout!r}; expected None, 'NHD' or 'HND'")
    q = _cuda_tensor(q, "q")
    k_cache = _cuda_tensor(k_cache, "k_cache")
    v_cache = _cuda_tensor(v_cache, "v_cache")
    out = _empty_like(q) if out is None else _cuda_tensor(out, "out")
    lse = _cuda_tensor(lse, "lse", none_ok=True)
    s = _stream_of(stream, q)
    dp = getattr(holder, "_device_plan", None)
    if dp is None or not dp.fits(p._p):
        # a planner's batch grows: room for twice the plan, so most steps keep the buffer
        dp = _anvil.DevicePlan(p._p, 2.0 if holder is not None else 1.0)
        if holder is not None:
            holder._device_plan = dp
    dp.upload(p._p, np.ascontiguousarray(table, dtype=np.int32), s)
    dp.run(q, k_cache, v_cache, out, lse, s, _KV_LAYOUTS[kv_layout])
    return out
