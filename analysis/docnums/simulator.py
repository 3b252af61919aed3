"""The numbers of docs/simulator.md#l2-over-ranges: how the range L2 moved the committed
records' predictions, from results/host/simulator/l2_ranges_drift.json
(analysis/prediction_drift.py)."""
from docnums import label, load_json

RECORD = "results/host/simulator/l2_ranges_drift.json"


def _sets(ctx):
    return load_json(ctx, RECORD)["sets"]


def spec_kind(ctx, record):
    """'datasheet only' when the record was predicted with a GPU's datasheet spec
    (`--no-calibration`: its spec reads "gpus/<gpu>.json (uncalibrated)"), else 'calibrated'."""
    spec = load_json(ctx, "results", record, "validation.json").get("spec", "")
    return "datasheet only" if "(uncalibrated)" in spec else "calibrated"


def l2_drift_table(ctx):
    rows = ["", "| record | held-out / seen | spec | pairs | MAPE, per-line L2 | MAPE, range L2 | "
                "pairs moved > 1 % | of those, toward the measured time | largest move |",
            "|---|---|---|---|---|---|---|---|---|"]
    for s in _sets(ctx):
        rec = s["set"].replace("results/", "")
        rows.append("| `%s` | %s | %s | %d | %.2f %% | %.2f %% | %d | %d | %+.1f %% |" % (
            rec, label(ctx, rec), spec_kind(ctx, rec), s["pairs"], s["mape_before"],
            s["mape_after"], s["pairs_moved"], s["moved_toward_measured"],
            s["worst_pair_percent"]))
    return "\n".join(rows) + "\n"


def l2_drift_line(ctx):
    sets = _sets(ctx)
    better = sum(s["mape_after"] < s["mape_before"] for s in sets)
    worst = max(s["mape_after"] - s["mape_before"] for s in sets)
    moved = sum(s["pairs_moved"] for s in sets)
    toward = sum(s["moved_toward_measured"] for s in sets)
    return ("the MAPE fell on %d of %d records and rose by at most %.2f points on the others; "
            "%d pairs moved by more than 1 %%, %d of them (%.0f %%) toward their measured time"
            % (better, len(sets), worst, moved, toward, 100.0 * toward / moved))
