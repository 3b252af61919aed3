"""The `anvil` program's commands as functions, each returning its rows as a list of dicts
(pandas.DataFrame(rows) loads them): trace, replay, merge and offline validate, through the
C library's calls (include/anvil/trace.h, replay.h, results.h, validate.h). They hold the GIL
while they run: each row becomes a dict as the library hands it over."""
from __future__ import annotations

import os
from typing import Optional

from . import _anvil, _values
from ._values import integer, name, setting


def _assignments(params, what: str) -> list:
    if params is None:
        return []
    if not isinstance(params, dict):
        raise TypeError(f"{what}: expected a dict, got {type(params).__name__}")
    return [setting(k, v, what) for k, v in params.items()]


def trace(path, scheduler: str, params: Optional[dict] = None, gpu: str = "H200-SXM",
          cost_model: str = "roofline", cost_params: Optional[dict] = None,
          sim: str = "engine", heads: tuple = (32, 8), no_limits: bool = False) -> list:
    """`anvil trace`: every step of a JSONL decode trace planned (or its previous plan reused,
    PAT's lazy update) and predicted; one dict per step: step, requests, nodes, items, plan
    ("planned" or "reused"), predicted_us, hbm_bytes, bubble_frac. heads are the query and KV
    heads of steps that name none."""
    if not isinstance(heads, (tuple, list)) or len(heads) != 2:
        raise TypeError("heads: expected (query heads, KV heads)")
    return _anvil.trace(_values.path(path, "path"), name(scheduler, "scheduler"),
                        _assignments(params, "params"), name(cost_model, "cost_model"),
                        _assignments(cost_params, "cost_params"), name(gpu, "gpu"),
                        name(sim, "sim"), integer(heads[0], "heads"),
                        integer(heads[1], "heads"), bool(no_limits))


def replay(plan, trace, gpu: str = "H200-SXM", cost_model: Optional[str] = None) -> dict:
    """`anvil replay`: a plan's measured per-CTA trace replayed through the simulator's
    dispatch model, then the plan predicted with a cost model (default "profile", skipped
    when the GPU has no profile) and its CTA durations compared with the measured ones. A
    dict: "report" (the replay: measured_us, replayed_us, rel_err, launches, ...), "rows"
    (one dict per launch: launch, tile, ctas, predicted and measured medians and p90s;
    launch -1 is the merge), "compared", "not_compared" (why not) and "predicted_us"."""
    return _anvil.replay(_values.path(plan, "plan"), _values.path(trace, "trace"),
                         name(gpu, "gpu"), name(cost_model, "cost_model", none_ok=True))


def merge(dirs, out, experiment=None) -> list:
    """`anvil merge`: the result directories of an experiment's shards (`anvil run --shard
    I/N`) written as one result set at `out`, byte-identical to a single run; one dict per
    row of the results table (index, gpu, batch, scheduler, heads, status, error, items,
    bytes, floor_us, predicted_us)."""
    if isinstance(dirs, (str, os.PathLike)) or not hasattr(dirs, "__iter__"):
        raise TypeError("dirs: expected a list of result directories")
    dirs = [_values.path(d, "dirs") for d in dirs]
    return _anvil.merge(dirs, _values.path(out, "out"),
                        None if experiment is None else _values.path(experiment, "experiment"))


def validate_offline(record, experiment=None, out=None, spec=None,
                     no_calibration: bool = False) -> list:
    """`anvil validate --offline`: a recorded validation report's measurements against
    predictions made again with the current simulator (no GPU); one dict per (batch,
    scheduler) pair: predicted_us, measured_us and its spread, replayed_us, params,
    same_as. With `out` the report is written there (validation.json, validation.csv)."""
    def opt(v, what):
        return None if v is None else _values.path(v, what)
    return _anvil.validate_offline(_values.path(record, "record"), opt(experiment, "experiment"),
                                   opt(out, "out"), opt(spec, "spec"), bool(no_calibration))
