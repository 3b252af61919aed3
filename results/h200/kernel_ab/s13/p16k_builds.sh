#!/bin/bash
# prefix16k's fd_beside variants (s12/p16k_s12.json) timed twice per carried build (each with
# its own variants.json), and the fd_beside plan traced and summarised by s10/trace_overlap.py.
# Usage (repo root, on the device): W=OUTDIR bash results/h200/kernel_ab/s13/p16k_builds.sh BUILD...
D=results/h200/kernel_ab
export ANVIL_DATA_DIR=$PWD
for B in "$@"; do
  n=${B#build-}; export LD_LIBRARY_PATH=$PWD/$B/lib; cp $B/variants.json kernels/variants.json
  for i in 1 2; do
    timeout 90 $B/anvil exec $D/s12/p16k_s12.json --repeats 20 --check-requests 2 \
      --csv $W/p16k_${n}_$i.csv > $W/p16k_${n}_$i.log 2>&1; echo "$n p16k $i rc=$?"
    grep -E "fd_beside|greedy" $W/p16k_${n}_$i.log
  done
  mkdir -p /tmp/t_$n
  timeout 60 $B/anvil exec --plan $D/s12/plan_fd_beside.json --repeats 20 --check-requests 2 \
    --trace /tmp/t_$n -o /tmp/t_$n.json > $W/trace_$n.log 2>&1; echo "$n trace rc=$?"
  python3 $D/s10/trace_overlap.py /tmp/t_$n/*.json 32 | tee $W/overlap_$n.txt
done
