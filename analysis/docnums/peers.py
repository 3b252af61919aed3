"""The numbers of docs/kernels.md#peers-on-variable-length-batches: anvil's best plan per
held-out batch (`anvil exec` of the held-out experiment) against the two variable-length peers
of validation/peer_varlen.py, measured in one run on one machine (results/h100/peers/)."""
import math

from docnums import load_json

REC = "results/h100/peers"


def _rows(ctx):
    """Per batch in the peers' order: (batch, heads, anvil µs, its plan, floor µs, split µs,
    varlen µs, the peers' max abs difference)."""
    best = {}
    for r in load_json(ctx, REC, "anvil.json")["rows"]:
        k = (r["batch"], tuple(r["heads"]))
        if k not in best or r["median_us"] < best[k][0]:
            best[k] = (r["median_us"], r["scheduler"], r["floor_us"])
    out = []
    for p in load_json(ctx, REC, "peers.json")["rows"]:
        if "varlen_us" not in p or "sdpa_split_us" not in p:
            continue
        t, s, fl = best[(p["batch"], tuple(p["heads"]))]
        out.append((p["batch"], p["heads"], t, s, fl, p["sdpa_split_us"], p["varlen_us"],
                    p["max_abs_diff"]))
    return out


def _geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def device(ctx):
    return load_json(ctx, REC, "peers.json")["gpu"]


def torch_version(ctx):
    return load_json(ctx, REC, "peers.json")["torch"]


def table(ctx):
    out = ["", "| batch | heads | bandwidth floor µs | anvil µs (plan) | SDPA split / anvil | "
           "varlen / anvil |", "|---|---|---|---|---|---|"]
    for b, h, t, s, fl, sp, vl, _ in _rows(ctx):
        out.append("| %s | %d/%d | %.1f | %.1f (`%s`) | %.2f× | %.2f× |" % (
            b, h[0], h[1], fl, t, s, sp / t, vl / t))
    return "\n".join(out) + "\n"


def summary(ctx):
    rows = _rows(ctx)
    skew = [r for r in rows if r[0].startswith("skew")]
    return ("geometric mean over the %d batches: SDPA split %.1f×, varlen %.1f× anvil's time; "
            "on the %d unshared skewed batches %.1f× and %.1f×; the peers' outputs agree within "
            "%.1e" % (len(rows), _geomean([r[5] / r[2] for r in rows]),
                      _geomean([r[6] / r[2] for r in rows]), len(skew),
                      _geomean([r[5] / r[2] for r in skew]), _geomean([r[6] / r[2] for r in skew]),
                      max(r[7] for r in rows)))
