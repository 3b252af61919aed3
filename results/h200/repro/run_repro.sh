#!/bin/bash
# The measured H200 columns of the kernel-level paper reproductions (docs/reproductions.md,
# studies 1, 3, 4, 6, 7), on one GPU host. Each experiment
# experiments/repro_h200_<study>.json (written by analysis/gen_repro_h200.py) runs through
#   anvil validate EXP --out $OUT/<study>
# (per (batch, scheduler): plan, prove exact, predict with the calibrated spec, run on the GPU,
# check against fp64, median of 20 timed runs with the L2 flushed), giving
# $OUT/<study>/validation.{csv,json}. Copy $OUT/<study>/ to results/h200/repro/<study>/;
# analysis/<study>.py then prints and plots the measured column next to the simulated one.
# Binaries come prebuilt in a carried folder (CARRY, default build-h200carry: anvil + lib/).
# Usage (repo root): CARRY=build-xyz bash results/h200/repro/run_repro.sh
# STUDIES picks a subset (default all five); logs go to $OUT/logs. GPU time per study is in the
# table below (host-side KV fill ~2-3 GB/s + ~0.15 s per plan + kernels).
C=${CARRY:-build-h200carry}
export ANVIL_DATA_DIR=$PWD LD_LIBRARY_PATH=$PWD/$C/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
A=$C/anvil
date -u | tee $L/run.log
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.used --format=csv | tee -a $L/run.log
$A --help > /dev/null || { echo "carried anvil does not run here" | tee -a $L/run.log; exit 1; }
# study   timeout (s)   batches, plans, KV of all batches (estimate)
#   pat_tiles            60    10 PAT trees x 3 schedulers, 8.6 GB   (~10 s)
#   flashinfer_balance   90    18 batches x 3, 13.3 GB               (~20 s)
#   flashforge_fig9     450    19 batches x 7, 12.7 GB               (184 s measured)
#   flashforge_fig8      90    2 batches x 4, 12.5 GB                (~15 s)
#   across_gpus          60    1 batch x 2, 6.0 GB                   (~5 s)
declare -A T=([pat_tiles]=60 [flashinfer_balance]=90 [flashforge_fig9]=450 [flashforge_fig8]=90 [across_gpus]=60)
S=${STUDIES:-pat_tiles flashinfer_balance flashforge_fig9 flashforge_fig8 across_gpus}
for s in $S; do
  [ -n "${T[$s]}" ] || { echo "unknown study $s" | tee -a $L/run.log; continue; }
  t0=$SECONDS
  timeout ${T[$s]} $A validate experiments/repro_h200_$s.json --out $OUT/$s \
    2>> $L/progress_$s.log | tee -a $L/run.log
  echo "validate $s rc=${PIPESTATUS[0]} wall=$((SECONDS - t0))s" | tee -a $L/run.log
done
date -u | tee -a $L/run.log
