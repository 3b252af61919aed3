#!/bin/bash
# Session 13, call 2: the m64 tile's math ceiling, and merge CTAs of 16 rows.
#   build-c13a: main's kernels (session 11's), built for sm_90a, plus bench/tile_math.cu
#               (nvcc -O3 -std=c++17 -arch=sm_90a -I. bench/tile_math.cu -o tile_math);
#   build-c13c: the same with -DAV_MERGE_WARPS=16 (its variants.json: merge m = 16).
# 1) tile_math: the tile's QK^T + softmax + PV with the K/V tile resident in shared memory;
# 2) run_ab.sh: exec_speed.json on c and a (c traced, GPU tests on c);
# 3) prefix16k's fd_beside variants (s12/p16k_s12.json) twice per build, fd_beside traced.
# Usage (repo root, on the device): bash results/h200/kernel_ab/s13/call2.sh
D=results/h200/kernel_ab; W=/tmp/c2; mkdir -p $W
export LD_LIBRARY_PATH=$PWD/build-c13a/lib
timeout 60 build-c13a/tile_math | tee $W/tile_math.csv
(BUILDS="build-c13c build-c13a" bash $D/run_ab.sh)
(W=$W bash results/h200/kernel_ab/s13/p16k_builds.sh build-c13c build-c13a)
tar czf $OUT/c2.tgz -C /tmp c2
