#!/bin/bash
# Session 10, call 4: prefix16k with every scheduler of the speed experiment (fd_beside now
# cuts only the root, the leaves whole on the queues), one build after another (median of 20).
# Usage (repo root, on the device): BUILDS="build-c10f" bash results/h200/kernel_ab/s10/beside_ab.sh
# A build folder may carry the variants.json its kernels were compiled with (the planner's
# occupancy must match the kernels); it replaces the tree's copy on the device.
export ANVIL_DATA_DIR=$PWD
for b in $BUILDS; do
  export LD_LIBRARY_PATH=$PWD/$b/lib
  [ -f $b/variants.json ] && cp $b/variants.json kernels/variants.json
  for i in 1 2; do
    timeout 120 $b/anvil exec results/h200/exec_speed.json --only prefix16k --copy-bw --repeats 20 \
      --check-requests 2 --csv $OUT/p16k_$(basename $b)_$i.csv > $OUT/p16k_$(basename $b)_$i.log 2>&1
    echo "$b run $i rc=$?"; grep -E "fixed_division|fd_beside|greedy_division|auto" $OUT/p16k_$(basename $b)_$i.log
  done
done
