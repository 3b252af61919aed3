#!/bin/bash
# FlashForge Fig. 6 measured on the H200 (docs/reproductions.md, study 5): DRAM bytes and L1->L2
# read bytes (sectors x 32) of every anvil kernel of one plan, from Nsight Compute counters, for
# greedy_division and query_centric on a subset of experiments/flashforge_memory.json's
# workloads (32/32 heads, fp16, d 128). Each (workload, scheduler) runs once
# (`anvil exec --repeats 1 --warmup 0 --no-verify`: one launch of the plan, after the
# executor's L2 flush) under `ncu --metrics`, counting only kernels named av_k_*.
# Usage (repo root): CARRY=build-xyz bash results/h200/repro/run_memory_ncu.sh
C=${CARRY:-build-h200carry}
export ANVIL_DATA_DIR=$PWD LD_LIBRARY_PATH=$PWD/$C/lib:$LD_LIBRARY_PATH
W=${WORKLOADS:-seq-512 seq-8192 batch-8 batch-128 depth-2 depth-6 ratio-0.5 ratio-0.9 2T 5T DT}
mkdir -p $OUT/memory_ncu/raw
echo "workload,scheduler,kernels,dram_read_bytes,dram_write_bytes,l2_read_bytes_from_l1" > $OUT/memory_ncu/bytes.csv
for w in $W; do
  for s in greedy_division query_centric; do
    python3 - "$w" "$s" > /tmp/mem_${w}_${s}.json <<'PY'
import json, sys
e = json.load(open("experiments/flashforge_memory.json"))
w = [x for x in e["workloads"] if x["name"] == sys.argv[1]]
e.update(name="memory-ncu", workloads=w, schedulers=[{"name": sys.argv[2]}], gpu="H200-SXM")
print(json.dumps(e))
PY
    f=$OUT/memory_ncu/raw/${w}__$s.csv
    timeout 120 ncu --clock-control none --kernel-name regex:av_k_ --csv \
      --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum \
      $C/anvil exec /tmp/mem_${w}_${s}.json --repeats 1 --warmup 0 --no-verify > $f 2>&1
    python3 analysis/ncu_bytes.py "$f" "$w" "$s" >> $OUT/memory_ncu/bytes.csv
    tail -1 $OUT/memory_ncu/bytes.csv
  done
done
tar czf $OUT/memory_ncu/raw.tgz -C $OUT/memory_ncu raw && rm -rf $OUT/memory_ncu/raw
