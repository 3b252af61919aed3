"""Held-out or seen: the label every validation record carries in its README
(docs/validation.md#held-out-sets), read the same way by scripts/check_record.py and by the
tables of analysis/docnums/.

A record's README (in its folder or the nearest folder above it under results/<gpu>/) holds

    held_out: true | false
    seen_because: <the change or the trial that made it seen, with its commit>

A record is held out only if its batches were drawn after the last change to everything it
measures and nothing was tuned or tried on it; `seen_because` is required when it is not."""
import os
import re

HELD_OUT = re.compile(r"^held_out:\s*(\S+)\s*$", re.M)
SEEN_BECAUSE = re.compile(r"^seen_because:\s*(.*\S)\s*$", re.M)
COMMIT = re.compile(r"\b[0-9a-f]{7,40}\b")


def parse(text):
    """(held_out, seen_because) of a README's text; raises ValueError naming what is wrong."""
    m = HELD_OUT.findall(text)
    if len(m) != 1 or m[0] not in ("true", "false"):
        raise ValueError("needs one line 'held_out: true' or 'held_out: false'")
    held = m[0] == "true"
    why = SEEN_BECAUSE.findall(text)
    if held and why:
        raise ValueError("is held out but says why it is seen ('seen_because:')")
    if not held and (len(why) != 1 or not COMMIT.search(why[0])):
        raise ValueError("is seen: needs one line 'seen_because:' naming the change or the "
                         "trial with its commit")
    return held, (why[0] if why else None)


def readme(repo, record):
    """The README.md nearest above results/<record>/ (record: 'h100/validation/heldout3')
    that carries a label, as a path relative to repo, or None."""
    parts = record.strip("/").split("/")
    for depth in range(len(parts), 1, -1):
        rel = "/".join(["results"] + parts[:depth] + ["README.md"])
        try:
            with open(os.path.join(repo, rel), encoding="utf-8") as f:
                if HELD_OUT.search(f.read()):
                    return rel
        except OSError:
            continue
    return None


def label(repo, record):
    """'held-out' or 'seen', from the record's README; raises ValueError when it has none."""
    rel = readme(repo, record)
    if rel is None:
        raise ValueError(f"results/{record}: no README.md above it carries 'held_out:'")
    with open(os.path.join(repo, rel), encoding="utf-8") as f:
        held, _ = parse(f.read())
    return "held-out" if held else "seen"
