#!/usr/bin/env python3
"""atheris harness of the Python package's entry points (docs/reliability.md#fuzzing): JSON
text (workload specs, plan files, both also as files) and Python values (dicts, lists,
arrays, ints of any size, NaN, None) for every function that takes them; what loads is used
(batches round-trip, plans are checked and simulated, planners step). Bad input must raise
anvil.Error, ValueError or TypeError (the exceptions the package documents); any other
exception, a crash or an input slower than the -timeout is a finding.

The first byte of an input picks the entry point (MODES); the rest is the text, or the
bytes an atheris.FuzzedDataProvider turns into values. tests/fuzz/seed_corpus.py writes the
seeds in this form (TEXT_MODES are the first three).

    python tests/fuzz/fuzz_python.py -max_total_time=600 /tmp/new tests/fuzz/corpus/fuzz_python
"""
import atexit
import math
import os
import shutil
import sys
import tempfile
import warnings

import atheris
import numpy as np   # imported before instrumenting: only anvil's own Python is instrumented

with atheris.instrument_imports():
    import anvil
    from anvil.decode import DecodeBatch

EXPECTED = (anvil.Error, ValueError, TypeError)
WORDS = ["kind", "levels", "B", "L", "kary", "arity", "depth", "random", "seed", "max_depth",
         "min_depth", "max_requests", "max_children", "min_len", "max_len", "requests",
         "requests_per_leaf", "ratio", "batch", "context", "shared_ratio", "tree", "nodes",
         "parent", "kv_len", "explicit", "block_table", "block_size", "blocks",
         "last_block_tokens", "heads", "head_dim", "dtype", "name", "degenerate", "fp16", "bf16"]
SCHEDULERS = anvil.schedulers()
PARAMS = ["split", "splits", "max_splits", "block_n", "ctas_per_sm", "tile_n", "tiles",
          "launch", "k", "ctas", "max_pieces", "eq5", "max_evals", "packing", "cost", "streams"]
GPUS = ["H200-SXM", "H100-SXM", "A100-40GB-PCIe", "RTX-4090"]
COST_PARAMS = ["bw_scale", "tensor_scale", "fixed_us", "alpha", "beta", "merge_read"]
SPECIAL = [math.nan, math.inf, -math.inf, -0.0, 1e308, 0.5, 2.0**63, -2.0**31]
SCRATCH = tempfile.mkdtemp(prefix="fuzz_python-")
atexit.register(shutil.rmtree, SCRATCH, True)


def rarely(fdp):
    return fdp.ConsumeIntInRange(0, 7) == 7   # an exhausted provider gives 0: not rare


def pick(fdp, good, bad=("", "nope")):
    """Mostly one of `good`, now and then a name nothing registers."""
    return fdp.PickValueInList(list(bad) if rarely(fdp) else good)


def scalar(fdp):
    """One of the values that reach an int argument: small, large, huge, float, str, None."""
    k = fdp.ConsumeIntInRange(0, 9)
    if k <= 4:
        return fdp.ConsumeIntInRange(-2, 70)
    if k == 5:
        return fdp.ConsumeIntInRange(-2**31, 2**31)
    if k == 6:
        return (-1) ** fdp.ConsumeIntInRange(0, 1) * 2 ** fdp.ConsumeIntInRange(31, 200) + \
            fdp.ConsumeIntInRange(-1, 1)
    if k == 7:
        return fdp.PickValueInList(SPECIAL) if fdp.ConsumeBool() else fdp.ConsumeRegularFloat()
    if k == 8:
        return fdp.PickValueInList(WORDS)
    return fdp.PickValueInList([None, True, False, "1", b"\x01", []])


def value(fdp, depth=0):
    """Any JSON-like Python value, nested a few levels."""
    k = fdp.ConsumeIntInRange(0, 5 if depth < 4 else 2)
    if k <= 1:
        return scalar(fdp)
    if k == 2:
        return fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 12))
    if k == 3:
        return [value(fdp, depth + 1) for _ in range(fdp.ConsumeIntInRange(0, 6))]
    if k == 4:
        return ints(fdp)
    return spec_dict(fdp, depth + 1)


def spec_dict(fdp, depth=0):
    d = {}
    if fdp.ConsumeIntInRange(0, 3):
        d["kind"] = fdp.PickValueInList(["levels", "kary", "random", "ratio", "tree",
                                         "explicit", "block_table", "degenerate", ""])
    for _ in range(fdp.ConsumeIntInRange(0, 6)):
        key = fdp.PickValueInList(WORDS) if fdp.ConsumeIntInRange(0, 7) else \
            fdp.ConsumeUnicodeNoSurrogates(4)
        d[key] = value(fdp, depth + 1)
    return d


def ints(fdp, n_max=8):
    """A list that is mostly small ints, sometimes with an odd element in it."""
    n = fdp.ConsumeIntInRange(0, n_max)
    return [fdp.ConsumeIntInRange(-1, 64) if fdp.ConsumeIntInRange(0, 5) else scalar(fdp)
            for _ in range(n)]


def array_arg(fdp, ndim=1):
    """What a caller may pass as an array: a list, a numpy array of some dtype, or anything."""
    k = fdp.ConsumeIntInRange(0, 7)
    if k <= 3:
        rows = [ints(fdp) for _ in range(fdp.ConsumeIntInRange(0, 6))] if ndim == 2 else ints(fdp)
        return rows
    if k <= 5:
        dtype = fdp.PickValueInList([np.int32, np.int64, np.int8, np.uint64, np.float64, bool])
        shape = tuple(fdp.ConsumeIntInRange(0, 5) for _ in range(fdp.ConsumeIntInRange(1, 3)))
        return np.frombuffer(fdp.ConsumeBytes(64).ljust(64, b"\0"), np.uint8)[
            :int(np.prod(shape))].astype(dtype).reshape(shape) if int(np.prod(shape)) <= 64 \
            else np.zeros(2, dtype)
    return value(fdp)


def heads_kwargs(fdp):
    """heads=(q, kv), head_dim, dtype: usually left out, else plausible or wild."""
    kw = {}
    if rarely(fdp):
        kw["heads"] = value(fdp) if rarely(fdp) else \
            tuple(fdp.ConsumeIntInRange(1, 64) if fdp.ConsumeBool() else scalar(fdp)
                  for _ in range(2))
    if rarely(fdp):
        kw["head_dim"] = fdp.PickValueInList([64, 128, 256]) if fdp.ConsumeBool() else scalar(fdp)
    if rarely(fdp):
        kw["dtype"] = value(fdp) if rarely(fdp) else fdp.PickValueInList(["fp16", "bf16", "fp8"])
    return kw


def params(fdp, names):
    return {fdp.PickValueInList(names) if not rarely(fdp) else
            fdp.ConsumeUnicodeNoSurrogates(6): scalar(fdp) if fdp.ConsumeBool() else
            fdp.PickValueInList(["fixed", "none", "per_shape", "persistent", "grid", "beside",
                                 "naive", "compute", "serial", "true", "false"])
            for _ in range(fdp.ConsumeIntInRange(0, 3))}


def text(data):
    """Bytes as a str: UTF-8 where it is, lone surrogates where it is not."""
    return data.decode("utf-8", "surrogateescape")


def use_workload(w):
    """Everything a workload offers, and its explicit form loads back to the same batch."""
    info = w.info
    w.arrays()
    repr(w)
    if info["nodes"] <= 4096:
        back = anvil.from_spec(w.to_json())
        assert back.to_json() == w.to_json(), "explicit form does not load back the same"


def use_plan(p, fdp=None):
    """Check a plan; one that is exact is simulated and run in fp64 on a few requests."""
    p.tables()
    repr(p)
    p.workload
    p.check()
    if len(p.tables()["items"]) // anvil.ITEM_DTYPE.itemsize > 4096:
        return
    p.reference(dim=4, max_requests=4)
    anvil.simulate(p, gpu="H100-SXM", model="waves")


def mode_spec_text(data):
    w = anvil.from_spec(text(data))
    use_workload(w)


def mode_plan_text(data):
    use_plan(anvil.plan_from_json(text(data)))


def mode_files(data):
    path = os.path.join(SCRATCH, "input.json")
    with open(path, "wb") as f:
        f.write(data)
    try:
        use_workload(anvil.load_workload(path))
    except EXPECTED:
        pass
    use_plan(anvil.load_plan(path))


def mode_spec_dict(data):
    fdp = atheris.FuzzedDataProvider(data)
    spec = spec_dict(fdp) if fdp.ConsumeIntInRange(0, 7) else value(fdp)
    use_workload(anvil.from_spec(spec, **heads_kwargs(fdp)))


def mode_random(data):
    fdp = atheris.FuzzedDataProvider(data)
    spec = {fdp.PickValueInList(WORDS): scalar(fdp) for _ in range(fdp.ConsumeIntInRange(0, 4))}
    spec.pop("kind", None)
    spec.pop("seed", None)
    use_workload(anvil.random(scalar(fdp), **heads_kwargs(fdp), **spec))


def mode_arrays(data):
    fdp = atheris.FuzzedDataProvider(data)
    k = fdp.ConsumeIntInRange(0, 2)
    if k == 0:
        w = anvil.levels(array_arg(fdp), array_arg(fdp), **heads_kwargs(fdp))
    elif k == 1:
        w = anvil.explicit(array_arg(fdp), array_arg(fdp), array_arg(fdp), **heads_kwargs(fdp))
    else:
        w = anvil.block_table(array_arg(fdp, 2), array_arg(fdp), scalar(fdp), **heads_kwargs(fdp))
    use_workload(w)


def small_batch(fdp):
    if fdp.ConsumeBool():
        return anvil.levels([1, fdp.ConsumeIntInRange(1, 8)], [fdp.ConsumeIntInRange(1, 300), 16])
    return anvil.from_spec({"kind": "random", "seed": fdp.ConsumeIntInRange(0, 99),
                            "max_requests": 8})


def mode_plan(data):
    fdp = atheris.FuzzedDataProvider(data)
    w = small_batch(fdp)
    cost_model = pick(fdp, ["roofline", "linear", "compute", "memory"])
    p = anvil.plan(w, pick(fdp, SCHEDULERS), gpu=pick(fdp, GPUS), cost_model=cost_model,
                   cost_params=params(fdp, COST_PARAMS) if rarely(fdp) else None,
                   **params(fdp, PARAMS))
    p.check()
    anvil.simulate(p, gpu=pick(fdp, GPUS), cost_model=cost_model,
                   model=pick(fdp, ["engine", "waves"]), timeline=fdp.ConsumeBool())
    if fdp.ConsumeBool():
        p.reference(seed=scalar(fdp), dim=fdp.ConsumeIntInRange(-1, 8),
                    max_requests=fdp.ConsumeIntInRange(-1, 4))
    else:
        anvil.exec(p, seed=scalar(fdp), repeats=scalar(fdp))


def mode_planner(data):
    fdp = atheris.FuzzedDataProvider(data)
    pl = anvil.Planner(pick(fdp, SCHEDULERS), gpu=pick(fdp, GPUS),
                       block_size=scalar(fdp) if rarely(fdp) else 16,
                       **heads_kwargs(fdp), **params(fdp, PARAMS))
    for _ in range(fdp.ConsumeIntInRange(1, 4)):
        if fdp.ConsumeIntInRange(0, 3):
            table = np.asarray(fdp.ConsumeIntListInRange(
                fdp.ConsumeIntInRange(1, 4) * 4, -1, 40), np.int32).reshape(-1, 4)
            lens = np.asarray(fdp.ConsumeIntListInRange(len(table), -1, 80), np.int32)
        else:
            table, lens = array_arg(fdp, 2), array_arg(fdp)
        pl.step(table, lens)
        if pl.plan is not None:
            pl.current().check()
    pl.reuse_rate


def mode_decode(data):
    fdp = atheris.FuzzedDataProvider(data)
    nl = fdp.ConsumeIntInRange(0, 3)
    b = DecodeBatch(fdp.ConsumeIntInRange(-1, 12), levels=tuple(ints(fdp, nl)),
                    fanout=tuple(ints(fdp, nl)), own=scalar(fdp) if fdp.ConsumeBool() else 5,
                    block_size=fdp.ConsumeIntInRange(-1, 32))
    for _ in range(fdp.ConsumeIntInRange(0, 3)):
        b.step()
    anvil.from_spec(b.jsonl_line())


MODES = [mode_spec_text, mode_plan_text, mode_files,      # TEXT_MODES: the rest is the text
         mode_spec_dict, mode_random, mode_arrays, mode_plan, mode_planner, mode_decode]
TEXT_MODES = 3


def TestOneInput(data):
    if not data:
        return
    try:
        MODES[data[0] % len(MODES)](data[1:])
    except EXPECTED:
        pass


def main():
    warnings.simplefilter("ignore")   # numpy's casts of NaN and out-of-range floats
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
