#!/usr/bin/env bash
# Re-predicts an archived validation call (a val.tgz of a device call: val/results.tgz inside)
# offline, with that call's own profile, spec and held-out experiment, in a data directory of
# its own (ANVIL_DATA_DIR), so that a record replaced since by a newer one can still be
# re-predicted. Needs no GPU. Usage, from the repository root:
#   bash results/h200/validation/offline_record.sh VAL.tgz [ANVIL] [WORK_DIR] [VARIANTS_PATCH]
# ANVIL: the anvil binary (default build-cpu/anvil); WORK_DIR (default /tmp/offline_record)
# gets the data directory (dd/), the unpacked record (rec/) and the two reports (pat/,
# random/); VARIANTS_PATCH, when given, is applied to the data directory's copy of
# kernels/variants.json (the record's kernels were not main's).
set -euo pipefail
root="$(pwd)"
archive="$1"
anvil="$(realpath "${2:-build-cpu/anvil}")"
work="${3:-/tmp/offline_record}"
patch="${4:-}"
rm -rf "$work"
mkdir -p "$work/unpack" "$work/rec" "$work/dd/kernels" "$work/dd/profiles" \
         "$work/dd/experiments/workloads" "$work/dd/sim"
tar xzf "$archive" -C "$work/unpack"
tar xzf "$work/unpack/val/results.tgz" -C "$work/rec"
dd="$work/dd"
cp -r sim/gpus "$dd/sim/"
cp kernels/variants.json "$dd/kernels/"
if [ -n "$patch" ]; then
  git -C "$dd" init -q
  git -C "$dd" apply --include=kernels/variants.json "$root/$patch"
fi
cp "$work/rec/H200-SXM.json" "$work/rec/H200-SXM.spec.json" "$work/rec/H200-SXM.details.json" \
   "$dd/profiles/"
cp "$work/rec/validate_random.json" experiments/validate_pat.json "$dd/experiments/"
cp experiments/workloads/pat_kernel_trees.json "$dd/experiments/workloads/"
cd "$dd"
for x in pat random; do
  ANVIL_DATA_DIR="$dd" "$anvil" validate --offline "$work/rec/$x/validation.json" \
    --out "$work/$x"
done
