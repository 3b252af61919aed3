#!/usr/bin/env bash
# Re-predicts session 9 call 9's validation (the three-CTAs-per-SM m64 kernels, val.tgz here)
# offline, with that call's own profile and spec and the kernels' variants table from
# results/h200/kernel_ab/s10/minb3_kernels.patch (docs/validation.md, "The first-wave start
# cost"; the patch applies to the variants table of commit 9d08c5b, see "Whole-box KV copies").
# Needs no GPU. Usage, from the repository root:
#   bash results/h200/validation/s9_minb3/offline.sh [ANVIL] [WORK_DIR]
exec bash results/h200/validation/offline_record.sh results/h200/validation/s9_minb3/val.tgz \
  "${1:-build-cpu/anvil}" "${2:-/tmp/s9_minb3}" results/h200/kernel_ab/s10/minb3_kernels.patch
