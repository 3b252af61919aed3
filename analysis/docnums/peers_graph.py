"""The numbers of docs/kernels.md#peers on launch overhead: anvil's plans and FlashInfer's
cascade attention both run as CUDA graphs, on the H100's held-out set 3, in one run on one
machine (results/h100/peers_graph/): `anvil exec` of the set with "launch": "graph" and
bench/peers/peer_cascade.py --graphs, which times every FlashInfer configuration eager and
captured."""
from docnums import load_json
from peer_table import best_plans
from peer_table import geomean as _geomean

REC = "results/h100/peers_graph"


def _rows(ctx):
    """Per batch in the cascade's order: (batch, heads, anvil graph µs, its plan, cascade row)
    for the batches where some FlashInfer configuration ran both ways."""
    best = best_plans(load_json(ctx, REC, "anvil_graph.json")["rows"])
    out = []
    for c in load_json(ctx, REC, "cascade.json")["rows"]:
        k = (c["batch"], tuple(c["heads"]))
        if "cascade_graph_us" in c and k in best:
            out.append((c["batch"], c["heads"], best[k][0], best[k][1], c))
    return out


def _name(b, h):
    return "%s %d/%d" % (b, h[0], h[1])


def device(ctx):
    return load_json(ctx, REC, "cascade.json")["gpu"]


def table(ctx):
    """Per batch: levels, anvil's best plan as a graph, the cascade's fastest configuration
    eager and as a graph, and the graph-to-graph ratio."""
    lines = ["| batch | heads | levels | anvil as a graph µs (plan) | FlashInfer cascade eager µs "
             "| as a graph µs (configuration) | cascade / anvil, both graphs |",
             "|---|---|---|---|---|---|---|"]
    for b, h, t, s, c in _rows(ctx):
        lines.append("| %s | %d/%d | %d | %.1f (`%s`) | %.1f | %.1f (`%s`) | %.2f× |" % (
            b, h[0], h[1], c["levels"], t, s, c["cascade_us"], c["cascade_graph_us"],
            c["graph_kind"], c["cascade_graph_us"] / t))
    return "\n".join(lines)


def summary(ctx):
    """Geometric means: graph against graph, and what capture saves the cascade."""
    rows = _rows(ctx)
    ratio = [(r, r[4]["cascade_graph_us"] / r[2]) for r in rows]
    gain = [(r, r[4]["cascade_us"] / r[4]["cascade_graph_us"]) for r in rows]
    lo = min(ratio, key=lambda x: x[1])
    hi = max(ratio, key=lambda x: x[1])
    top = max(gain, key=lambda x: x[1])
    return ("with both as CUDA graphs FlashInfer's cascade took %.2f× anvil's best plan's time "
            "in geometric mean over the %d batches, from %.2f× (%s, %d levels) to %.2f× (%s, %d "
            "levels), faster on %s; captured, the cascade's fastest configuration took %.2f× "
            "less time than its eager call in geometric mean, up to %.2f× less (%s, %d levels)"
            % (_geomean([x for _, x in ratio]), len(rows), lo[1], _name(lo[0][0], lo[0][1]),
               lo[0][4]["levels"], hi[1], _name(hi[0][0], hi[0][1]), hi[0][4]["levels"],
               _faster([(r, x) for r, x in ratio if x < 1]), _geomean([x for _, x in gain]), top[1],
               _name(top[0][0], top[0][1]), top[0][4]["levels"]))


def _faster(rows):
    if not rows:
        return "none"
    return "%d (%s)" % (len(rows), ", ".join("%s by %.2f %%" % (_name(r[0], r[1]), 100 * (1 - x))
                                            for r, x in rows))


def per_level(ctx):
    """The least time per level of the captured cascade's fastest configuration."""
    b, h, t, s, c = min(_rows(ctx), key=lambda r: r[4]["cascade_graph_us"] / r[4]["levels"])
    return "%.1f µs (%s, %d levels; eager, %.1f µs per level in the same run)" % (
        c["cascade_graph_us"] / c["levels"], _name(b, h), c["levels"],
        c["cascade_us"] / c["levels"])
