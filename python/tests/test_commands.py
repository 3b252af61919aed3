"""The commands as functions (anvil.commands): trace, replay, merge and offline validate
return the rows the `anvil` program prints, as dicts, and raise anvil.Error with its
messages."""
import json
import math
import shutil

import pytest

import anvil


def test_trace_steps(root):
    rows = anvil.trace(root / "tests/data/workloads/trace_good.jsonl", "profit_pack")
    assert [r["step"] for r in rows] == [0, 1, 2]
    assert all(r["plan"] in ("planned", "reused") for r in rows)
    assert all(r["predicted_us"] > 0 and r["items"] > 0 for r in rows)
    assert rows[0]["plan"] == "planned"   # nothing to reuse at the first step
    waves = anvil.trace(root / "tests/data/workloads/trace_good.jsonl", "profit_pack",
                        sim="waves")
    assert len(waves) == 3


def test_trace_errors(root):
    with pytest.raises(anvil.Error, match=r"trace: --scheduler: unknown scheduler 'nope'"):
        anvil.trace(root / "tests/data/workloads/trace_good.jsonl", "nope")
    with pytest.raises(anvil.Error, match="empty trace"):
        anvil.trace(root / "tests/data/workloads/trace_empty.jsonl", "profit_pack")
    with pytest.raises(TypeError, match="heads"):
        anvil.trace(root / "tests/data/workloads/trace_good.jsonl", "profit_pack", heads=32)


def test_replay_report_and_rows(root):
    r = anvil.replay(root / "tests/data/replay/h200_plan.json",
                     root / "tests/data/replay/h200_trace.json", cost_model="roofline")
    rep = r["report"]
    assert rep["plan_items"] == 8 and rep["cta_records"] == 17 and rep["merge_records"] == 1
    assert rep["measured_us"] == 12.5 and rep["replayed_us"] > 0
    assert math.isclose(rep["rel_err"], (rep["replayed_us"] - 12.5) / 12.5, rel_tol=1e-9)
    assert r["compared"] and r["not_compared"] is None and r["predicted_us"] > 0
    assert [x["launch"] for x in r["rows"]] == [0, -1]   # the plan's launch, then the merge
    with pytest.raises(anvil.Error, match="replay: --cost-model: unknown cost model 'nope'"):
        anvil.replay(root / "tests/data/replay/h200_plan.json",
                     root / "tests/data/replay/h200_trace.json", cost_model="nope")


def test_merge_refuses_missing_rows(root, tmp_path):
    shutil.copytree(root / "tests/bad_input/merge_missing_rows/part", tmp_path / "part")
    with pytest.raises(anvil.Error, match=r"the directories hold 1 of the experiment's 2 rows "
                                          r"\(row 1 is missing\)"):
        anvil.merge([tmp_path / "part"], tmp_path / "out")
    assert not (tmp_path / "out").exists()
    with pytest.raises(TypeError, match="dirs"):
        anvil.merge(tmp_path / "part", tmp_path / "out")


def test_validate_offline_rows(root, tmp_path):
    record = root / "results/h100/validation/heldout/validation.json"
    recorded = json.loads(record.read_text())["rows"]
    # the record names its experiment relative to the repository; an installed package's
    # data folder holds no results/, so the experiment is given from the checkout
    rows = anvil.validate_offline(record, experiment=record.parent / "experiment.json",
                                  out=tmp_path / "v")
    assert len(rows) == len(recorded)
    for got, was in zip(rows, recorded):
        assert got["batch"] == was["batch"] and got["measured_us"] == was["measured_us"]
        assert got["measured_min_us"] <= got["measured_us"] <= got["measured_max_us"]
    written = json.loads((tmp_path / "v/validation.json").read_text())
    assert [r["predicted_us"] for r in written["rows"]] == \
        pytest.approx([r["predicted_us"] for r in rows])
    with pytest.raises(anvil.Error, match="cannot open"):
        anvil.validate_offline(tmp_path / "missing.json")
