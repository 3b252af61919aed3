#!/bin/bash
# Session 12, call 1: where prefix16k's time goes with the session-11 kernels (build-c11s).
# 1) every fd_beside variant of p16k_s12.json timed twice (median of 20);
# 2) the fd_beside plan and its n32-root twin traced (per-CTA start/end, SM), summarised by
#    s10/trace_overlap.py (root CTAs = items whose first segment is the root);
# 3) Nsight Compute (full set + SASS stall samples) on the fd_beside plan's two attention
#    launches, each alone as ncu serialises them.
# Usage (repo root, on the device): bash results/h200/kernel_ab/s12/call1.sh
B=build-c11s; D=results/h200/kernel_ab/s12
export ANVIL_DATA_DIR=$PWD LD_LIBRARY_PATH=$PWD/$B/lib
cp $B/variants.json kernels/variants.json
W=/tmp/c1; mkdir -p $W
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $W/gpu.txt
for i in 1 2; do
  timeout 150 $B/anvil exec $D/p16k_s12.json --repeats 20 --check-requests 2 --csv $W/p16k_$i.csv \
    > $W/p16k_$i.log 2>&1; echo "timing run $i rc=$?"; grep prefix16k $W/p16k_$i.log
done
for p in fd_beside fdb_n32_k4; do
  mkdir -p $W/t_$p
  timeout 60 $B/anvil exec --plan $D/plan_$p.json --repeats 20 --check-requests 2 --trace $W/t_$p \
    -o $W/$p.json > $W/$p.log 2>&1; echo "== $p rc=$?"; tail -n 2 $W/$p.log | head -1
  python3 results/h200/kernel_ab/s10/trace_overlap.py $W/t_$p/*.json 32
done
timeout 240 ncu --clock-control none --kernel-name regex:"m64_n64|persistent" --launch-count 2 \
  --set full --import-source yes -o $W/rep $B/anvil exec --plan $D/plan_fd_beside.json --repeats 1 \
  --warmup 0 --no-verify > $W/ncu.log 2>&1; echo "ncu rc=$?"
ncu --import $W/rep.ncu-rep --csv --page details > $W/details.csv 2>&1
ncu --import $W/rep.ncu-rep --csv --page source --print-source sass > $W/sass.csv 2>&1
rm -f $W/rep.ncu-rep
tar czf $OUT/c1.tgz -C /tmp c1
