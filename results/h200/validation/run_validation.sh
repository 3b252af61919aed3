#!/bin/bash
# Device calls of issue 6 (docs/validation.md). Binaries come prebuilt in build-valcarry/
# (anvil + the shared libraries the device image lacks); results land in $OUT.
#   STEP=profile  bash results/h200/validation/run_validation.sh   (call 1)
#   STEP=validate bash results/h200/validation/run_validation.sh   (call 2, after the profile
#                 and experiments/validate_random.json are committed)
#   STEP=all      both in one call: profile, then the held-out seeds derived from the new
#                 profile's SHA-256 (analysis/validation.py seeds; nothing can be tuned between
#                 the two), then validate; the profile and the experiment file land in $OUT.
# CARRY=DIR names another carried build (default build-valcarry). The profile step includes
# the co-residency curves (k CTAs per SM, docs/validation.md "Co-residency"; a few seconds);
# their progress lines are copied to $OUT/coresidency.log.
C=${CARRY:-build-valcarry}
export ANVIL_DATA_DIR=$PWD LD_LIBRARY_PATH=$PWD/$C/lib:$LD_LIBRARY_PATH
A=$C/anvil
date -u | tee $OUT/run.log
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv | tee -a $OUT/run.log
$A --help > /dev/null || { echo "carried anvil does not run here" | tee -a $OUT/run.log; exit 1; }
steps=$STEP; [ "$STEP" = all ] && steps="profile seeds validate"
for step in $steps; do
case "$step" in
  seeds)
    python3 analysis/validation.py seeds profiles/H200-SXM.json -o experiments/validate_random.json \
      | tee -a $OUT/run.log
    cp experiments/validate_random.json $OUT/
    ;;
  profile)
    timeout 400 $A profile --verbose 2> $OUT/profile_progress.log | tee -a $OUT/run.log
    echo "profile rc=${PIPESTATUS[0]}" | tee -a $OUT/run.log
    grep "co-residency" $OUT/profile_progress.log > $OUT/coresidency.log
    python3 -c 'import json; m=json.load(open("profiles/H200-SXM.json")).get("merge",{})
print("empty_cta_us", m.get("empty_cta_us"))
for c in m.get("curves",[]): print("merge", c["head_dim"], c["dtype"], list(zip(c["slots"], c["time_us"])))' \
      | tee -a $OUT/run.log
    python3 -c 'import json,sys; d=json.load(open("profiles/H200-SXM.json")).get("coresidency",{})
for v in d.get("variants",[]): print(v["kind"],v["m"],v["n"],v["warps"],"slowdown",v["slowdown"],"hbm_GBps",v["hbm_GBps"])' \
      | tee -a $OUT/run.log
    cp profiles/H200-SXM.json profiles/H200-SXM.spec.json profiles/H200-SXM.details.json $OUT/ 2>/dev/null
    $A table2 --gpu A100-80GB-SXM --gpu RTX-4090 --gpu H200-SXM --measured profiles/H200-SXM.json \
      > $OUT/table2.txt 2>&1; echo "table2 rc=$?" | tee -a $OUT/run.log
    ;;
  validate)
    for e in pat random; do
      timeout $([ $e = pat ] && echo 300 || echo 150) $A validate experiments/validate_$e.json --trace --out $OUT/$e \
        2>> $OUT/progress.log | tee -a $OUT/run.log
      echo "validate $e rc=${PIPESTATUS[0]}" | tee -a $OUT/run.log
    done
    # the same PAT batches predicted with the datasheet spec, to show what calibration changes
    # (left out of STEP=all, which would not fit one device call with it)
    if [ "$STEP" != all ]; then
      timeout 120 $A validate experiments/validate_pat.json --no-calibration --out $OUT/pat_uncal \
        --repeats 10 2>> $OUT/progress.log | tee -a $OUT/run.log
      echo "validate pat --no-calibration rc=${PIPESTATUS[0]}" | tee -a $OUT/run.log
      rm -f $OUT/pat_uncal/validation.csv
    fi
    tar czf $OUT/traces.tgz -C $OUT pat/traces random/traces && rm -rf $OUT/pat/traces $OUT/random/traces
    ;;
  *) echo "STEP must be profile, validate or all" ; exit 2 ;;
esac
done
# the device returns a handful of files: everything in one archive besides the log
[ "$STEP" != profile ] && (cd $OUT && tar czf results.tgz --ignore-failed-read pat random pat_uncal traces.tgz \
  validate_random.json H200-SXM.json H200-SXM.spec.json H200-SXM.details.json table2.txt \
  coresidency.log profile_progress.log progress.log 2>/dev/null; \
  rm -rf pat random pat_uncal traces.tgz validate_random.json H200-SXM.*json table2.txt coresidency.log)
