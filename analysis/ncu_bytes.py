#!/usr/bin/env python3
"""Sums Nsight Compute counters over the kernels of one `ncu --csv --metrics ...` capture:
prints `workload,scheduler,kernels,dram_read_bytes,dram_write_bytes,l2_read_bytes_from_l1`.
Counters ncu reports as n/a are left out (blank). Used by results/h200/repro/run_memory_ncu.sh.
Usage: ncu_bytes.py CAPTURE.csv WORKLOAD SCHEDULER"""
import csv
import sys

UNITS = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12, "sector": 32}
OUT = [("dram__bytes_read.sum",), ("dram__bytes_write.sum",),
       ("lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_bytes_srcunit_tex_op_read.sum")]


def main():
    rows = list(csv.reader(open(sys.argv[1])))
    h = next((i for i, r in enumerate(rows) if r and r[0] == "ID"), None)
    tot, ids = {}, set()
    for r in rows[h + 1:] if h is not None else []:
        d = dict(zip(rows[h], r))
        name, val = d.get("Metric Name"), d.get("Metric Value", "").replace(",", "")
        if not name:
            continue
        ids.add(d["ID"])
        try:
            v = float(val) * UNITS.get(d.get("Metric Unit") or "byte", float("nan"))
        except ValueError:
            continue
        tot[name] = tot.get(name, 0.0) + v
    cells = []
    for names in OUT:
        got = [tot[n] for n in names if n in tot]
        cells.append("%.0f" % got[0] if got else "")
    print(",".join([sys.argv[2], sys.argv[3], str(len(ids))] + cells))


if __name__ == "__main__":
    main()
