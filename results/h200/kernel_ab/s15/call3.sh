#!/bin/bash
# Session 15, call 3: what the root's KV copies cost, taken apart. Diagnostic builds of the
# one-item body (kernels/attn.cuh, attn_item; outputs wrong, so unverified):
#   build-c15nw: -DAV_DIAG_NOWAIT: every tile copied as usual, but only the first S and those
#                after the last copy are awaited: the copies' traffic without their latency;
#   build-c15nl: -DAV_DIAG_NOLOAD: the first S tiles copied, then computed on again and again;
#   build-c15m:  the kernels as they are.
# The root nearly alone (s14/plan_root16k.json) and fd_beside's plan (s12/plan_fd_beside.json),
# each traced twice per build; s14/root_sm.py and s10/trace_overlap.py summarise.
# Builds: bash results/h200/kernel_ab/carry_builds.sh c15nw:-DAV_DIAG_NOWAIT c15nl:-DAV_DIAG_NOLOAD
# Usage (repo root, on the device): bash results/h200/kernel_ab/s15/call3.sh
D=results/h200/kernel_ab; W=/tmp/c3; mkdir -p $W
export ANVIL_DATA_DIR=$PWD
for B in build-c15m build-c15nw build-c15nl; do
  export LD_LIBRARY_PATH=$PWD/$B/lib; cp $B/variants.json kernels/variants.json
  V="--check-requests 2"; [ $B != build-c15m ] && V=--no-verify
  for P in s14/plan_root16k s12/plan_fd_beside; do
    for i in 1 2; do
      t=$W/t_${B#build-}_$(basename $P)_$i; mkdir -p $t
      timeout 60 $B/anvil exec --plan $D/$P.json --repeats 20 $V --trace $t -o $t.json > $t.log 2>&1
      echo "== $B $(basename $P) run $i rc=$? median $(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['rows'][0]; print(round(r['median_us'],1), 'min', round(r['min_us'],1))" $t.json)"
      python3 $D/s14/root_sm.py $t/*.json 32
      python3 $D/s10/trace_overlap.py $t/*.json 32
      rm -rf $t
    done
  done
done 2>&1 | tee $W/summary.txt
tar czf $OUT/c3.tgz -C /tmp c3
