#!/bin/bash
# Session 15, call 4: an m128 n64 root whose two warpgroups take turns on the tensor cores
# (ping-pong, FlashAttention-3 §3.2) against the same tile in lockstep (session 13's
# m128_ring.patch: 4 stages, synchronous order, 168 registers).
#   build-c15pp: s13/m128_ring.patch + ping-pong (AV_M128_PINGPONG=1), s15/m128_pingpong.patch;
#   build-c15ls: the same with -DAV_M128_PINGPONG=0.
# GPU tests on pp, then s13/call3.sh's hand-made prefix16k plans (m128k4_l32x33: the m128 root
# beside 33 leaf queues a head; k4_l32x33: the m64 root, fd_beside's shape), twice each, traced.
# Builds: bash results/h200/kernel_ab/carry_builds.sh c15pp: c15ls:-DAV_M128_PINGPONG=0
# Usage (repo root, on the device): bash results/h200/kernel_ab/s15/call4.sh
export ANVIL_DATA_DIR=$PWD LD_LIBRARY_PATH=$PWD/build-c15pp/lib
timeout 150 build-c15pp/gpu_kernels > $OUT/gpu_tests.log 2>&1; echo "gpu_kernels rc=$?"; tail -1 $OUT/gpu_tests.log
TAG=c4 BUILDS="build-c15pp build-c15ls" PLANS=m128k4_l32x33,k4_l32x33 \
  bash results/h200/kernel_ab/s13/call3.sh
