#!/bin/bash
# Session 11: the speed experiment on several carried builds, each with the variants.json its
# kernels were compiled with (copied over kernels/variants.json first: the planner's
# occupancy must match the kernels), compared with the last build. A build folder's anvil may
# be a wrapper that runs another build's binary with AV_NO_TMA=1 (cp.async instead of TMA).
# Usage (repo root, on the device): BUILDS="build-x build-y build-ref" bash results/h200/kernel_ab/s11/ab_builds.sh
export ANVIL_DATA_DIR=$PWD PYTHONUNBUFFERED=1
read -ra BS <<< "$BUILDS"
REF=${BS[-1]}
mkdir -p $OUT/logs
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv | tee $OUT/run.log
for C in "${BS[@]}"; do
  n=$(basename $C)
  export LD_LIBRARY_PATH=$PWD/$C/lib
  [ -f $C/variants.json ] && cp $C/variants.json kernels/variants.json
  timeout 150 $C/anvil exec results/h200/exec_speed.json --copy-bw --repeats 20 --check-requests 2 \
    -o $OUT/logs/speed_$n.json --csv $OUT/logs/speed_$n.csv > $OUT/logs/speed_$n.log 2>&1
  echo "$n speed rc=$?" | tee -a $OUT/run.log
done
for C in "${BS[@]}"; do
  [ $C = $REF ] && continue
  echo "== $(basename $C) vs $(basename $REF)"
  python3 results/h200/kernel_ab/compare.py $OUT/logs/speed_$(basename $REF).csv \
    $OUT/logs/speed_$(basename $C).csv results/h200/sdpa.json
done | tee $OUT/compare.txt
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $OUT/logs
