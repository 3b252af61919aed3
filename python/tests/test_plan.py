"""Plans from Python are the CLI's plans; the checker, reference and simulator answer through
the bindings; bad input raises anvil.Error with the CLI's one-line message."""
import json
import pathlib
import subprocess

import numpy as np
import pytest

import anvil
from anvil.decode import DecodeBatch


def small_batch():
    return DecodeBatch(12, levels=(64, 32), fanout=(1, 3), own=[20 + r for r in range(12)])


@pytest.mark.parametrize("scheduler", [s for s in anvil.schedulers() if s != "auto"] + ["auto"])
def test_block_table_plan_equals_cli_plan(tmp_path, cli, scheduler):
    b = small_batch()
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(b.spec()))
    out = tmp_path / "plan.json"
    subprocess.run([cli, "plan", str(spec), "-s", scheduler, "-g", "H100-SXM", "-o", str(out)],
                   check=True, capture_output=True)
    p = anvil.plan(anvil.block_table(b.table, b.kv_lens), scheduler, gpu="H100-SXM")
    assert p.to_json() == out.read_text()


def test_params_reach_the_scheduler(tmp_path, cli):
    b = small_batch()
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(b.spec()))
    out = tmp_path / "plan.json"
    subprocess.run([cli, "plan", str(spec), "-s", "fixed_division", "-p", "k=3", "-p",
                    "tiles=per_shape", "-o", str(out)], check=True, capture_output=True)
    p = anvil.plan(anvil.block_table(b.table, b.kv_lens), "fixed_division", k=3,
                   tiles="per_shape")
    assert p.to_json() == out.read_text()
    assert "k=3" in p.params


def test_plan_arrays_and_proofs():
    w = anvil.levels([1, 4, 16], [256, 64, 32])
    p = anvil.plan(w, "profit_pack")
    p.check()
    assert p.reference(dim=16) < 1e-9
    t = p.tables()
    assert t["items"]["launch"].max() < len(t["launches"])
    assert len(t["merge_offsets"]) == w.requests + 1
    # Every (request, token) is covered once: segment lengths x queries = query-centric KV.
    seg_len = t["segments"]["end"] - t["segments"]["begin"]
    covered = sum(int(seg_len[i["seg_begin"]:i["seg_begin"] + i["n_seg"]].sum()) * int(i["n_q"])
                  for i in t["items"])
    assert covered == w.info["query_centric_kv_tokens"]


def test_check_catches_a_corrupted_plan():
    p = anvil.plan(anvil.levels([1, 8], [512, 64]), "node_naive")
    doc = json.loads(p.to_json())
    seg = doc["items"][0]["segments"][0]
    seg[2] -= 1          # [node, begin, end]: the last token of the node is left uncovered
    bad = anvil.plan_from_json(json.dumps(doc))
    with pytest.raises(anvil.Error) as e:
        bad.check()
    assert e.value.code == "ANVIL_ERR_PLAN"
    assert "not covered" in str(e.value) or "covered" in str(e.value)


def test_simulate_time_bytes_timeline(tmp_path):
    w = anvil.levels([1, 16], [2048, 128])
    p = anvil.plan(w, "profit_pack")
    r = anvil.simulate(p, gpu="H100-SXM", timeline=True, chrome_trace=tmp_path / "t.json")
    assert r.predicted_us >= r.floor_us > 0
    assert r.hbm_bytes > 0 and len(r.timeline) >= len(p.items)
    assert (r.timeline["end_us"] >= r.timeline["start_us"]).all()
    assert "traceEvents" in (tmp_path / "t.json").read_text()
    faster = anvil.simulate(p, gpu="H200-SXM")
    assert faster.floor_us < r.floor_us


def test_run_experiment_rows(root):
    rows = anvil.run_experiment(root / "experiments" / "quickstart.json")
    # numbers and text; auto's choice and margin are null on the other schedulers' rows
    assert rows and all(isinstance(v, (int, float, str)) or (v is None and k.startswith("auto_"))
                        for r in rows for k, v in r.items())
    assert any(r["auto_chose"] for r in rows) and all(
        (r["auto_chose"] is None) == (r["scheduler"] != "auto") for r in rows)
    assert {"workload", "scheduler", "predicted_us", "floor_us"} <= rows[0].keys()


def bad_input_cases(root):
    for d in sorted((root / "tests" / "bad_input").iterdir()):
        args = (d / "args").read_text().split() if (d / "args").exists() else None
        if args is None or args[:2] == ["check", "plan.json"] and len(args) == 2:
            yield d, args


def test_bad_input_raises_the_cli_message(root, monkeypatch):
    seen = 0
    for case, args in bad_input_cases(root):
        monkeypatch.chdir(case)
        expected = (case / "expected_error").read_text().strip()
        with pytest.raises(anvil.Error) as e:
            if args is None:
                anvil.run_experiment("input.json")
            else:
                anvil.load_plan("plan.json").check()
        assert expected in str(e.value), case.name   # as tests/test_bad_input.c reads it
        assert e.value.status_class == 1
        seen += 1
    assert seen >= 20


def test_bad_arrays_and_names():
    with pytest.raises(anvil.Error, match="unknown scheduler 'nope'"):
        anvil.plan(anvil.levels([1], [16]), "nope")
    with pytest.raises(anvil.Error, match="unknown GPU"):
        anvil.plan(anvil.levels([1], [16]), "node_naive", gpu="B300")
    with pytest.raises(anvil.Error, match="kv_tokens\\[1\\]"):
        anvil.block_table(np.zeros((2, 2), np.int32), [16, 40])
    with pytest.raises(anvil.Error) as e:
        anvil.from_spec({"kind": "levels", "B": [1, 2], "L": [16]})
    assert str(e.value).startswith("workload: L:")


def test_exec_without_a_device_says_so():
    p = anvil.plan(anvil.levels([1, 2], [64, 16]), "node_naive")
    try:
        r = anvil.exec(p, repeats=2)
    except anvil.Error as e:
        assert e.code == "ANVIL_ERR_NODEVICE"
    else:                                   # a CUDA build on a machine with a GPU
        assert r["verified"] and r["max_rel_err"] < 1e-2


def _model_and_streams(tmp_path, cli, w, scheduler, model):
    """The plan of `scheduler` for batch B=1,16 L=256,16 (w) on the H100 with launch_model
    `model` and with streams, after checking the first is the one `anvil plan --launch` writes."""
    out = tmp_path / "plan.json"
    subprocess.run([cli, "plan", "--levels", "B=1,16 L=256,16", "-s", scheduler,
                    "--launch", model, "-g", "H100-SXM", "-o", str(out)],
                   check=True, capture_output=True)
    m = anvil.plan(w, scheduler, gpu="H100-SXM", launch_model=model)
    s = anvil.plan(w, scheduler, gpu="H100-SXM")
    assert (m.launch_model, s.launch_model) == (model, "streams")
    assert m.to_json() == out.read_text()
    return m, s


def test_graph_launch_model_is_the_clis(tmp_path, cli):
    """launch_model="graph" gives the plan `anvil plan --launch graph` writes; the simulator
    issues its launches together, so a small two-launch plan is predicted faster."""
    w = anvil.levels([1, 16], [256, 16])
    g, s = _model_and_streams(tmp_path, cli, w, "profit_pack", "graph")
    assert len(g.launches) == 2
    assert (anvil.simulate(g, gpu="H100-SXM").predicted_us
            < anvil.simulate(s, gpu="H100-SXM").predicted_us)
    with pytest.raises(ValueError, match="launch model 'graphs'"):
        anvil.plan(w, "profit_pack", launch_model="graphs")
    with pytest.raises(ValueError, match="launch_model"):
        anvil.plan(w, "profit_pack", launch_model=3)


def test_pdl_launch_model_is_the_clis(tmp_path, cli):
    """launch_model="pdl" gives the plan `anvil plan --launch pdl` writes; a spec that has not
    measured the dependent merge's join predicts it as streams."""
    w = anvil.levels([1, 16], [256, 16])
    p, s = _model_and_streams(tmp_path, cli, w, "greedy_division", "pdl")
    assert (anvil.simulate(p, gpu="H100-SXM").predicted_us
            == anvil.simulate(s, gpu="H100-SXM").predicted_us)
