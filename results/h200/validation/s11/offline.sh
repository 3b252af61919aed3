#!/usr/bin/env bash
# Re-predicts session 11 call 4's validation (val.tgz here; the record of session 11, replaced
# by session 12's) offline with that call's own profile and held-out experiment and the
# committed kernels' variants table (the same kernels). Needs no GPU. Usage, from the
# repository root:
#   bash results/h200/validation/s11/offline.sh [ANVIL] [WORK_DIR]
# ANVIL: the anvil binary (default build-cpu/anvil); WORK_DIR (default /tmp/s11_offline) gets
# the data directory (dd/) and the unpacked record (rec/). Set AV_NO_TMA=1 for the model
# before session 12's whole-box KV copies (docs/validation.md).
set -euo pipefail
anvil="$(realpath "${1:-build-cpu/anvil}")"
work="${2:-/tmp/s11_offline}"
rm -rf "$work"
mkdir -p "$work/unpack" "$work/rec" "$work/dd/kernels" "$work/dd/profiles" \
         "$work/dd/experiments/workloads" "$work/dd/sim"
tar xzf results/h200/validation/s11/val.tgz -C "$work/unpack"
tar xzf "$work/unpack/val/results.tgz" -C "$work/rec"
dd="$work/dd"
cp -r sim/gpus "$dd/sim/"
cp kernels/variants.json "$dd/kernels/"
cp "$work/rec/H200-SXM.json" "$work/rec/H200-SXM.spec.json" "$work/rec/H200-SXM.details.json" \
   "$dd/profiles/"
cp "$work/rec/validate_random.json" experiments/validate_pat.json "$dd/experiments/"
cp experiments/workloads/pat_kernel_trees.json "$dd/experiments/workloads/"
cd "$dd"
for x in pat random; do
  ANVIL_DATA_DIR="$dd" "$anvil" validate --offline "$work/rec/$x/validation.json" \
    2>&1 | grep -E "recorded|auto: "
done
