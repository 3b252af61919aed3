"""Per-step planning: the planner reuses its plan while only each request's last block fills
up, the reused plan stays exact, and `anvil trace` applies the same rule."""
import re
import subprocess

import numpy as np

import anvil
from anvil.decode import DecodeBatch


def test_reuse_within_the_last_block():
    b = DecodeBatch(16, levels=(64,), fanout=(1,), own=17)   # 81 tokens: 6 blocks, 1 used
    pl = anvil.Planner("profit_pack")
    reused = []
    for _ in range(40):
        reused.append(pl.step(b.table, b.kv_lens))
        p = pl.current()
        p.check()
        fresh = anvil.plan(anvil.block_table(b.table, b.kv_lens), "profit_pack")
        assert p.workload.info["query_centric_kv_tokens"] == fresh.workload.info["query_centric_kv_tokens"]
        b.step()
    # 81..96 tokens fill block 6; 97 takes a new block: planned at steps 0, 16, 32.
    assert [i for i, r in enumerate(reused) if not r] == [0, 16, 32]
    assert pl.counts == (3, 37)


def test_changed_table_plans_anew():
    b = DecodeBatch(8, levels=(32,), fanout=(1,), own=5)
    pl = anvil.Planner("node_naive")
    assert not pl.step(b.table, b.kv_lens)
    t = b.table.copy()
    t[3, 2] = 999                             # another block id in request 3's row
    assert not pl.step(t, b.kv_lens)
    assert pl.step(t, b.kv_lens)              # unchanged: reused
    assert not pl.step(t, b.kv_lens - 1)      # shrinking: planned
    pl.current().check()


def test_trace_command_shares_the_rule(tmp_path, cli):
    b = DecodeBatch(6, levels=(32,), fanout=(1,), own=[3, 5, 7, 9, 11, 13])
    pl = anvil.Planner("profit_pack")
    lines = []
    for _ in range(30):
        lines.append(b.jsonl_line())
        pl.step(b.table, b.kv_lens)
        b.step()
    trace = tmp_path / "trace.jsonl"
    trace.write_text("\n".join(lines) + "\n")
    out = subprocess.run([cli, "trace", str(trace), "-s", "profit_pack"], check=True,
                         capture_output=True, text=True).stdout
    m = re.search(r"steps=(\d+) planned=(\d+) reused=(\d+)", out)
    assert m and (int(m.group(2)), int(m.group(3))) == pl.counts
    assert pl.counts[1] > 0


def test_planner_errors():
    pl = anvil.Planner("node_naive")
    try:
        pl.step(np.zeros((2, 1), np.int32), np.array([16, 17], np.int32))
    except anvil.Error as e:
        assert "kv_tokens[1]" in str(e)
    else:
        raise AssertionError("a row too short for its tokens must be rejected")
    try:
        anvil.Planner("nope")
    except anvil.Error as e:
        assert "unknown scheduler 'nope'" in str(e)
    else:
        raise AssertionError("unknown scheduler")
