#!/bin/bash
# The correctness sweep of a carried build (issue 5): every scheduler's plans on PAT's 20 trees
# x 4 head configurations, fp16 and bf16 side by side, verified against the CPU fp64
# reference; logs and gzipped results in W. Usage (repo root, on the device):
#   W=OUTDIR bash results/h200/kernel_ab/correct_sweep.sh BUILD
B=$1
export ANVIL_DATA_DIR=$PWD LD_LIBRARY_PATH=$PWD/$B/lib; cp $B/variants.json kernels/variants.json
for t in fp16 bf16; do
  timeout 240 $B/anvil exec results/h200/exec_pat_$t.json --all-schedulers --repeats 0 \
    -o $W/correct_$t.json > $W/correct_$t.log 2>&1 &
done
wait
tail -n 2 $W/correct_fp16.log $W/correct_bf16.log
grep -h FAIL $W/correct_*.log | head -20
gzip -f $W/correct_*.json
