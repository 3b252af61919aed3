#!/bin/bash
# Session 15, call 2: deeper rings for the leaf queues (the persistent m16 n32 kernel).
#   build-c15q4: -DAV_STREAM_S16=4 (4 stages, 70 KB: one queue an SM beside two root CTAs);
#   build-c15q5: -DAV_STREAM_S16=5 (5 stages, 87 KB);  build-c15m: the working tree (2 stages).
# 1) run_ab.sh: GPU tests on q4, exec_speed.json on all three, compared with m;
# 2) prefix16k's fd_beside variants twice per build, fd_beside's plan re-made and traced.
# Builds: bash results/h200/kernel_ab/carry_builds.sh c15m: c15q4:-DAV_STREAM_S16=4 c15q5:-DAV_STREAM_S16=5
# Usage (repo root, on the device): bash results/h200/kernel_ab/s15/call2.sh
D=results/h200/kernel_ab; W=$OUT/p16k; mkdir -p $W
BUILDS="build-c15q4 build-c15q5 build-c15m" bash $D/run_ab.sh
(W=$W bash $D/s13/p16k_builds.sh build-c15q4 build-c15q5 build-c15m)
export ANVIL_DATA_DIR=$PWD
for B in build-c15q4 build-c15q5 build-c15m; do
  export LD_LIBRARY_PATH=$PWD/$B/lib; cp $B/variants.json kernels/variants.json
  n=${B#build-}; t=/tmp/fdb_$n; mkdir -p $t
  timeout 60 $B/anvil exec $D/s15/p16k_fdb.json --repeats 20 \
    --check-requests 2 --trace $t -o $t.json > $W/fdb_trace_$n.log 2>&1; echo "$n fdb trace rc=$?"
  grep -E "fd_beside" $W/fdb_trace_$n.log
  python3 $D/s10/trace_overlap.py $t/*.json 32
done 2>&1 | tee $W/fdb_traces.txt
cd $OUT && tar czf p16k.tgz p16k && rm -rf p16k
