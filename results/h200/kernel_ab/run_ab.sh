#!/bin/bash
# Kernel A/B on the H200 (issue 5): the same speed experiment (results/h200/exec_speed.json)
# on several carried builds, the first of which also runs the GPU tests, a traced speed run
# and (NCU=1) Nsight Compute on three batches; the last is the reference every other build is
# compared with. A build folder's own variants.json (if any) replaces kernels/variants.json for
# its runs, so the schedulers plan with that build's registers. Usage (repo root):
#   BUILDS="build-cB build-cC build-cA" [NCU=1] bash results/h200/kernel_ab/run_ab.sh
export ANVIL_DATA_DIR=$PWD PYTHONUNBUFFERED=1
read -ra BS <<< "${BUILDS:-build-cB build-cA}"
REF=${BS[-1]}; FIRST=${BS[0]}
mkdir -p $OUT/logs
date -u | tee $OUT/run.log
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv | tee -a $OUT/run.log
[ -x $FIRST/mma_peak ] && { timeout 60 $FIRST/mma_peak > $OUT/logs/mma_peak.csv 2>&1; cat $OUT/logs/mma_peak.csv; }
for C in "${BS[@]}"; do
  n=$(basename $C)
  export LD_LIBRARY_PATH=$PWD/$C/lib
  [ -f $C/variants.json ] && cp $C/variants.json kernels/variants.json  # the build's own table
  tr=""
  if [ $C = $FIRST ]; then
    timeout 120 $C/gpu_kernels > $OUT/logs/gpu_tests_$n.log 2>&1; echo "$n gpu_kernels rc=$?" | tee -a $OUT/run.log
    tail -1 $OUT/logs/gpu_tests_$n.log
    mkdir -p $OUT/traces; tr="--trace $OUT/traces"
  fi
  timeout 150 $C/anvil exec results/h200/exec_speed.json --copy-bw --repeats 20 --check-requests 2 \
    $tr -o $OUT/logs/speed_$n.json --csv $OUT/logs/speed_$n.csv > $OUT/logs/speed_$n.log 2>&1
  echo "$n speed rc=$?" | tee -a $OUT/run.log
done
if [ -d $OUT/traces ]; then
  python3 results/h200/trace_summary.py $OUT/traces > $OUT/logs/trace_summary_$(basename $FIRST).csv
  rm -rf $OUT/traces
fi
if [ "${NCU:-0}" = 1 ]; then
  export LD_LIBRARY_PATH=$PWD/$FIRST/lib
  timeout 200 ncu --clock-control none --target-processes all \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
    --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section LaunchStats \
    --section SourceCounters --csv --page details \
    $FIRST/anvil exec results/h200/kernel_ab/ncu_exp.json --repeats 1 --warmup 0 --no-verify \
    > $OUT/logs/ncu_$(basename $FIRST).csv 2>&1; echo "ncu rc=$?" | tee -a $OUT/run.log
fi
for C in "${BS[@]}"; do
  [ $C = $REF ] && continue
  echo "== $(basename $C) vs $(basename $REF)"
  python3 results/h200/kernel_ab/compare.py $OUT/logs/speed_$(basename $REF).csv \
    $OUT/logs/speed_$(basename $C).csv results/h200/sdpa.json
done | tee $OUT/compare.txt
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $OUT/logs
