#!/usr/bin/env bash
# A/B: validate times of stencil3d configs with two advisor binaries, alternating. Run from the
# repository root (the copy that ran sat in .device/final and first changed to the root).
for round in 1 2; do
  for n in 256 512; do
    for config in block_x=32,block_y=8,block_z=1,mode=1,vector=2,z_chunk=8 block_x=64,block_y=8,block_z=1,mode=1,vector=2,z_chunk=8 block_x=32,block_y=4,block_z=1,mode=1,vector=2,z_chunk=32 block_x=32,block_y=8,block_z=1,mode=1,vector=4,z_chunk=8; do
      for bin in advisor advisor_b; do
        out=$(.device/final/bin/$bin validate --pattern stencil3d --n $n --config $config --no-counters --repeats 9 --check-points 2000 --profile profiles/h200.json)
        echo "round $round n=$n $bin $(echo "$out" | grep -oE "copy: [0-9]+ GB/s") | $(echo "$out" | grep -E "^1 ")"
      done
    done
  done
done
