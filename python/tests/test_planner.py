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
    # 81..96 tokens fill block 6; 97 takes a new block: planned at step 0, patched at 16, 32.
    assert [i for i, r in enumerate(reused) if not r] == [0]
    assert pl.counts == (1, 39)
    st = pl.stats
    assert (st["planned"], st["patched"], st["reused"]) == (1, 2, 37)


def test_changed_table_patches_or_plans_anew():
    b = DecodeBatch(8, levels=(32,), fanout=(1,), own=5)
    pl = anvil.Planner("node_naive")
    assert not pl.step(b.table, b.kv_lens)
    t = b.table.copy()
    t[3, 2] = 999                             # another block id in request 3's row
    assert pl.step(t, b.kv_lens)              # request 3 finished, another arrived: patched
    assert pl.stats["last"] == "patched"
    pl.current().check()
    assert pl.step(t, b.kv_lens)              # unchanged: reused
    assert pl.stats["last"] == "reused"
    t[5, :2] = [777, 778]                     # request 5 under a prompt of its own: a new root
    assert not pl.step(t, b.kv_lens)
    assert pl.stats["last"] == "planned"
    pl.current().check()


def test_trace_command_shares_the_rule(tmp_path, cli):
    b = DecodeBatch(6, levels=(32,), fanout=(1,), own=[3, 5, 7, 9, 11, 13])
    pl = anvil.Planner("profit_pack")
    pl.set_drift(1e6)                         # no drift replans: the rule's steps alone
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
    st = pl.stats   # the trace plans anew where the planner patches (new blocks)
    assert m and (int(m.group(2)), int(m.group(3))) == (st["planned"] + st["patched"],
                                                        st["reused"])
    assert st["reused"] > 0 and st["patched"] > 0


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


def test_serving_loop_patches_and_stays_exact():
    """Requests grow (new blocks from a free list), finish and arrive; every plan is proved
    exact and the loop is carried by patched steps, not fresh plans."""
    rng = np.random.default_rng(3)
    n, width, bs = 24, 48, 16
    free = list(range(4000, 64, -1))
    table = np.full((n, width), -1, dtype=np.int32)
    kv = np.zeros(n, dtype=np.int32)

    def admit(r):
        kv[r] = 8 * bs + int(rng.integers(1, 200))
        table[r, :8] = np.arange(8)
        for j in range(8, -(-int(kv[r]) // bs)):
            table[r, j] = free.pop()

    for r in range(n):
        admit(r)
    pl = anvil.Planner("profit_pack")
    for _ in range(300):
        pl.step(table, kv)
        pl.current().check()
        if rng.random() < 0.3:                      # a finish and an arrival at the end
            r = int(rng.integers(0, n))
            free.extend(int(x) for x in table[r, 8:-(-int(kv[r]) // bs)])
            table[r:-1] = table[r + 1:].copy()
            kv[r:-1] = kv[r + 1:].copy()
            admit(n - 1)
        for r in np.nonzero(kv % bs == 0)[0]:
            table[r, kv[r] // bs] = free.pop()
        kv += 1
    st = pl.stats
    assert st["planned"] + st["replanned"] + st["patched"] + st["reused"] == 300
    assert st["patched"] > 100
    assert st["planned"] == 1
