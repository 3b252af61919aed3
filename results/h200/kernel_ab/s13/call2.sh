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
export ANVIL_DATA_DIR=$PWD
for B in build-c13c build-c13a; do
  n=${B#build-}; export LD_LIBRARY_PATH=$PWD/$B/lib; cp $B/variants.json kernels/variants.json
  for i in 1 2; do
    timeout 90 $B/anvil exec $D/s12/p16k_s12.json --repeats 20 --check-requests 2 \
      --csv $W/p16k_${n}_$i.csv > $W/p16k_${n}_$i.log 2>&1; echo "$n p16k $i rc=$?"
    grep -E "fd_beside|greedy" $W/p16k_${n}_$i.log
  done
  mkdir -p /tmp/t_$n
  timeout 60 $B/anvil exec --plan $D/s12/plan_fd_beside.json --repeats 20 --check-requests 2 \
    --trace /tmp/t_$n -o /tmp/t_$n.json > $W/trace_$n.log 2>&1; echo "$n trace rc=$?"
  python3 $D/s10/trace_overlap.py /tmp/t_$n/*.json 32 | tee $W/overlap_$n.txt
done
tar czf $OUT/c2.tgz -C /tmp c2
