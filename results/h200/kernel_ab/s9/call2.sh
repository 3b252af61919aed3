#!/bin/bash
# Session 9, call 2: the wgmma layout probe (kernels' descriptors, and LBO/SBO of V swapped),
# then the kernel A/B on the speed experiment, then Nsight Compute on prefix16k's m64 launch.
# Usage (repo root, on the device): bash results/h200/kernel_ab/s9/call2.sh
for p in wgmma_probe wgmma_probe_swap; do timeout 30 build-c9w2/$p; echo "$p rc=$?"; done \
  2>&1 | tee $OUT/probe.txt
BUILDS="build-c9w3 build-c9w2 build-c9a" bash results/h200/kernel_ab/run_ab.sh
BUILDS="build-c9w3 build-c9w2" bash results/h200/kernel_ab/s9/ncu_run.sh
