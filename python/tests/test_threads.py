"""Threads: a plan read while another thread steps its planner stays valid, and plans,
batches and planners shared by many threads give the answers the same calls give one at a
time. ANVIL_STRESS_THREADS and ANVIL_STRESS_CALLS (calls per thread) size the stress test:
8 x 1,000 by default."""
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import anvil
from anvil.decode import DecodeBatch

THREADS = int(os.environ.get("ANVIL_STRESS_THREADS", "8"))
CALLS = int(os.environ.get("ANVIL_STRESS_CALLS", "1000"))


def test_reference_while_another_thread_steps():
    # reference() ran the planner's plan without the GIL while a step freed it: a crash.
    script = textwrap.dedent("""
        import threading, anvil
        from anvil.decode import DecodeBatch
        b = DecodeBatch(32, levels=(256, 64), fanout=(1, 4), own=40)
        pl = anvil.Planner("profit_pack")
        pl.set_drift(0)
        pl.step(b.table, b.kv_lens)
        tables = [(b.table.copy(), b.kv_lens.copy())]
        for s in range(3):
            t = tables[0][0].copy()
            t[:, 0] = 1000 + s                  # a new root: a fresh plan each step
            tables.append((t, b.kv_lens))
        done = threading.Event()
        def stepper():
            i = 0
            while not done.is_set():
                pl.step(*tables[i % len(tables)])
                i += 1
        th = threading.Thread(target=stepper)
        th.start()
        try:
            for _ in range(300):
                assert pl.current().reference(dim=16, max_requests=8) < 1e-9
                pl.current().check()
        finally:
            done.set()
            th.join()
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stderr[-2000:])


class World:
    """The objects the threads share, and each thread's calls."""
    SCHEDULERS = ("node_naive", "profit_pack")

    def __init__(self):
        self.tables = []
        for own in (5, 21, 40):
            b = DecodeBatch(6, levels=(32, 16), fanout=(1, 2), own=own)
            self.tables.append((b.table.copy(), b.kv_lens.copy()))
        self.batches = [anvil.block_table(t, k) for t, k in self.tables]
        self.plans = [anvil.plan(w, s) for w in self.batches for s in self.SCHEDULERS]
        self.planner = anvil.Planner("profit_pack")
        self.planner.step(*self.tables[0])
        self.view = self.planner.current()
        self.shared_steps = 0

    def calls(self, seed):
        rng = np.random.default_rng(seed)
        return [(int(k), int(a)) for k, a in zip(rng.integers(0, 10, CALLS),
                                                 rng.integers(0, 1000, CALLS))]

    def run(self, calls, out):
        """Makes the calls and appends each answer to out; the answers of calls on the shared
        planner are only checked (they depend on the order of the threads' steps)."""
        b = DecodeBatch(5, levels=(32,), fanout=(1,), own=3)
        own = anvil.Planner("profit_pack")
        for k, a in calls:
            t, lens = self.tables[a % len(self.tables)]
            p = self.plans[a % len(self.plans)]
            if k == 0:
                out.append(anvil.plan(self.batches[a % len(self.batches)],
                                      self.SCHEDULERS[a % 2]).to_json())
            elif k == 1:
                out.append(anvil.simulate(p, gpu="H100-SXM"))
            elif k == 2:
                out.append((p.check(), p.reference(dim=8, max_requests=4)))
            elif k == 3:
                out.append(anvil.block_table(t, lens).to_json())
            elif k == 4:                          # a planner of the thread's own
                reused = own.step(b.table, b.kv_lens)
                out.append((reused, own.current().to_json(), own.stats))
                b.step()
            elif k == 5:
                self.planner.step(t, lens)
                out.append(None)
            elif k == 6:                          # the shared planner's plan, as it is now
                self.view.check()
                out.append(self.view.reference(dim=8, max_requests=4) < 1e-9)
            elif k == 7:
                out.append(anvil.simulate(self.view).predicted_us > 0)
            elif k == 8:
                out.append(len(self.view.tables()["items"]) > 0 and self.view.scheduler)
            else:
                try:
                    anvil.block_table([[0, -1]], [20], block_size=16)
                except ValueError as e:
                    out.append(str(e))


def test_threads_share_plans_batches_and_planners():
    world = World()
    plans = [p.to_json() for p in world.plans]
    calls = [world.calls(i) for i in range(THREADS)]
    serial = []
    for c in calls:
        serial.append([])
        world.run(c, serial[-1])
    steps = world.planner.counts
    results = [[] for _ in range(THREADS)]
    errors = []

    def work(i):
        try:
            world.run(calls[i], results[i])
        except BaseException as e:   # reported below, with the thread
            errors.append((i, repr(e)))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)             # switch threads often
    try:
        threads = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors
    for i in range(THREADS):
        assert results[i] == serial[i], f"thread {i}"
    # Every step of the shared planner counted once; shared plans unchanged.
    shared = sum(k == 5 for c in calls for k, _ in c)
    assert sum(world.planner.counts) == sum(steps) + shared
    assert [p.to_json() for p in world.plans] == plans
