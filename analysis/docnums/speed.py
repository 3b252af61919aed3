"""The speed figures of README.md#speed-benchmarks-not-tests, docs/simulator.md#speed and
docs/studies.md#benchmark: results/host/speed/ (scripts/bench-records: `anvil bench sim`,
`anvil bench plan`, scripts/bench-study and the machine they ran on)."""
import glob
import json
import os
import re

RECORD = "results/host/speed"
TARGET_CTAS_PER_S = 5e6


def _text(ctx, name):
    with open(ctx.path(RECORD, name), encoding="utf-8") as f:
        return f.read()


def _summary(text):
    """The key=value lines of a benchmark's output."""
    return {m.group(1): float(m.group(2))
            for m in re.finditer(r"^(\w+)=([0-9.eE+-]+)$", text, re.M)}


def _machine(ctx):
    out = {}
    for line in _text(ctx, "machine.txt").splitlines():
        key, _, value = line.partition(": ")
        out[key] = value
    return out


def _sim(ctx):
    """(short rows, {batch: (title, rows)}, summary) of bench_sim.txt; rows are dicts."""
    text = _text(ctx, "bench_sim.txt")
    short, real, batch, header = [], {}, None, None
    for line in text.splitlines():
        if line.startswith("## "):
            batch = line[3:].split(":", 1)[0]
            real[batch] = (line[3:], [])
        elif line.split()[:1] in (["ctas"], ["scheduler"]):
            header = line.split()
        elif header and line.strip() and not line.startswith("#") and "=" not in line:
            cells = line.split()
            row = {k: (v if k == "scheduler" else float(v)) for k, v in zip(header, cells)}
            (real[batch][1] if batch else short).append(row)
        elif not line.strip():
            header = None
    return short, real, _summary(text)


def _mega(x):
    if x >= 1e6:
        return "%.2f M" % (x / 1e6)
    return "%.3g k" % (x / 1e3) if x >= 1e3 else "%.0f" % x


def _studies(ctx):
    recs = []
    for path in glob.glob(ctx.path(RECORD, "study_*_j*.json")):
        with open(path, encoding="utf-8") as f:
            recs.append(json.load(f))
    return sorted(recs, key=lambda r: (r["forests"], r["jobs"]))


def measured_on(ctx):
    """Inline: the machine, build and date of the record."""
    m = _machine(ctx)
    kind = "VM (%s)" % m["hypervisor"] if m.get("hypervisor") else "host"
    return ("Measured with `scripts/bench-records` (record `%s/`) on a %s-core %s %s, CPU %s, "
            "%s build from `scripts/setup`, %s; load average %s before and %s after (the "
            "machine was shared with other builds: wall times vary with its load, the CPU "
            "times less)"
            % (RECORD, m["cores"], m["os"].split(",")[0], kind, m["cpu"],
               m["build"].split(" ")[0], m["date"], m["load average before"].split(" ")[0],
               m["load average after"].split(" ")[0]))


def readme_table(ctx):
    short, real, s = _sim(ctx)
    plan = _summary(_text(ctx, "bench_plan.txt"))
    runs = int(short[0]["runs"]) if short else 0
    n_plans = sum(len(rows) for _, rows in real.values())
    return ("\n| command | figure | target |\n|---|---|---|\n"
            "| `build/anvil bench sim` | `sim_ctas_per_s=%.0f`: short-node plans (median of the "
            "sizes ≥ 10k CTAs; each the median of %d runs; CPU time of the simulating thread) "
            "| ≥ 5,000,000 CTAs/s |\n"
            "| `build/anvil bench sim` | `sim_realistic_ctas_per_s=%.0f`: %d scheduled plans of "
            "%d realistic batches (shared documents of 32k-128k tokens, a conversation, trees; "
            "their CTAs over their summed median times); the slowest plan %s CTAs/s "
            "| ≥ 5,000,000 CTAs/s |\n"
            "| `build/anvil bench plan` | `plan_us_256_max=%.1f` (the slowest scheduler but "
            "`auto` at 256 requests; median of 21 runs) | ≤ 100 µs |\n"
            % (s["sim_ctas_per_s"], runs, s["sim_realistic_ctas_per_s"], n_plans, len(real),
               _mega(s["sim_realistic_worst_ctas_per_s"]), plan["plan_us_256_max"]))


def studies_table(ctx):
    out = ["", "| forests × schedulers (rows) | `--jobs` | wall | CPU (user + sys) | peak memory "
           "| runs | outputs of the runs |", "|---|---:|---:|---:|---:|---:|---|"]
    for r in _studies(ctx):
        m = r["median"]
        out.append("| %s × 5 (%s) | %d | %.1f s | %.1f s | %.0f MiB | median of %d | %s |"
                   % (format(r["forests"], ","), format(r["rows"], ","), r["jobs"], m["wall_s"],
                      m["cpu_s"], m["peak_rss_MiB"], r["runs"],
                      "byte-identical" if r["identical_results"] else "DIFFERENT"))
    return "\n".join(out) + "\n"


def sim_short_table(ctx):
    short, _, _ = _sim(ctx)
    out = ["", "| CTAs | items | CPU ms | CTAs/s | engine memory |", "|---:|---:|---:|---:|---:|"]
    for r in short:
        out.append("| %s | %s | %.3g | %s | %.2f MiB |"
                   % (format(int(r["ctas"]), ","), format(int(r["items"]), ","), r["cpu_ms"],
                      _mega(r["ctas_per_s"]), r["engine_MiB"]))
    return "\n".join(out) + "\n"


def sim_realistic_table(ctx):
    _, real, _ = _sim(ctx)
    scheds = []
    for _, rows in real.values():
        scheds += [r["scheduler"] for r in rows if r["scheduler"] not in scheds]
    out = ["", "| batch | " + " | ".join("`%s` CTAs/s (CPU ms)" % s for s in scheds) + " |",
           "|---|" + "---:|" * len(scheds)]
    for title, rows in real.values():
        by = {r["scheduler"]: r for r in rows}
        cells = ["%s (%.3g)" % (_mega(by[s]["ctas_per_s"]), by[s]["cpu_ms"]) if s in by else "–"
                 for s in scheds]
        name, _, rest = title.partition(": ")
        out.append("| %s (%s) | %s |" % (name, rest.split(", depth")[0], " | ".join(cells)))
    return "\n".join(out) + "\n"


def sim_summary(ctx):
    short, real, s = _sim(ctx)
    docs = {name: rows for name, (_, rows) in real.items() if name.startswith("doc-")}
    qc = [(name, next(r for r in rows if r["scheduler"] == "query_centric"))
          for name, rows in docs.items()]
    growth = ""
    if len(qc) >= 2:
        growth = ("; one `query_centric` plan takes %s ms from %s to %s"
                  % (" / ".join("%.3g" % r["cpu_ms"] for _, r in qc), qc[0][0], qc[-1][0]))
    met = [s[k] >= TARGET_CTAS_PER_S for k in ("sim_ctas_per_s", "sim_realistic_ctas_per_s")]
    word = lambda ok: "meets" if ok else "misses"  # noqa: E731
    verdict = ("%s the target of 5,000,000 CTAs/s on both sets" % word(met[0])
               if met[0] == met[1] else
               "%s the target of 5,000,000 CTAs/s on short nodes and %s it on realistic "
               "batches" % (word(met[0]), word(met[1])))
    runs = int(short[0]["runs"]) if short else 0
    return ("`sim_ctas_per_s=%.0f` (short nodes) and `sim_realistic_ctas_per_s=%.0f` "
            "(realistic batches, slowest plan %s CTAs/s), medians of %d runs%s. The engine %s"
            % (s["sim_ctas_per_s"], s["sim_realistic_ctas_per_s"],
               _mega(s["sim_realistic_worst_ctas_per_s"]), runs, growth, verdict))
