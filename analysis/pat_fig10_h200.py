#!/usr/bin/env python3
"""PAT Figure 10 on the H200-SXM spec: analysis/pat_fig10.py with out/pat_fig10_h200 (what
`anvil run experiments/pat_fig10_h200.json` writes) as the default results directory."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pat_fig10  # noqa: E402

if __name__ == "__main__":
    pat_fig10.main("pat_fig10_h200")
