#!/usr/bin/env bash
# Re-predicts session 9 call 9's validation (the three-CTAs-per-SM m64 kernels, val.tgz here)
# offline, with that call's own profile and spec and the kernels' variants table from
# results/h200/kernel_ab/s10/minb3_kernels.patch (docs/validation.md, "The first-wave start
# cost"). Needs no GPU. Usage, from the repository root:
#   bash results/h200/validation/s9_minb3/offline.sh [ANVIL] [WORK_DIR]
# ANVIL: the anvil binary (default build-cpu/anvil); WORK_DIR (default /tmp/s9_minb3) gets the
# data directory (dd/), the unpacked record (rec/) and the two reports (pat/, random/).
set -euo pipefail
root="$(pwd)"
anvil="$(realpath "${1:-build-cpu/anvil}")"
work="${2:-/tmp/s9_minb3}"
rm -rf "$work"
mkdir -p "$work/unpack" "$work/rec" "$work/dd/kernels" "$work/dd/profiles" \
         "$work/dd/experiments/workloads" "$work/dd/sim"
tar xzf results/h200/validation/s9_minb3/val.tgz -C "$work/unpack"
tar xzf "$work/unpack/val/results.tgz" -C "$work/rec"
dd="$work/dd"
cp -r sim/gpus "$dd/sim/"
cp kernels/variants.json "$dd/kernels/"
git -C "$dd" init -q
git -C "$dd" apply --include=kernels/variants.json \
  "$root/results/h200/kernel_ab/s10/minb3_kernels.patch"
cp "$work/rec/H200-SXM.json" "$work/rec/H200-SXM.spec.json" "$work/rec/H200-SXM.details.json" \
   "$dd/profiles/"
cp "$work/rec/validate_random.json" experiments/validate_pat.json "$dd/experiments/"
cp experiments/workloads/pat_kernel_trees.json "$dd/experiments/workloads/"
cd "$dd"
for x in pat random; do
  ANVIL_DATA_DIR="$dd" "$anvil" validate --offline "$work/rec/$x/validation.json" \
    --out "$work/$x"
done
