#!/usr/bin/env python3
"""Writes the variant table of a CUDA build (<build>/kernels/variants.json): every compiled
kernel variant per architecture with the registers, shared memory (static from ptxas + the
dynamic bytes its launcher requests), threads and spills. Inputs: the variant table printed
by av_variant_table (JSON lines) and the ptxas -v reports kept by ptxas_log.sh next to each
object. Rewrites the output only when its content changes; `cmake --build <build>
--target update-variants` copies it to the tracked kernels/variants.json
(docs/kernels.md#the-variant-table)."""
import argparse
import glob
import json
import os
import re
import sys

KINDS = ["partial", "persistent", "decode", "merge"]
DTYPES = ["fp16", "bf16"]


def parse_ptxas(paths):
    """{(kernel, arch): {"regs", "smem_static", "spills"}} from ptxas -v reports."""
    res = {}
    entry = re.compile(r"Compiling entry function '([^']+)' for 'sm_(\d+)a?'")
    spill = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
    used = re.compile(r"Used (\d+) registers")
    smem = re.compile(r"(\d+) bytes smem")
    for path in paths:
        cur = None
        with open(path) as f:
            for line in f:
                m = entry.search(line)
                if m:
                    cur = (m.group(1), int(m.group(2)))
                    res[cur] = {"regs": 0, "smem_static": 0, "spills": 0}
                    continue
                if cur is None:
                    continue
                m = spill.search(line)
                if m:
                    res[cur]["spills"] = int(m.group(1)) + int(m.group(2))
                m = used.search(line)
                if m:
                    res[cur]["regs"] = int(m.group(1))
                    s = smem.search(line)
                    res[cur]["smem_static"] = int(s.group(1)) if s else 0
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--table", required=True, help="av_variant_table output (JSON lines)")
    ap.add_argument("--logs", required=True, help="folder holding *.ptxas.txt")
    ap.add_argument("--archs", required=True, help="e.g. 80;89;90 (an sm_90a report counts as 90)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    with open(a.table) as f:
        table = [json.loads(l) for l in f if l.strip()]
    logs = glob.glob(os.path.join(a.logs, "**", "*.ptxas.txt"), recursive=True)
    rep = parse_ptxas(logs)
    archs = [int(x) for x in re.split(r"[;, ]+", a.archs) if x]
    out = []
    for arch in archs:
        for v in table:
            r = rep.get((v["name"], arch))
            if r is None:
                sys.exit("gen_variants: no ptxas report for %s on sm_%d (logs: %d files in %s)"
                         % (v["name"], arch, len(logs), a.logs))
            out.append({"kind": KINDS[v["kind"]], "m": v["m"], "n": v["n"],
                        "warps": v["warps"], "head_dim": v["head_dim"],
                        "dtype": DTYPES[v["dtype"]], "arch": arch, "threads": v["threads"],
                        "regs": r["regs"], "smem": r["smem_static"] + v["smem_dynamic"],
                        "spills": r["spills"]})
    doc = {"generated_by": "kernels/gen_variants.py from ptxas -v (nvcc -Xptxas -v) and "
                           "kernels/variant_table.c; smem = static + dynamic bytes requested",
           "variants": out}
    text = json.dumps(doc, indent=1) + "\n"
    old = open(a.out).read() if os.path.exists(a.out) else None
    if old != text:
        tmp = a.out + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
