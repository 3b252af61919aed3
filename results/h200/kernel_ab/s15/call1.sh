#!/bin/bash
# Session 15, call 1: the m64 n64/n128 tiles on split K and V rings (attn_item_split,
# kernels/attn_wg_item.cuh) against the same source with the split off.
#   build-c15s: the working tree (split rings on);  build-c15b: -DAV_SPLIT_KV=0 (main's body).
# 1) run_ab.sh: GPU tests on c15s, exec_speed.json on both, compared;
# 2) prefix16k's fd_beside variants twice per build, fd_beside traced (s13/p16k_builds.sh);
# 3) the root nearly alone (s14/plan_root16k.json) traced twice per build: root CTA times;
# 4) correctness sweep (every scheduler, PAT's 20 trees x 4 head configs, fp16 and bf16) on c15s.
# Builds: bash results/h200/kernel_ab/carry_builds.sh c15s: c15b:-DAV_SPLIT_KV=0
# Usage (repo root, on the device): bash results/h200/kernel_ab/s15/call1.sh
D=results/h200/kernel_ab; W=$OUT/p16k; mkdir -p $W
BUILDS="build-c15s build-c15b" bash $D/run_ab.sh
(W=$W bash $D/s13/p16k_builds.sh build-c15s build-c15b)
export ANVIL_DATA_DIR=$PWD
for B in build-c15s build-c15b; do
  export LD_LIBRARY_PATH=$PWD/$B/lib; cp $B/variants.json kernels/variants.json
  for i in 1 2; do
    t=/tmp/r_${B#build-}_$i; mkdir -p $t
    timeout 60 $B/anvil exec --plan $D/s14/plan_root16k.json --repeats 20 --check-requests 2 \
      --trace $t -o $t.json > $t.log 2>&1
    echo "== root16k $B run $i rc=$? median $(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['rows'][0]; print(round(r['median_us'],1), 'min', round(r['min_us'],1))" $t.json)"
    python3 $D/s14/root_sm.py $t/*.json 32
  done
done 2>&1 | tee $W/root16k.txt
(W=$W bash results/h200/kernel_ab/correct_sweep.sh build-c15s)
