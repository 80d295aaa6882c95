#!/usr/bin/env bash
# Why stencil3d's long z chunks lose at 256^3 only when launches run back to back (docs/model.md,
# "Session 5" and "Session 7"): per config, ncu reads one launch's DRAM and L2 traffic and its
# duration twice: after a cache flush (--cache-control all) and in the L2 state the previous
# launches left (--cache-control none, the 8th launch of `advisor validate`'s back-to-back
# timing). Run on the GPU machine from the repository root with the binaries of
# scripts/device/final.sh in .device/final; writes $OUT/back-to-back.txt. Never sets clocks.
set -uo pipefail
final=.device/final
out=${OUT:-/tmp/back-to-back}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_read_lookup_miss.sum
for config in block_x=64,block_y=4,block_z=1,mode=1,vector=2,z_chunk=8 block_x=64,block_y=4,block_z=1,mode=1,vector=2,z_chunk=32 \
  block_x=64,block_y=4,block_z=1,mode=1,vector=2,z_chunk=64 block_x=128,block_y=2,block_z=1,mode=1,vector=2,z_chunk=8; do
  for cache in all none; do
    echo "== $config cache-control=$cache"
    timeout 120 ncu --clock-control none --cache-control "$cache" --metrics "$metrics" -k regex:stencil3d --launch-skip 7 --launch-count 1 \
      "$final/bin/advisor" validate --pattern stencil3d --n 256 --config "$config" --no-counters --repeats 10 --profile profiles/h200.json 2>&1 |
      grep -E "gpu__time|dram__|lts__|ERROR|error" | sed 's/^ *//'
  done
done | tee "$out/back-to-back.txt"
