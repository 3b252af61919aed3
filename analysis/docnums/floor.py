"""The numbers of docs/kernels.md#the-floor: the H200's copy and read-stream bandwidths
(results/h200/floor/bandwidth_*.txt, `anvil exec --copy-bw` in five processes), the read-stream
variants (read_stream.txt, bench/read_stream.cu), and the realistic set 2's best plans against
the floor by each bandwidth (results/h200/floor/heldout2/: the record re-predicted offline with
the spec that holds the read stream)."""
import math
import re
import statistics

from docnums import load_json

REC = ("results", "h200", "floor")
SET = "results/h200/validation/heldout2"


def _bandwidths(ctx):
    copy, read = [], []
    for i in range(1, 6):
        with open(ctx.path(*REC, "bandwidth_%d.txt" % i), encoding="utf-8") as f:
            m = re.search(r"copy bandwidth \(read\+write\): (\d+) GB/s; read stream: (\d+) GB/s",
                          f.read())
        if not m:
            raise ValueError("no bandwidth line in bandwidth_%d.txt" % i)
        copy.append(float(m.group(1)))
        read.append(float(m.group(2)))
    return statistics.median(copy), statistics.median(read), min(read), max(read)


def _variants(ctx):
    with open(ctx.path(*REC, "read_stream.txt"), encoding="utf-8") as f:
        rates = [float(m.group(1)) for m in re.finditer(r"(\d+) GB/s", f.read())]
    if len(rates) < 19:
        raise ValueError("read_stream.txt: expected 19 rates, found %d" % len(rates))
    return rates[:12], rates[12], rates[13:17]


def bandwidths(ctx):
    copy, read, lo, hi = _bandwidths(ctx)
    grid, after, later = _variants(ctx)
    sheet = load_json(ctx, "gpus", "H200-SXM.json")["hbm_bw_datasheet_GBps"]["value"]
    return ("copy %.0f GB/s (bytes read + written), read stream %.0f GB/s (%.0f-%.0f over the five "
            "processes), %.3f× the copy and %.1f %% of the datasheet's %.0f GB/s; the twelve "
            "read-stream variants of `bench/read_stream.cu` span %.0f-%.0f GB/s, and the same "
            "read right after 22 copies of 1 GiB measures %.0f GB/s, back to %.0f-%.0f GB/s "
            "from the next measurement on"
            % (copy, read, lo, hi, read / copy, 100 * read / sheet, sheet, min(grid), max(grid),
               after, min(later), max(later)))


def _best(rows, key):
    by = {}
    for r in rows:
        if r["scheduler"].startswith("auto"):
            continue
        k = (r["batch"], tuple(r["heads"]))
        b = by.setdefault(k, [float("inf"), r[key]])
        b[0] = min(b[0], r["measured_us"])
    return by


def _geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def heldout_table(ctx):
    """Best plan / floor over the realistic set 2, with the floor's bandwidth the copy (the
    record as measured), the read stream and the datasheet."""
    copy = _best(load_json(ctx, SET, "validation.json")["rows"], "floor_us")
    new = load_json(ctx, *REC, "heldout2", "validation.json")["rows"]
    read, sheet = _best(new, "floor_us"), _best(new, "floor_datasheet_us")
    out = ["| floor's bandwidth | best plan / floor, geomean | least | worst | below the floor |"
           " above 1.6× | floor ≤ 25 µs: batches, geomean |", "|---|---|---|---|---|---|---|"]
    for label, by in (("copy (the record as measured)", copy), ("read stream", read),
                      ("datasheet", sheet)):
        ratio = [b / f for b, f in by.values()]
        small = [b / f for b, f in by.values() if f <= 25.0]
        out.append("| %s | %.2f× | %.2f× | %.2f× | %d | %d | %s |" % (
            label, _geo(ratio), min(ratio), max(ratio), sum(1 for x in ratio if x < 1),
            sum(1 for x in ratio if x > 1.6),
            "%d, %.2f×" % (len(small), _geo(small)) if small else "none"))
    return "\n".join(out)
