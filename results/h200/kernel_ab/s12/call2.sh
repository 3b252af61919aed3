#!/bin/bash
# Session 12, call 2: the validation of record with session 11's kernels (unchanged) and
# session 12's model: profile (its first run of the start step), held-out seeds from the new
# profile's SHA-256, validate (docs/validation.md). build-c12v = anvil built from this commit
# for sm_90a, the shared libraries, and build-c11s's variants.json (the same kernels).
# Usage (repo root): bash results/h200/kernel_ab/s12/call2.sh
mkdir -p /tmp/val
cp build-c12v/variants.json kernels/variants.json
(OUT=/tmp/val CARRY=build-c12v STEP=all bash results/h200/validation/run_validation.sh > /tmp/val/stdout.log 2>&1)
tail -25 /tmp/val/stdout.log
tar czf $OUT/val.tgz -C /tmp val
