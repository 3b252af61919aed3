"""Generators of the numbers quoted in docs/*.md (scripts/doc_numbers.py writes and checks them).

One module per doc topic; each public function takes the context (ctx.repo, ctx.path(...),
ctx.repro_study(study)) and returns the text that goes between its markers in the doc."""
import json

import record_labels


class SkipBlock(Exception):
    """Raised by a generator whose input is absent (a reproduction that was not run)."""


def load_json(ctx, *parts):
    with open(ctx.path(*parts), encoding="utf-8") as f:
        return json.load(f)


def label(ctx, record):
    """'held-out' or 'seen' of a validation record (record: 'h100/validation/heldout3'), from
    its README's `held_out:` line (analysis/record_labels.py), never from a table's prose."""
    return record_labels.label(ctx.repo, record)


def need_repro(ctx, study):
    """out/<study>/ of a fresh ./scripts/reproduce, or SkipBlock when it was not run (unless
    the check was asked to require it)."""
    d = ctx.repro_study(study)
    if d is None:
        if getattr(ctx, "require_repro", False):
            raise ValueError(f"no fresh reproduction of '{study}' under {ctx.repro}")
        raise SkipBlock(study)
    return d
