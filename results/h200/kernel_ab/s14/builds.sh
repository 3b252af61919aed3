#!/bin/bash
# Session 14's carried builds, from this repository's HEAD plus cluster_multicast.patch (the
# cluster change as it was measured; not on main), in a scratch worktree. Writes build-c14s
# (with tests/gpu_kernels and the arch-90 rows of variants.json from its ptxas report),
# build-c14nomcs (-DAV_DIAG_NO_MC) and build-c14mbars (-DAV_CLUSTER_MBAR) at the repo root,
# each with the shared libraries the device lacks in lib/.
# Usage (repo root, on a CUDA 13 host): bash results/h200/kernel_ab/s14/builds.sh
set -e
R=$PWD; T=$(mktemp -d); S=$R/results/h200/kernel_ab/s14
git worktree add -q --detach $T/src HEAD
(cd $T/src && git apply $S/cluster_multicast.patch)
for v in s: nomcs:-DAV_DIAG_NO_MC mbars:-DAV_CLUSTER_MBAR; do
  n=${v%%:*}; f=${v#*:}; B=$T/b$n
  cmake -S $T/src -B $B -DAV_CUDA_ARCHS=90a -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_FLAGS=$f" > /dev/null
  make -C $B -j"$(nproc)" anvil gpu_kernels av_variant_table > /dev/null
  O=$R/build-c14$n; rm -rf $O; mkdir -p $O/tests $O/lib
  cp $B/anvil $O/; cp $B/tests/gpu_kernels $O/tests/
  for l in libgsl.so.27 libgslcblas.so.0 libjansson.so.4 libsubunit.so.0; do
    cp -L /lib/x86_64-linux-gnu/$l $O/lib/; done
done
B=$T/bs; $B/kernels/av_variant_table > $T/vt.jsonl
python3 $T/src/kernels/gen_variants.py --table $T/vt.jsonl \
  --logs $B/kernels/CMakeFiles/anvil_kernels.dir --archs 90 --out $T/v90.json
python3 - $R/kernels/variants.json $T/v90.json $R/build-c14s/variants.json <<'PY'
import json, sys
old, new = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
key = lambda v: (v['kind'], v['m'], v['n'], v['head_dim'], v['dtype'], v['arch'])
rows = {key(v): v for v in new['variants']}
old['variants'] = [rows.get(key(v), v) if v['arch'] == 90 else v for v in old['variants']]
json.dump(old, open(sys.argv[3], 'w'), indent=1)
PY
git worktree remove --force $T/src; rm -rf $T
