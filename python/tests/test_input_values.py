"""Values the fuzz harness tests/fuzz/fuzz_python.py found mishandled: workload specs as text
or files, an empty name, numbers no C integer holds, and decode batches that cannot be laid
out. Each must give a batch or raise ValueError (anvil.Error is one) or TypeError."""
import json

import numpy as np
import pytest

import anvil
from anvil.decode import DecodeBatch


def test_spec_text_and_file_give_the_batch(tmp_path):
    # The handle was read before the call that set it: every batch of from_spec and
    # load_workload was empty and crashed at first use.
    spec = {"kind": "random", "seed": 1}
    w = anvil.from_spec(spec)
    assert w.requests >= 1 and w.nodes >= 1
    assert anvil.from_spec(json.dumps(spec)).to_json() == w.to_json()
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({"kind": "levels", "B": [1, 4], "L": [64, 16]}))
    assert anvil.load_workload(path).info["nodes"] == 5
    assert anvil.random(3, max_requests=4).requests <= 4


def test_empty_name_is_refused():
    # The explicit form leaves an empty name out, so the batch loaded back under a derived one.
    with pytest.raises(anvil.Error, match="name is 0 characters long"):
        anvil.from_spec({"kind": "random", "name": ""})
    w = anvil.from_spec({"kind": "random", "name": "x"})
    assert anvil.from_spec(w.to_json()).to_json() == w.to_json()


@pytest.mark.parametrize("call", [
    lambda: anvil.levels([2**70, 1], [16, 16]),
    lambda: anvil.explicit([-1], [2**64], [0]),
    lambda: anvil.block_table([[0, 1]], [2**40], block_size=16),
    lambda: anvil.block_table([[0, 1]], [20], block_size=2**40),
    lambda: anvil.levels([1], [16], heads=(2**40, 8)),
    lambda: anvil.levels([1], [16], head_dim=float("inf")),
    lambda: anvil.levels([1], [16], head_dim=float("nan")),
    lambda: anvil.Planner("node_naive", block_size=2**33),
    lambda: anvil.plan(anvil.levels([1], [16]), "node_naive").reference(dim=2**40),
    lambda: anvil.exec(anvil.plan(anvil.levels([1], [16]), "node_naive"), repeats=2**40),
], ids=["levels", "explicit", "kv_lens", "block_size", "heads", "inf", "nan", "planner",
        "reference", "exec"])
def test_numbers_out_of_range_raise_value_error(call):
    with pytest.raises(ValueError):   # was OverflowError, which callers do not expect
        call()


def test_unhashable_dtype_is_a_value_error():
    with pytest.raises(ValueError, match="dtype"):
        anvil.levels([1], [16], dtype=["fp16"])


@pytest.mark.parametrize("kwargs, match", [
    ({"levels": (64, 32), "fanout": (1,)}, "fan-outs"),         # was IndexError
    ({"levels": (30,), "fanout": (1,)}, "whole blocks"),        # was AssertionError
    ({"levels": (64,), "fanout": (0,)}, "fan-out"),              # was IndexError
    ({"levels": (64,), "fanout": (1,), "block_size": 0}, "block_size"),   # ZeroDivisionError
    ({"levels": (), "fanout": (), "own": 0}, "own"),            # requests of no tokens
    ({"levels": (64,), "fanout": (1,), "own": 2**70}, "own"),   # was OverflowError
])
def test_decode_batch_rejects_what_it_cannot_lay_out(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DecodeBatch(4, **kwargs)
    DecodeBatch(4, levels=(64,), fanout=(2,), own=np.int64(3), block_size=16).step()
