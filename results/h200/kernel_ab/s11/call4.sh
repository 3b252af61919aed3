#!/bin/bash
# Session 11, call 4: the validation of record with the session-11 kernels (every tile swizzled
# and copied by TMA on sm_90a, three m64 CTAs per SM; build-c11s, kernels/variants.json of that
# build): profile, held-out seeds from its SHA-256, validate (docs/validation.md).
# Usage (repo root): bash results/h200/kernel_ab/s11/call4.sh
mkdir -p /tmp/val
(OUT=/tmp/val CARRY=build-c11s STEP=all bash results/h200/validation/run_validation.sh > /tmp/val/stdout.log 2>&1)
tail -25 /tmp/val/stdout.log
tar czf $OUT/val.tgz -C /tmp val
