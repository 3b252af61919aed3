#!/bin/bash
# Session 13, call 4: is prefix16k's root bound by its KV copies? build-c13dg = build-c13m4s's
# kernels with -DAV_DIAG_NOLOAD: the one-item body fills its ring once and then computes on
# it without copying or waiting (outputs wrong, so unverified). The m64 root (k4_l32x33) and
# the m128 root (m128k4_l32x33) against their loading twins in call 3.
# Usage (repo root, on the device): bash results/h200/kernel_ab/s13/call4.sh
TAG=c4 BUILDS=build-c13dg PLANS=k4_l32x33,m128k4_l32x33 EXEC=--no-verify \
  bash results/h200/kernel_ab/s13/call3.sh
