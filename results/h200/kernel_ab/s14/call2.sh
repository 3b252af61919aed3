#!/bin/bash
# Session 14, call 2: where call 1's cluster runs lost time. Traced runs (three each) of
# fd_beside's prefix16k plan (s12/plan_fd_beside.json) and of the same root with 16-token leaves
# (s14/plan_root16k.json: the root nearly alone), with clusters of up to 1, 2 and 4 CTAs;
# s14/root_sm.py reports root CTAs per SM and their durations, s10/trace_overlap.py the overlap.
# Builds: results/h200/kernel_ab/s14/builds.sh. Usage (repo root, on the device):
#   B=build-c14s bash results/h200/kernel_ab/s14/call2.sh
D=results/h200/kernel_ab; B=${B:-build-c14s}; W=/tmp/c2; mkdir -p $W
export ANVIL_DATA_DIR=$PWD LD_LIBRARY_PATH=$PWD/$B/lib
cp $B/variants.json kernels/variants.json
{
for P in s12/plan_fd_beside s14/plan_root16k; do
  for C in 1 2 4; do
    for i in 1 2 3; do
      t=$W/t_$(basename $P)_c${C}_$i; mkdir -p $t
      AV_CLUSTER=$C timeout 60 $B/anvil exec --plan $D/$P.json --repeats 20 --check-requests 2 \
        --trace $t -o $t.json > $t.log 2>&1
      echo "== $(basename $P) cluster $C run $i rc=$? median $(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['rows'][0]; print(round(r['median_us'],1), 'min', round(r['min_us'],1), 'cluster', r['cluster'])" $t.json)"
      python3 $D/s10/trace_overlap.py $t/*.json 32
      python3 $D/s14/root_sm.py $t/*.json 32
      mv $t/*.json $t.trace.json; rm -rf $t
    done
  done
done
} 2>&1 | tee $W/summary.txt
tar czf $OUT/c2.tgz -C /tmp c2
