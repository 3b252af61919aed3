"""The summary of the longer fuzzing campaign quoted in docs/reliability.md#fuzzing
(results/host/fuzz/campaign.txt: per harness, its crash count and libFuzzer's last status
line)."""
import re

REC = ("results", "host", "fuzz", "campaign.txt")


def _harnesses(ctx):
    with open(ctx.path(*REC), encoding="utf-8") as f:
        text = f.read()
    out = {}
    for m in re.finditer(r"^(fuzz_\w+): crashes (\d+),.*\n\s+\1\| #(\d+):.*"
                         r"oom/timeout/crash: (\d+)/(\d+)/(\d+) time: (\d+)s", text, re.M):
        name, crashes, runs, oom, tmo, crash, secs = m.groups()
        out[name] = {"kept": int(crashes), "runs": int(runs), "secs": int(secs),
                     "findings": int(oom) + int(tmo) + int(crash)}
    if not out:
        raise ValueError("no harness in " + "/".join(REC))
    return out


def campaign_summary(ctx):
    h = _harnesses(ctx)
    findings = sum(x["findings"] + x["kept"] for x in h.values())
    runs = sorted(h.items(), key=lambda kv: kv[1]["runs"])
    return ("%d harnesses for %d-%d s each with two workers: %.1f M (%s) to %.1f M (%s) inputs "
            "per harness, %s" % (len(h), min(x["secs"] for x in h.values()),
                                 max(x["secs"] for x in h.values()), runs[0][1]["runs"] / 1e6,
                                 runs[0][0], runs[-1][1]["runs"] / 1e6, runs[-1][0],
                                 "no crash, timeout or out-of-memory input" if not findings
                                 else "%d findings" % findings))


def python_summary(ctx):
    with open(ctx.path("results", "host", "fuzz", "python.txt"), encoding="utf-8") as f:
        text = f.read()
    runs = int(re.search(r"number_of_executed_units: (\d+)", text).group(1))
    secs = int(re.search(r"^Done \d+ runs in (\d+) second", text, re.M).group(1))
    kept = int(re.search(r"crash inputs kept: (\d+)", text).group(1))
    return "%.2f M inputs in %d s, %s" % (runs / 1e6, secs,
                                          "no finding" if not kept else "%d findings" % kept)
