"""The numbers of docs/kernels.md#peers: anvil's best plan per held-out batch (`anvil exec` of
the H200's held-out set 1) against the variable-length peers of bench/peers/peer_varlen.py and
FlashInfer's cascade attention (bench/peers/peer_cascade.py), measured in one run on one
machine (results/h200/peers/)."""
from docnums import load_json
from peer_table import geomean as _geomean

REC = "results/h200/peers"
# FlashInfer's configurations (bench/peers/peer_cascade.py), as the doc names them.
KIND_NAMES = {"cascade": "the wrapper as it is", "prefill-fa2": "FlashAttention-2 prefill",
              "decode": "decode on CUDA cores", "decode-tc": "decode on tensor cores"}
BACKEND_NAMES = {"fa2": "FlashAttention-2 prefill", "fa3": "FlashAttention-3 prefill"}


def _cascade(ctx):
    """FlashInfer's cascade rows by (batch, heads)."""
    return {(c["batch"], tuple(c["heads"])): c
            for c in load_json(ctx, REC, "cascade.json")["rows"]}


def _rows(ctx):
    """Per batch in the peers' order: (batch, heads, anvil µs, its plan, floor µs, split µs,
    varlen µs, the varlen peers' max abs difference, FlashInfer cascade row)."""
    best = {}
    for r in load_json(ctx, REC, "anvil.json")["rows"]:
        k = (r["batch"], tuple(r["heads"]))
        if k not in best or r["median_us"] < best[k][0]:
            best[k] = (r["median_us"], r["scheduler"], r["floor_us"])
    cascade = _cascade(ctx)
    out = []
    for p in load_json(ctx, REC, "peers.json")["rows"]:
        if "varlen_us" not in p or "sdpa_split_us" not in p:
            continue
        k = (p["batch"], tuple(p["heads"]))
        t, s, fl = best[k]
        out.append((p["batch"], p["heads"], t, s, fl, p["sdpa_split_us"], p["varlen_us"],
                    p["max_abs_diff"], cascade.get(k, {})))
    return out


def _ran(ctx):
    """The batches FlashInfer's cascade ran on: (batch, heads, anvil µs, floor µs, row)."""
    return [(r[0], r[1], r[2], r[4], r[8]) for r in _rows(ctx) if "cascade_us" in r[8]]




def _name(b, h):
    return "%s %d/%d" % (b, h[0], h[1])


def _wrapper_us(c):
    """The library's wrapper as it is, or None where it failed or was not run."""
    return c.get("per_kind", {}).get("cascade", {}).get("us")


def device(ctx):
    return load_json(ctx, REC, "peers.json")["gpu"]


def torch_version(ctx):
    return load_json(ctx, REC, "peers.json")["torch"]


def flashinfer_version(ctx):
    doc = load_json(ctx, REC, "cascade.json")
    return "%s, pages of %d tokens" % (doc["flashinfer"], doc["page_size"])


def table(ctx):
    out = ["", "| batch | heads | bandwidth floor µs | anvil µs (plan) | SDPA split / anvil | "
           "varlen / anvil | FlashInfer cascade / anvil (levels, fastest configuration) |",
           "|---|---|---|---|---|---|---|"]
    for b, h, t, s, fl, sp, vl, _, c in _rows(ctx):
        fi = ("%.2f× (%d, `%s`)" % (c["cascade_us"] / t, c["levels"], c["kind"])
              if "cascade_us" in c else "failed: %s" % c.get("error", "not run"))
        out.append("| %s | %d/%d | %.1f | %.1f (`%s`) | %.2f× | %.2f× | %s |" % (
            b, h[0], h[1], fl, t, s, sp / t, vl / t, fi))
    return "\n".join(out) + "\n"


def summary(ctx):
    rows = _rows(ctx)
    skew = [r for r in rows if r[0].startswith("skew")]
    fi = [r for r in rows if "cascade_us" in r[8]]
    wins = [r for r in fi if r[8]["cascade_us"] < r[2]]
    return ("geometric mean over the %d batches: SDPA split %.1f×, varlen %.1f×, FlashInfer "
            "cascade %.2f× anvil's time (over the %d it ran; faster than anvil's best plan on "
            "%s); on the %d unshared skewed batches %.1f×, %.1f× and %.2f×; the varlen peers' "
            "outputs agree within %.1e, the cascade's with an fp32 reference within %.1e" % (
                len(rows), _geomean([r[5] / r[2] for r in rows]),
                _geomean([r[6] / r[2] for r in rows]),
                _geomean([r[8]["cascade_us"] / r[2] for r in fi]), len(fi),
                ("%d: " % len(wins) + ", ".join(_name(r[0], r[1]) for r in wins))
                if wins else "none", len(skew),
                _geomean([r[5] / r[2] for r in skew]), _geomean([r[6] / r[2] for r in skew]),
                _geomean([r[8]["cascade_us"] / r[2] for r in skew if "cascade_us" in r[8]]),
                max(r[7] for r in rows), max(r[8]["max_abs_diff"] for r in fi)))


def kinds(ctx):
    """How often each FlashInfer configuration was the fastest correct one, and how the
    library's wrapper as it is compares with the fastest."""
    ran = _ran(ctx)
    listed = load_json(ctx, REC, "cascade.json")["kinds"]
    count = {k: sum(1 for r in ran if r[4]["kind"] == k) for k in listed}
    # most often fastest first, ties in the order of --kinds
    order = sorted((k for k in listed if count[k]), key=lambda k: -count[k])
    fastest = ", ".join("%s on %d%s" % (KIND_NAMES.get(k, k), count[k], "" if i else " batches")
                        for i, k in enumerate(order))
    w = [(r, _wrapper_us(r[4]) / r[4]["cascade_us"]) for r in ran if _wrapper_us(r[4])]
    worst = max(w, key=lambda x: x[1])
    backends = sorted({r[4]["cascade_backend"] for r in ran if r[4].get("cascade_backend")})
    return ("the fastest configuration was %s; the wrapper as it is (%s on every level) took "
            "%.2f× the fastest configuration's time in geometric mean, up to %.2f× (%s), and "
            "%.2f× anvil's" % (
                fastest,
                " or ".join(BACKEND_NAMES.get(b, b) for b in backends) or "its default backend",
                _geomean([x for _, x in w]), worst[1], _name(worst[0][0], worst[0][1]),
                _geomean([_wrapper_us(r[4]) / r[2] for r, _ in w])))


def skew_wrapper(ctx):
    """The wrapper as it is against the fastest configuration on the one-level batches, whose
    every entry is one request's query row."""
    one = [r for r in _ran(ctx) if r[4]["levels"] == 1 and _wrapper_us(r[4])]
    if not one:
        return "no one-level batch"
    parts = ["%.2f× (%s)" % (_wrapper_us(r[4]) / r[4]["cascade_us"], _name(r[0], r[1]))
             for r in one]
    kinds = sorted({r[4]["kind"] for r in one})
    return "%s the time of the fastest configuration (%s)" % (
        ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0],
        "`%s` on each" % kinds[0] if len(kinds) == 1 else ", ".join("`%s`" % k for k in kinds))


def by_family(ctx):
    """FlashInfer's cascade / anvil per batch family (geometric mean), with its levels."""
    fam = {}
    for r in _ran(ctx):
        fam.setdefault(r[0].split("-")[0], []).append(r)
    parts = []
    for f, rs in sorted(fam.items(), key=lambda x: _geomean([r[4]["cascade_us"] / r[2]
                                                             for r in x[1]])):
        lv = sorted({r[4]["levels"] for r in rs})
        parts.append("%s %.2f× (%s level%s)" % (
            f, _geomean([r[4]["cascade_us"] / r[2] for r in rs]),
            "%d" % lv[0] if len(lv) == 1 else "%d–%d" % (lv[0], lv[-1]),
            "" if lv == [1] else "s"))
    return ", ".join(parts)


def _by_ratio(ctx, reverse):
    return sorted(_ran(ctx), key=lambda r: r[4]["cascade_us"] / r[2], reverse=reverse)


def _levels(c):
    return "%d level%s" % (c["levels"], "" if c["levels"] == 1 else "s")


def closest(ctx):
    """The three batches where FlashInfer's cascade comes closest to anvil: its ratio, levels,
    KV, fastest configuration, and anvil's time against the bandwidth floor."""
    return "; ".join("%s %.2f× (%s, %.2f GB of KV, `%s`; anvil at %.2f× the bandwidth floor)" % (
        _name(b, h), c["cascade_us"] / t, _levels(c), c["cached_kv_GB"], c["kind"], t / fl)
        for b, h, t, fl, c in _by_ratio(ctx, False)[:3])


def farthest(ctx):
    """The three batches where anvil leads FlashInfer's cascade most."""
    return "; ".join("%s %.2f× (%s, %.2f GB of KV)" % (
        _name(b, h), c["cascade_us"] / t, _levels(c), c["cached_kv_GB"])
        for b, h, t, fl, c in _by_ratio(ctx, True)[:3])


def per_level(ctx):
    """The least time per level of FlashInfer's fastest configuration over the batches."""
    b, h, t, fl, c = min(_ran(ctx), key=lambda r: r[4]["cascade_us"] / r[4]["levels"])
    return "%.1f µs (%s, %d levels)" % (c["cascade_us"] / c["levels"], _name(b, h), c["levels"])
