#!/bin/bash
# Session 13, call 1: A/B of the m64 n64 root body and of the merge CTA size.
#   build-c13b: main + wg2_two_per_sm.patch: the m64 n64 one-item tile runs QK^T a tile ahead
#               from a two-stage ring whose K and V are copied apart (attn_item_wg2), two CTAs
#               an SM (244 registers);
#   build-c13c: as b, merge CTAs of 16 rows (warps) instead of 4;
#   build-c11s: session 11's kernels (the reference; it did not run: its anvil predates the
#               profile's "start" key, docs/gpu-notes.md session 13).
# 1) run_ab.sh: GPU tests (b), exec_speed.json on all three, traced on b;
# 2) prefix16k's fd_beside variants (s12/p16k_s12.json) twice per build, fd_beside traced;
# 3) correctness sweep (every scheduler, PAT's 20 trees x 4 head configs, fp16 and bf16) on b.
# Usage (repo root, on the device): bash results/h200/kernel_ab/s13/call1.sh
D=results/h200/kernel_ab; W=$OUT/p16k; mkdir -p $W
BUILDS="build-c13b build-c13c build-c11s" bash $D/run_ab.sh
(W=$W bash results/h200/kernel_ab/s13/p16k_builds.sh build-c13b build-c13c build-c11s)
export ANVIL_DATA_DIR=$PWD
(W=$W bash results/h200/kernel_ab/correct_sweep.sh build-c13b)
