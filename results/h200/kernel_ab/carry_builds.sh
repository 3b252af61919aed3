#!/bin/bash
# Carried builds for a device A/B, from this working tree: for each NAME:FLAGS argument, an
# sm_90a Release build with CMAKE_CUDA_FLAGS=FLAGS, copied to build-NAME at the repo root as
# what the device needs: anvil, gpu_kernels (run_ab.sh's place for it), the shared libraries the device image
# lacks (lib/), and kernels/variants.json with its arch-90 rows regenerated from the build's
# own ptxas report (run_ab.sh and the p16k scripts plan with it).
# Usage (repo root, on a CUDA 13 host): bash results/h200/kernel_ab/carry_builds.sh c15s: c15b:-DAV_SPLIT_KV=0
set -e
R=$PWD; T=$(mktemp -d)
for v in "$@"; do
  n=${v%%:*}; f=${v#*:}; B=$T/$n
  cmake -S $R -B $B -DAV_CUDA_ARCHS=90a -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_FLAGS=$f" > /dev/null
  make -C $B -j"$(nproc)" anvil gpu_kernels av_variant_table > /dev/null
  O=$R/build-$n; rm -rf $O; mkdir -p $O/lib
  cp $B/anvil $B/tests/gpu_kernels $O/
  for l in libgsl.so.27 libgslcblas.so.0 libjansson.so.4 libsubunit.so.0; do
    cp -L /lib/x86_64-linux-gnu/$l $O/lib/; done
  $B/kernels/av_variant_table > $T/vt.jsonl
  python3 $R/kernels/gen_variants.py --table $T/vt.jsonl \
    --logs $B/kernels/CMakeFiles/anvil_kernels.dir --archs 90 --out $T/v90.json
  python3 - $R/kernels/variants.json $T/v90.json $O/variants.json <<'PY'
import json, sys
old, new = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
key = lambda v: (v['kind'], v['m'], v['n'], v['head_dim'], v['dtype'], v['arch'])
rows = {key(v): v for v in new['variants']}
have = {key(v) for v in old['variants']}
old['variants'] = [rows.get(key(v), v) if v['arch'] == 90 else v for v in old['variants']]
old['variants'] += [v for k, v in rows.items() if k not in have]  # tiles only this build has
json.dump(old, open(sys.argv[3], 'w'), indent=1)
PY
  rm -rf $B
done
rm -rf $T
