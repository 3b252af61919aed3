#!/bin/bash
# Session 16, call 2: what bounds the m128 ping-pong root. The root nearly alone (root128: the
# m128 twin of s14/plan_root16k.json), traced twice per build, outputs not verified:
#   build-c16p:  the body as built (-DAV_M128_REGS=176);
#   build-c16pn: + -DAV_DIAG_NOLOAD (the first S tiles copied, then computed on again and again);
#   build-c16pt: + -DAV_PP_NOTURN (no turn barriers: the warpgroups run free).
# Builds: bash results/h200/kernel_ab/carry_builds.sh c16p:-DAV_M128_REGS=176 \
#   c16pn:"-DAV_M128_REGS=176 -DAV_DIAG_NOLOAD" c16pt:"-DAV_M128_REGS=176 -DAV_PP_NOTURN"
# Usage (repo root, on the device): bash results/h200/kernel_ab/s16/call2.sh
D=results/h200/kernel_ab; W=/tmp/c2; mkdir -p $W
export ANVIL_DATA_DIR=$PWD
python3 $D/s16/to_m128.py $D/s14/plan_root16k.json $W/root128.json
for B in build-c16p build-c16pn build-c16pt; do
  export LD_LIBRARY_PATH=$PWD/$B/lib; cp $B/variants.json kernels/variants.json
  for i in 1 2; do
    t=$W/t_${B#build-}_$i; mkdir -p $t
    timeout 60 $B/anvil exec --plan $W/root128.json --repeats 20 --no-verify --trace $t -o $t.json > $t.log 2>&1
    echo "== $B root128 run $i rc=$? median $(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['rows'][0]; print(round(r['median_us'],1), 'min', round(r['min_us'],1))" $t.json 2>&1 | tail -1)"
    python3 $D/s14/root_sm.py $t/*.json 16
    rm -rf $t
  done
done 2>&1 | tee $W/summary.txt
tar czf $OUT/c2.tgz -C /tmp c2
