#!/bin/bash
# One device call (issue 5 evidence): GPU tests, correctness sweep (every scheduler, PAT's
# 20 trees x 4 head configs, fp16 and bf16), timings at (32,8) fp16 with the copy-bandwidth
# floor, per-CTA traces, the SDPA peer, and compute-sanitizer memcheck on a subset.
# Binaries come prebuilt in build-h200carry/ (with the shared libraries the device image may
# lack); results land in $OUT. Usage (repo root): bash results/h200/run_h200.sh
# CARRY names another carried build folder (default build-h200carry); STEPS picks steps.
C=${CARRY:-build-h200carry}
export ANVIL_DATA_DIR=$PWD LD_LIBRARY_PATH=$PWD/$C/lib:$LD_LIBRARY_PATH PYTHONUNBUFFERED=1
L=$OUT/logs; mkdir -p $L
A=$C/anvil
date -u | tee $L/run.log
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.used --format=csv | tee -a $L/run.log
$A --help > /dev/null || { echo "carried anvil does not run here" | tee -a $L/run.log; exit 1; }
S=${STEPS:-tests,correct,speed,sdpa,sanitize}
if [[ $S == *tests* ]]; then
  timeout 200 $C/gpu_kernels > $L/gpu_tests.log 2>&1; echo "gpu_kernels rc=$?" | tee -a $L/run.log
  tail -5 $L/gpu_tests.log
fi
if [[ $S == *correct* ]]; then
  for t in fp16 bf16; do
    timeout 240 $A exec results/h200/exec_pat_$t.json --all-schedulers --repeats 0 \
      -o $OUT/correct_$t.json > $L/correct_$t.log 2>&1 &
  done
  wait
  tail -n 2 $L/correct_fp16.log $L/correct_bf16.log
  grep -h FAIL $L/correct_*.log | head -20
fi
if [[ $S == *speed* ]]; then
  mkdir -p $L/traces
  timeout 150 $A exec results/h200/exec_speed.json --copy-bw --repeats 20 --trace $L/traces \
    -o $OUT/speed.json --csv $OUT/speed.csv > $L/speed.log 2>&1; echo "speed rc=$?" | tee -a $L/run.log
  tail -3 $L/speed.log
  python3 results/h200/trace_summary.py $L/traces > $OUT/trace_summary.csv
  rm -rf $L/traces
fi
if [[ $S == *sdpa* ]]; then
  timeout 120 python3 validation/peer_sdpa.py --trees experiments/workloads/pat_kernel_trees.json \
    --levels "B=1,128 L=16384,512" --heads 32,8 --out $OUT/sdpa.json > $L/sdpa.log 2>&1
  echo "sdpa rc=$?" | tee -a $L/run.log
fi
if [[ $S == *sanitize* ]]; then
  timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $A exec \
    results/h200/exec_pat_fp16.json --all-schedulers --only pat-5 --repeats 1 --warmup 0 \
    --check-requests 2 > $L/memcheck.log 2>&1; echo "memcheck rc=$?" | tee -a $L/run.log
  tail -4 $L/memcheck.log
fi
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
