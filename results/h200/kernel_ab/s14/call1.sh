#!/bin/bash
# Session 14, call 1: items that read the same KV share their TMA copies in thread-block
# clusters (kernels/attn_tma.cuh, validation/exec_cluster.c). Build: build-c14s (main with the
# cluster change, sm_90a). GPU tests (with test_clusters), then prefix16k (s14/p16k.json) with
# clusters of up to 1 (none), 2, 4 and 8 CTAs, twice each, and fd_beside's plan traced at each.
# Builds: results/h200/kernel_ab/s14/builds.sh. Usage (repo root, on the device):
#   B=build-c14s bash results/h200/kernel_ab/s14/call1.sh
D=results/h200/kernel_ab; B=${B:-build-c14s}; W=/tmp/c1; mkdir -p $W
export ANVIL_DATA_DIR=$PWD LD_LIBRARY_PATH=$PWD/$B/lib
cp $B/variants.json kernels/variants.json
{
date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
timeout 240 $B/tests/gpu_kernels > $W/gpu_tests.log 2>&1; echo "gpu_kernels rc=$?"; tail -3 $W/gpu_tests.log
for C in 1 2 4 8; do
  for i in 1 2; do
    AV_CLUSTER=$C timeout 90 $B/anvil exec $D/s14/p16k.json --repeats 20 --check-requests 2 \
      -o $W/p16k_c${C}_$i.json > $W/p16k_c${C}_$i.log 2>&1; echo "cluster $C run $i rc=$?"
    grep -E "fd_beside|fdb_|greedy" $W/p16k_c${C}_$i.log
  done
  mkdir -p $W/t_c$C
  AV_CLUSTER=$C timeout 60 $B/anvil exec --plan $D/s12/plan_fd_beside.json --repeats 20 \
    --check-requests 2 --trace $W/t_c$C -o $W/t_c$C.json > $W/trace_c$C.log 2>&1; echo "trace c$C rc=$?"
  python3 $D/s10/trace_overlap.py $W/t_c$C/*.json 32
  rm -rf $W/t_c$C
done
} 2>&1 | tee $W/summary.txt
tar czf $OUT/c1.tgz -C /tmp c1
