#!/bin/bash
# Session 11, call 1: the m64 wgmma tiles' KV copies by TMA (kernels/attn_tma.cuh) against
# cp.async, same binary (build-c11n runs build-c11a's anvil with AV_NO_TMA=1): GPU tests
# (block sizes 8/12/32/64 and the forced fallback included), the speed experiment on both,
# Nsight Compute of the TMA build on ncu_exp.json, then the correctness sweep and memcheck
# on the TMA build. Usage (repo root): bash results/h200/kernel_ab/s11/call1.sh
set -u
(OUT=$OUT/ab BUILDS="build-c11a build-c11n" NCU=1 bash results/h200/kernel_ab/run_ab.sh)
(OUT=$OUT/ev CARRY=build-c11a STEPS=correct,sanitize bash results/h200/run_h200.sh)
