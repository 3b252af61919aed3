#!/bin/bash
# Session 14, call 4: the SMs' streaming ceiling by bulk async copies (bench/l2_probe.cu), from
# L2 (every CTA reading one 16 MiB buffer, as the root's row tiles read one KV chunk) and from
# DRAM, by tile size, ring stages and CTAs an SM: is prefix16k's root (32 KiB tiles, 2 stages,
# about 2 CTAs an SM, ~5.3 TB/s from L2) at the L2's bandwidth or at its ring's latency?
# Usage (repo root, on the device): bash results/h200/kernel_ab/s14/call4.sh
W=/tmp/c4; mkdir -p $W
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv | tee $W/gpu.txt
nvcc -O3 -std=c++17 -arch=sm_90a -I. bench/l2_probe.cu -o $W/l2_probe && timeout 120 $W/l2_probe | tee $W/l2_probe.csv
rm -f $W/l2_probe
tar czf $OUT/c4.tgz -C /tmp c4
