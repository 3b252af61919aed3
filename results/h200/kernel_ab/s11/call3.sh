#!/bin/bash
# Session 11, call 3: every tile in the 128-byte swizzle on sm_90a, copied by TMA
# (build-c11s; build-c11sn = the same binary with AV_NO_TMA=1), against call 2's build-c11m
# (TMA for the m64 wgmma tiles only; all three with three m64 CTAs per SM). GPU tests first.
# Usage (repo root): bash results/h200/kernel_ab/s11/call3.sh
export LD_LIBRARY_PATH=$PWD/build-c11s/lib
mkdir -p $OUT
timeout 240 build-c11s/gpu_kernels > $OUT/gpu_tests.log 2>&1; echo "gpu_kernels rc=$?"
tail -3 $OUT/gpu_tests.log
BUILDS="build-c11s build-c11sn build-c11m" bash results/h200/kernel_ab/s11/ab_builds.sh
