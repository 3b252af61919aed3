#!/bin/bash
# Session 10: does streaming prefix16k's leaves beside its root (two launches, two streams,
# leaf CTAs co-resident with the m64 root CTAs) beat the best plan? Builds one after another;
# every plan verified (2 requests) and timed (median of 20). Usage (repo root, on the device):
#   BUILDS="build-c9g build-c10m3" bash results/h200/kernel_ab/s10/overlap_run.sh
export ANVIL_DATA_DIR=$PWD
D=results/h200/kernel_ab/s10
W=/tmp/ov; mkdir -p $W/plans
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $W/gpu.txt
echo '{"kind": "levels", "name": "prefix16k", "B": [1, 128], "L": [16384, 512], "block_size": 32}' > $W/w.json
first=${BUILDS%% *}
export LD_LIBRARY_PATH=$PWD/$first/lib
$first/anvil plan --workload $W/w.json -s fixed_division -p tiles=per_shape -o $W/plans/base.json > /dev/null
$first/anvil plan --workload $W/w.json -s greedy_division --cost-model profile \
  -c path=profiles/H200-SXM.json -o $W/plans/greedy.json > /dev/null
python3 $D/overlap_plans.py $W/plans/base.json $W/plans > /dev/null
for b in $BUILDS; do
  n=$(basename $b)
  export LD_LIBRARY_PATH=$PWD/$b/lib
  for p in $W/plans/*.json; do
    q=$(basename $p .json)
    timeout 60 $b/anvil exec --plan $p --repeats 20 --check-requests 2 -o $W/${n}_$q.json \
      > $W/${n}_$q.log 2>&1
    echo "$n $q rc=$?"; tail -n 1 $W/${n}_$q.log
  done
  mkdir -p $W/trace_$n
  for q in greedy k4_l64x16 k4_l32x33; do
    timeout 60 $b/anvil exec --plan $W/plans/$q.json --repeats 3 --no-verify --trace $W/trace_$n \
      -o $W/trace_$n/$q.json > /dev/null 2>&1
  done
done
rm -f $W/plans/*.json
tar czf $OUT/ov.tgz -C /tmp ov
