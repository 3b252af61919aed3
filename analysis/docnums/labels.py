"""The held-out label of every committed validation record and why it is seen, as its README
says it (analysis/record_labels.py), for docs/validation.md#held-out-sets."""
import glob
import os

import record_labels

# Records outside results/<gpu>/{validation,transfer}/ that the doc's tables quote.
EXTRA = ["h100/launch/priority/set3_plain"]


def _records(ctx):
    found = []
    for topic in ("validation", "transfer"):
        for path in sorted(glob.glob(ctx.path("results", "*", topic, "*", "validation.json"))):
            found.append(os.path.relpath(os.path.dirname(path), ctx.path("results")))
    return sorted(found) + EXTRA


def labels_table(ctx):
    """One line per record: held-out or seen, and the README's reason when seen."""
    out = ["", "| record | held-out / seen | seen because (its README's `seen_because:`) |",
           "|---|---|---|"]
    for rec in _records(ctx):
        readme = record_labels.readme(ctx.repo, rec)
        with open(ctx.path(readme), encoding="utf-8") as f:
            held, why = record_labels.parse(f.read())
        out.append("| `results/%s/` | %s | %s |" % (rec.replace(os.sep, "/"),
                                                     "held-out" if held else "seen",
                                                     why or "—"))
    return "\n".join(out) + "\n"
