#!/bin/bash
# Session 13, call 3: prefix16k's root on an m128 n64 tile (two wgmma warpgroups over one K/V
# ring, half the L2 reads of the m64 pair) with a deeper ring. Builds (sm_90a, main's kernels
# plus s13/m128_ring.patch, variants.json + m128 rows):
#   build-c13m4s: 4 stages, synchronous order, 168 registers (leaves fit beside it);
#   build-c13m4a: 4 stages, QK^T a tile ahead, 231 registers (one CTA fills the SM);
#   build-c13m3s: 3 stages, synchronous, 168 registers.
# Plans (s10/overlap_plans.py on a fixed_division base, KV block 32): m128k4_l32x33 (root 4
# chunks x 4 row tiles x 8 heads = 128 CTAs + 33 leaf queues per head), m128k4_l64x16, and
# k4_l32x33 (the m64 root, fd_beside's shape). Each run twice, traced, trace_overlap.py.
# Usage (repo root, on the device): bash results/h200/kernel_ab/s13/call3.sh
# BUILDS, PLANS, EXEC (extra exec flags) and TAG override the builds, plans and output name.
D=results/h200/kernel_ab; TAG=${TAG:-c3}; W=/tmp/$TAG; mkdir -p $W/plans
BUILDS=${BUILDS:-build-c13m4s build-c13m4a build-c13m3s}
PLANS=${PLANS:-m128k4_l32x33,m128k4_l64x16,k4_l32x33}
export ANVIL_DATA_DIR=$PWD
echo '{"kind": "levels", "name": "prefix16k", "B": [1, 128], "L": [16384, 512], "block_size": 32}' > $W/w.json
for B in $BUILDS; do
  n=${B#build-c13}; export LD_LIBRARY_PATH=$PWD/$B/lib; cp $B/variants.json kernels/variants.json
  if [ $n = m4s ]; then timeout 150 $B/gpu_kernels > $W/gpu_tests.log 2>&1; echo "gpu_kernels rc=$?"; tail -1 $W/gpu_tests.log; fi
  $B/anvil plan --workload $W/w.json -s fixed_division -p tiles=per_shape -o $W/base.json > /dev/null
  python3 $D/s10/overlap_plans.py $W/base.json $W/plans $PLANS > /dev/null
  for q in ${PLANS//,/ }; do
    [ $n = m4a -o $n = m3s ] && [ $q = k4_l32x33 ] && continue
    for i in 1 2; do
      t=$W/t_${n}_${q}_$i; mkdir -p $t
      timeout 60 $B/anvil exec --plan $W/plans/$q.json --repeats 20 ${EXEC:---check-requests 2} --trace $t \
        -o $t.json > $t.log 2>&1
      echo "== $n $q run $i rc=$? $(tail -n 2 $t.log | head -1 | awk '{print $6, "us", $NF}')"
      R=$(python3 -c "import json,sys; print(sum(1 for it in json.load(open(sys.argv[1]))['items'] if it['segments'][0][0] == 0))" $W/plans/$q.json)
      python3 $D/s10/trace_overlap.py $t/*.json $R
      rm -rf $t
    done
  done
done 2>&1 | tee $W/summary.txt
tar czf $OUT/$TAG.tgz -C /tmp $TAG
