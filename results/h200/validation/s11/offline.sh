#!/usr/bin/env bash
# Re-predicts session 11 call 4's validation (val.tgz here: the record of session 11, replaced
# by session 12's) offline with that call's own profile and held-out experiment and the
# committed kernels' variants table (the same kernels). Set AV_NO_TMA=1 for the model before
# session 12's whole-box KV copies (docs/validation.md). Usage, from the repository root:
#   bash results/h200/validation/s11/offline.sh [ANVIL] [WORK_DIR]
exec bash results/h200/validation/offline_record.sh results/h200/validation/s11/val.tgz \
  "${1:-build-cpu/anvil}" "${2:-/tmp/s11_offline}"
