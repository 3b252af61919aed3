#!/bin/bash
# Session 9: Nsight Compute on prefix16k's m64 root launch (fixed_division plan, p16k.json),
# one build after another: timing (median of 20), the full section set of one launch, and the
# SASS source page with its warp-stall samples. Usage (repo root, on the device):
#   BUILDS="build-s9a build-s9w" bash results/h200/kernel_ab/s9/ncu_run.sh
export ANVIL_DATA_DIR=$PWD
EXP=results/h200/kernel_ab/s9/p16k.json
W=/tmp/ncu; mkdir -p $W
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $W/gpu.txt
for b in $BUILDS; do
  n=$(basename $b)
  export LD_LIBRARY_PATH=$PWD/$b/lib
  timeout 120 $b/anvil exec $EXP --repeats 20 --check-requests 2 -o $W/speed_$n.json \
    --csv $W/speed_$n.csv > $W/speed_$n.log 2>&1; echo "$n speed rc=$?"
  timeout 240 ncu --clock-control none --kernel-name regex:${KERNEL:-m64_n64} --launch-count 1 \
    --set full --import-source yes -o $W/rep_$n $b/anvil exec $EXP --repeats 1 --warmup 0 \
    --no-verify > $W/ncu_$n.log 2>&1; echo "$n ncu rc=$?"
  ncu --import $W/rep_$n.ncu-rep --csv --page details > $W/details_$n.csv 2>&1
  ncu --import $W/rep_$n.ncu-rep --csv --page source --print-source sass > $W/sass_$n.csv 2>&1
  rm -f $W/rep_$n.ncu-rep
done
tar czf $OUT/ncu.tgz -C /tmp ncu
