#!/bin/bash
# Session 14, call 3: why call 2's clustered root CTAs took 155 us where alone they take 106.
# Builds (results/h200/kernel_ab/s14/builds.sh: main plus cluster_multicast.patch, sm_90a):
#   build-c14s:     shared copies by TMA multicast, a cluster barrier per tile (the kernels);
#   build-c14nomcs: the same cluster barrier per tile, but every CTA copies its whole tile
#                   itself (-DAV_DIAG_NO_MC): the barrier's cost alone;
#   build-c14mbars: multicast, and per-stage "stage free" mbarriers that the mates arrive on
#                   remotely instead of the barrier (-DAV_CLUSTER_MBAR): only warp 0 waits.
# Traced runs of s14/plan_root16k (the root nearly alone) and s12/plan_fd_beside, clusters of
# up to 1, 2 and 4, twice each; s14/root_sm.py summarises the root CTAs.
# Usage (repo root, on the device): bash results/h200/kernel_ab/s14/call3.sh
D=results/h200/kernel_ab; W=/tmp/c3; mkdir -p $W
export ANVIL_DATA_DIR=$PWD
cp build-c14s/variants.json kernels/variants.json
{
for B in build-c14s build-c14nomcs build-c14mbars; do
  export LD_LIBRARY_PATH=$PWD/$B/lib
  for P in s14/plan_root16k s12/plan_fd_beside; do
    for C in 1 2 4; do
      for i in 1 2; do
        t=$W/t_${B#build-c14}_$(basename $P)_c${C}_$i; mkdir -p $t
        AV_CLUSTER=$C timeout 60 $B/anvil exec --plan $D/$P.json --repeats 20 --check-requests 2 \
          --trace $t -o $t.json > $t.log 2>&1
        echo "== $B $(basename $P) cluster $C run $i rc=$? median $(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['rows'][0]; print(round(r['median_us'],1), 'min', round(r['min_us'],1), 'cluster', r['cluster'], 'err', r['max_rel_err'])" $t.json)"
        python3 $D/s14/root_sm.py $t/*.json 32 | tail -n +2
        mv $t/*.json $t.trace.json; rm -rf $t
      done
    done
  done
done
} 2>&1 | tee $W/summary.txt
tar czf $OUT/c3.tgz -C /tmp c3
