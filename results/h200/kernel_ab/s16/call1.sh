#!/bin/bash
# Session 16, call 1: the m128 root on two ping-ponging warpgroups with a barrier-free ring
# (kernels/attn_wg_pp.cuh) against main's m64 pair, on prefix16k.
#   build-c16m: main as of session 15 (the m64 root);
#   build-c16p: the working tree with the m128 n64 tile, -DAV_M128_REGS=176 (no spill).
# GPU tests on c16p; then, traced twice each: the root nearly alone (s14/plan_root16k.json, and
# its m128 twin by s16/to_m128.py), fd_beside (s12/plan_fd_beside.json and its m128 twin).
# While the root alone loops, nvidia-smi samples the SM clock and power every 100 ms.
# Builds: bash results/h200/kernel_ab/carry_builds.sh c16m: c16p:-DAV_M128_REGS=176 (c16m from 174f033)
# Usage (repo root, on the device): bash results/h200/kernel_ab/s16/call1.sh
D=results/h200/kernel_ab; W=/tmp/c1; mkdir -p $W
export ANVIL_DATA_DIR=$PWD
P=${PB:-build-c16p}
export LD_LIBRARY_PATH=$PWD/$P/lib
cp $P/variants.json kernels/variants.json
[ -z "$SKIPT" ] && timeout 200 $P/gpu_kernels > $W/gpu_tests.log 2>&1; echo "gpu_kernels rc=$?"; tail -3 $W/gpu_tests.log
python3 $D/s16/to_m128.py $D/s14/plan_root16k.json $W/root128.json
python3 $D/s16/to_m128.py $D/s12/plan_fd_beside.json $W/fdb128.json
for B in ${BS:-build-c16m $P}; do
  export LD_LIBRARY_PATH=$PWD/$B/lib; cp $B/variants.json kernels/variants.json
  if [ $B = build-c16m ]; then PL="$D/s14/plan_root16k.json $D/s12/plan_fd_beside.json"
  else PL="$W/root128.json $W/fdb128.json"; fi
  for pl in $PL; do
    R=$(python3 -c "import json,sys; print(sum(1 for it in json.load(open(sys.argv[1]))['items'] if it['segments'][0][0] == 0))" $pl)
    for i in 1 2; do
      t=$W/t_${B#build-}_$(basename $pl .json)_$i; mkdir -p $t
      timeout 60 $B/anvil exec --plan $pl --repeats 20 --check-requests 2 --trace $t -o $t.json > $t.log 2>&1
      echo "== $B $(basename $pl) run $i rc=$? median $(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['rows'][0]; print(round(r['median_us'],1), 'min', round(r['min_us'],1))" $t.json 2>&1 | tail -1)"
      grep -i "verif\|error\|fail" $t.log | head -3
      python3 $D/s14/root_sm.py $t/*.json $R
      python3 $D/s10/trace_overlap.py $t/*.json $R
      rm -rf $t
    done
  done
  # clocks and power under the root alone (about 2 s of repeats)
  pl=$D/s14/plan_root16k.json; [ $B != build-c16m ] && pl=$W/root128.json
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader -lms 100 > $W/smi_${B#build-}.csv &
  S=$!; sleep 0.5
  timeout 60 $B/anvil exec --plan $pl --repeats 2000 --no-verify -o $W/long_${B#build-}.json > /dev/null 2>&1
  sleep 0.3; kill $S
  echo "== $B smi under the root (clock MHz, mem MHz, W, C, reasons): $(sort $W/smi_${B#build-}.csv | uniq -c | sort -rn | head -4 | tr '\n' ';')"
done 2>&1 | tee $W/summary.txt
tar czf $OUT/c1.tgz -C /tmp c1
