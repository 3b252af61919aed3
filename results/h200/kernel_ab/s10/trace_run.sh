#!/bin/bash
# Session 10, call 2: do the leaf CTAs of a two-launch prefix16k plan run beside the root
# CTAs? Each plan is run three times (verify, warm-up, 20 timed repeats, one traced run) and
# each trace summarised by trace_overlap.py. Usage (repo root, on the device):
#   B=build-c10m3 bash results/h200/kernel_ab/s10/trace_run.sh
export ANVIL_DATA_DIR=$PWD LD_LIBRARY_PATH=$PWD/$B/lib
D=results/h200/kernel_ab/s10
W=/tmp/tr; mkdir -p $W/plans
echo '{"kind": "levels", "name": "prefix16k", "B": [1, 128], "L": [16384, 512], "block_size": 32}' > $W/w.json
$B/anvil plan --workload $W/w.json -s fixed_division -p tiles=per_shape -o $W/base.json > /dev/null
python3 $D/overlap_plans.py $W/base.json $W/plans ${PLANS:-k4_l32x33,k4_l64x16,k4_l32x33_leaffirst,k4p_l32x33} > /dev/null
for p in $W/plans/*.json; do
  [ "$(basename $p)" = base.json ] && continue
  q=$(basename $p .json)
  for i in $(seq ${RUNS:-3}); do
    mkdir -p $W/t_${q}_$i
    timeout 60 $B/anvil exec --plan $p --repeats 20 --check-requests 2 --trace $W/t_${q}_$i \
      -o $W/${q}_$i.json > $W/${q}_$i.log 2>&1
    echo "== $q run $i rc=$? $(tail -n 2 $W/${q}_$i.log | head -1 | awk '{print $6, "us"}')"
    R=$(python3 -c "import json,sys; print(sum(1 for it in json.load(open(sys.argv[1]))['items'] if it['segments'][0][0] == 0))" $p)
    python3 $D/trace_overlap.py $W/t_${q}_$i/*.json $R
  done
done
tar czf $OUT/tr.tgz -C /tmp tr
