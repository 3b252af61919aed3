"""Figures and inputs of the validation (docs/validation.md).

  figures DIR [DIR ...] [-o OUTDIR]
      DIR holds validation.json of `anvil validate`; writes OUTDIR/validation_scatter.png
      (predicted vs measured, log-log, with y = x, one panel per DIR) and
      OUTDIR/validation_error_by_scheduler.png (APE per scheduler, one box per label).
  timeline SIMULATED MEASURED [-o PNG]
      the two Chrome-trace timelines `anvil validate --trace` writes for one (batch,
      scheduler): CTAs as bars per SM, simulated above, measured below, same time axis.
  seeds PROFILE [-o EXP.json] [-n 30]
      writes the random-forest validation experiment; its seeds are the first n 32-bit words
      of SHA-256 chains over the committed profile file, so they can only be chosen after the
      profile exists and anyone can re-derive them.
"""
import argparse
import hashlib
import json
import os
import sys



def pyplot():
    """matplotlib only for the figures: `seeds` runs where it is not installed (the GPU host)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"validation.py: {path}: {e}")


def load_validation(d):
    path = d if d.endswith(".json") else os.path.join(d, "validation.json")
    return load_json(path)


def figures(args):
    plt = pyplot()
    docs = [load_validation(d) for d in args.dirs]
    os.makedirs(args.out, exist_ok=True)
    fig, axes = plt.subplots(1, len(docs), figsize=(5.5 * len(docs), 5), squeeze=False)
    for ax, doc in zip(axes[0], docs):
        rows = doc["rows"]
        labels = sorted({r["scheduler"] for r in rows})
        cmap = plt.get_cmap("tab20")
        for i, lab in enumerate(labels):
            xs = [r["measured_us"] for r in rows if r["scheduler"] == lab]
            ys = [r["predicted_us"] for r in rows if r["scheduler"] == lab]
            ax.scatter(xs, ys, s=9, color=cmap(i % 20), label=lab, alpha=0.8)
        lo = min(min(r["measured_us"], r["predicted_us"]) for r in rows) * 0.8
        hi = max(max(r["measured_us"], r["predicted_us"]) for r in rows) * 1.25
        ax.plot([lo, hi], [lo, hi], "k-", lw=1, label="y = x")
        ax.plot([lo, hi], [lo * 1.1, hi * 1.1], "k:", lw=0.8, label="±10 %")
        ax.plot([lo, hi], [lo / 1.1, hi / 1.1], "k:", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ax.set_xlabel("measured (µs, median)")
        ax.set_ylabel("predicted by the simulator (µs)")
        s = doc["summary"]
        ax.set_title(f"{doc['experiment']} on {doc['device']}\nMAPE {100 * s['mape']:.1f} %, "
                     f"Spearman {s['spearman']:.3f}, {s['pairs']} pairs", fontsize=9)
        ax.legend(fontsize=6, ncol=2, loc="upper left")
    fig.tight_layout()
    p = os.path.join(args.out, "validation_scatter.png")
    fig.savefig(p, dpi=130)
    print(p)

    fig, axes = plt.subplots(1, len(docs), figsize=(6 * len(docs), 4.5), squeeze=False)
    for ax, doc in zip(axes[0], docs):
        rows = doc["rows"]
        labels = list(dict.fromkeys(r["scheduler"] for r in rows))
        data = [[100 * r["ape"] for r in rows if r["scheduler"] == lab and r["ape"] is not None]
                for lab in labels]
        ax.boxplot(data, showfliers=True)
        ax.set_xticks(range(1, len(labels) + 1))
        ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=8)
        ax.axhline(10, color="k", ls=":", lw=0.8)
        ax.set_ylabel("absolute percentage error (%)")
        ax.set_title(f"{doc['experiment']}: error by scheduler", fontsize=9)
    fig.tight_layout()
    p = os.path.join(args.out, "validation_error_by_scheduler.png")
    fig.savefig(p, dpi=130)
    print(p)


def trace_bars(path):
    """CTA bars (sm, start, duration, launch) of a Chrome trace; times from the first start."""
    ev = [e for e in load_json(path)["traceEvents"] if e.get("ph") == "X"]
    if not ev:
        sys.exit(f"validation.py: {path}: no CTA events")
    t0 = min(e["ts"] for e in ev)
    return [(e["tid"], e["ts"] - t0, e["dur"], e["pid"]) for e in ev]


def timeline(args):
    plt = pyplot()
    sim, meas = trace_bars(args.simulated), trace_bars(args.measured)
    end = max(max(s + d for _, s, d, _ in sim), max(s + d for _, s, d, _ in meas))
    fig, axes = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    cmap = plt.get_cmap("tab10")
    for ax, bars, name in ((axes[0], sim, "simulated"), (axes[1], meas, "measured")):
        for sm, s, d, launch in bars:
            ax.broken_barh([(s, d)], (sm - 0.4, 0.8), color=cmap(launch % 10), lw=0)
        span = max(s + d for _, s, d, _ in bars)
        ax.set_ylabel("SM")
        ax.set_title(f"{name}: {len(bars)} CTAs, last ends at {span:.1f} µs "
                     f"(from the first CTA start)", fontsize=9)
        ax.set_xlim(0, end * 1.02)
    axes[1].set_xlabel("time (µs)")
    fig.suptitle(os.path.basename(args.measured).split(".")[0].replace("__", " / "), fontsize=10)
    fig.tight_layout()
    out = args.output or "validation_timeline.png"
    fig.savefig(out, dpi=130)
    print(out)


def seeds(args):
    with open(args.profile, "rb") as f:
        h = hashlib.sha256(f.read()).digest()
    out = []
    while len(out) < args.n:
        for i in range(0, 32, 4):
            out.append(int.from_bytes(h[i:i + 4], "little") % 1000000)
        h = hashlib.sha256(h).digest()
    out = out[:args.n]
    digest = hashlib.sha256(open(args.profile, "rb").read()).hexdigest()
    exp = {
        "name": "validate-random",
        "description": (f"Held-out validation: {args.n} seeded random forests, never "
                        f"seen by the profile or any tuning. Seeds derived after the profile "
                        f"was committed: `python3 analysis/validation.py seeds {args.profile}` "
                        f"(SHA-256 {digest[:16]}... of that file)."),
        "gpu": "H200-SXM",
        "sim": "engine",
        "heads": [[32, 8]],
        "head_dim": 128,
        "dtype": "fp16",
        "cost_model": {"name": "profile"},
        "workloads": [{"kind": "random", "name": f"rand-{s}", "seed": s, "min_depth": 1,
                       "max_depth": 4, "max_requests": 256, "max_children": 8,
                       "min_len": 16, "max_len": 4096} for s in out],
        "schedulers": load_json(args.template)["schedulers"],
    }
    with open(args.output, "w") as f:
        json.dump(exp, f, indent=1)
        f.write("\n")
    print(f"{args.output}: seeds {out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("figures")
    f.add_argument("dirs", nargs="+")
    f.add_argument("-o", "--out", default="docs/figures")
    t = sub.add_parser("timeline")
    t.add_argument("simulated")
    t.add_argument("measured")
    t.add_argument("-o", "--output")
    s = sub.add_parser("seeds")
    s.add_argument("profile")
    s.add_argument("-n", type=int, default=30)
    s.add_argument("--template", default="experiments/validate_pat.json",
                   help="experiment whose scheduler list is reused")
    s.add_argument("-o", "--output", default="experiments/validate_random.json")
    args = ap.parse_args()
    {"figures": figures, "timeline": timeline, "seeds": seeds}[args.cmd](args)


if __name__ == "__main__":
    main()
