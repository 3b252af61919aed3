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
    ({"levels": (64, 32), "fanout": (1,)}, "fanouts"),          # was IndexError
    ({"levels": (30,), "fanout": (1,)}, "whole blocks"),        # was AssertionError
    ({"levels": (64,), "fanout": (0,)}, "fanout"),               # was IndexError
    ({"levels": (64,), "fanout": (1,), "block_size": 0}, "block_size"),   # ZeroDivisionError
    ({"levels": (), "fanout": (), "own": 0}, "own"),            # requests of no tokens
    ({"levels": (64,), "fanout": (1,), "own": 2**70}, "own"),   # was OverflowError
])
def test_decode_batch_rejects_what_it_cannot_lay_out(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DecodeBatch(4, **kwargs)
    DecodeBatch(4, levels=(64,), fanout=(2,), own=np.int64(3), block_size=16).step()


# --- One rule for numbers at every entry point (anvil._values) -------------------------------
def table_entry_points(table, lens):
    """Every entry point that takes a block table, called with (table, lens)."""
    pl = anvil.Planner("node_naive")
    return [lambda: anvil.block_table(table, lens), lambda: pl.step(table, lens)]


@pytest.mark.parametrize("table, error, match", [
    (np.array([[0, 1], [0, 2**32 + 1]]), ValueError, r"block_table\[1\]\[1\]: 4294967297"),
    ([[0, 1.9], [0, 1.2]], ValueError, r"block_table\[0\]\[1\]: 1.9 is not a whole"),
    ([[0, float("nan")], [0, 1]], ValueError, r"block_table\[0\]\[1\]: nan is not finite"),
    ([[0, -5], [0, 1]], ValueError, r"block_table\[0\]\[1\]: block id -5 is negative"),
    (np.array([[True, False], [True, True]]), TypeError, "block_table: .*dtype bool"),
    ([["0", "1"], ["0", "2"]], TypeError, "block_table: .*dtype <U1"),
    ([[0, None], [0, 1]], TypeError, r"block_table\[0\]\[1\]: expected an integer, got None"),
    ([[0, 1], [2]], ValueError, "block_table: not an array"),
    (np.zeros((2, 2, 2), np.int32), ValueError, "block_table: expected a 1-D or 2-D"),
], ids=["2^32+1", "fractions", "nan", "negative", "bool", "str", "None", "ragged", "3-D"])
def test_block_tables_are_read_by_one_rule(table, error, match):
    # 2^32+1 was read as 1 (two blocks became one shared node), 1.9 and 1.2 as 1 (one block of
    # two), NaN built a batch with a numpy warning, -5 was a block; and Planner.step refused
    # the float tables block_table accepted.
    for call in table_entry_points(table, [32, 32]):
        with pytest.raises(error, match=match):
            call()


def test_whole_floats_and_padding_are_accepted_alike():
    table = np.array([[0, 1, -1], [0, 2, 3]], np.int64)     # -1: padding after 32 tokens
    lens = [32, 40]
    want = anvil.block_table(table.astype(np.int32), np.array(lens, np.int32)).to_json()
    assert anvil.block_table(table.astype(float), np.array(lens, float)).to_json() == want
    assert anvil.block_table(table.tolist(), lens).to_json() == want
    pl = anvil.Planner("node_naive")
    assert pl.step(table.astype(float), np.array(lens, float)) is False
    assert pl.current().workload.info == anvil.block_table(table, lens).info


@pytest.mark.parametrize("call, error, match", [
    (lambda: anvil.levels([1, 2.5], [16, 16]), ValueError, r"B\[1\]: 2.5 is not a whole"),
    (lambda: anvil.levels([1], [True]), TypeError, "L: .*dtype bool"),
    (lambda: anvil.levels([1], 16), TypeError, "L: expected an array of integers, got int"),
    (lambda: anvil.explicit([-1], [16], ["0"]), TypeError, "request_node: .*dtype <U1"),
    (lambda: anvil.explicit([-1.0], [float("inf")], [0]), ValueError, r"kv_lens\[0\]: inf"),
    (lambda: anvil.block_table([[0]], [float("nan")]), ValueError, r"kv_lens\[0\]: nan"),
    (lambda: anvil.block_table([[0]], [3], block_size=float("nan")), ValueError,
     "block_size: nan is not finite"),
    (lambda: anvil.block_table([[0]], [3], block_size="16"), TypeError,
     "block_size: expected an integer, got str"),
    (lambda: anvil.block_table([[0]], [3], block_size=True), TypeError, "block_size: .*bool"),
    (lambda: anvil.block_table([[0]], [3], block_size=16.5), ValueError, "block_size: 16.5"),
    (lambda: anvil.Planner("node_naive", block_size="16"), TypeError, "block_size"),
    (lambda: anvil.random(float("nan")), ValueError, "seed: nan"),
    (lambda: anvil.levels([1], [16], heads=5), TypeError, "heads: expected a pair"),
    (lambda: anvil.levels([1], [16], heads={0: 32, 1: 8}), TypeError, "heads: expected a pair"),
    (lambda: anvil.levels([1], [16], head_dim=0), ValueError, "head dim 0"),
    (lambda: DecodeBatch(4.5), ValueError, "requests: 4.5"),
    (lambda: DecodeBatch("4"), TypeError, "requests: expected an integer, got str"),
    (lambda: DecodeBatch(4, levels=(64.0,), fanout=(True,)), TypeError, r"fanout\[0\]"),
], ids=["B-fraction", "L-bool", "L-scalar", "node-str", "kv-inf", "kv-nan", "bs-nan", "bs-str",
        "bs-bool", "bs-fraction", "planner-bs", "seed-nan", "heads-int", "heads-dict", "head_dim-0",
        "requests-fraction", "requests-str", "fanout-bool"])
def test_numbers_are_read_by_one_rule(call, error, match):
    with pytest.raises(error, match=match):
        call()
    # and a whole float is its integer, wherever a number is read
    assert anvil.levels([1.0, 2], [16, 16.0]).to_json() == anvil.levels([1, 2], [16, 16]).to_json()
    assert DecodeBatch(4.0, levels=(64.0,), fanout=(2.0,)).kv_lens.tolist() == [184] * 4


def test_scheduler_and_cost_parameters_name_the_key():
    w = anvil.levels([1, 4], [64, 16])
    with pytest.raises(ValueError, match="params: k: 1208925819614629174706176 is out of range"):
        anvil.plan(w, "fixed_division", k=2**80)    # said "expected an integer, got a string"
    with pytest.raises(ValueError, match="params: k: nan is not finite"):
        anvil.plan(w, "fixed_division", k=float("nan"))
    with pytest.raises(TypeError, match="params: k: expected a bool, a number or a str, got None"):
        anvil.plan(w, "fixed_division", k=None)
    with pytest.raises(ValueError, match="cost_params: alpha: inf is not finite"):
        anvil.plan(w, "node_naive", cost_model="linear", cost_params={"alpha": float("inf")})
    with pytest.raises(TypeError, match="cost_params: expected a dict"):
        anvil.plan(w, "node_naive", cost_params=[("alpha", 1)])
    assert "k=3" in anvil.plan(w, "fixed_division", k=3.0).params


@pytest.mark.parametrize("call, error, match", [
    (lambda: anvil.plan(None, "node_naive"), TypeError, "batch: expected an anvil.Workload"),
    (lambda: anvil.plan(anvil.levels([1], [16]), None), TypeError, "scheduler: expected a str"),
    (lambda: anvil.plan(anvil.levels([1], [16]), "node_naive", gpu=None), TypeError,
     "gpu: expected a GPU name"),
    (lambda: anvil.simulate(None), TypeError, "plan: expected an anvil.Plan, got NoneType"),
    (lambda: anvil.simulate(anvil.levels([1], [16])), TypeError, "plan: expected an anvil.Plan"),
    (lambda: anvil.exec(None), TypeError, "plan: expected an anvil.Plan"),
    (lambda: anvil.run_experiment(None), TypeError, "path: expected a path"),
    (lambda: anvil.load_workload(None), TypeError, "path: expected a path"),
    (lambda: anvil.load_plan(3), TypeError, "path: expected a path"),
    (lambda: anvil.from_spec(None), TypeError, "spec: expected a dict or JSON text"),
    (lambda: anvil.Planner("node_naive").set_drift("1"), TypeError, "drift: expected a number"),
    (lambda: anvil.Planner("node_naive").current(), RuntimeError, "no step has been planned"),
], ids=["plan-None", "scheduler-None", "gpu-None", "simulate-None", "simulate-workload",
        "exec-None", "run_experiment-None", "load_workload-None", "load_plan-int",
        "from_spec-None", "drift-str", "current-before-step"])
def test_wrong_arguments_are_named(call, error, match):
    # plan(None) and simulate(None) raised AttributeError, run_experiment(None) opened a file
    # named "None", current().check() before a step raised AttributeError on NoneType.
    with pytest.raises(error, match=match):
        call()
