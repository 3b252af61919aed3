#!/usr/bin/env python3
"""Writes the experiment of the study benchmark (docs/studies.md): N seeded random forests of
up to 256 requests (depth 1-4, up to 4 children, node lengths 16-4096 tokens) on the H200
spec, each planned by five schedulers; `auto` reuses the other four rows' predictions
(docs/studies.md#threads).

    python3 bench/random_study.py 10000 > /tmp/study10k.json
    /usr/bin/time -v anvil run /tmp/study10k.json --jobs 2 --out /tmp/study10k -q --progress
"""
import json
import sys


def study(n):
    return {
        "name": "random-study-%d" % n,
        "description": "%d seeded random forests (up to 256 requests) x 5 schedulers" % n,
        "gpu": "H200-SXM",
        "workloads": [{"kind": "random", "name": "r%d" % i, "seed": i, "max_requests": 256}
                      for i in range(n)],
        "schedulers": ["query_centric", "greedy_division", "profit_pack", "streamk_balance",
                       "auto"],
    }


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    if n < 1:
        sys.exit("random_study.py: N must be >= 1")
    json.dump(study(n), sys.stdout, indent=1)
    sys.stdout.write("\n")
