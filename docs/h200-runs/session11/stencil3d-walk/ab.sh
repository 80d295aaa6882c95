#!/usr/bin/env bash
# A/B/C/D: validate times of stencil3d configs with four advisor binaries, alternating.
# a = HEAD kernel, c = odd chunks walk down (runtime step) + 32-bit batch offsets, d = HEAD + 32-bit offsets,
# g = odd chunks walk down (direction a template argument) + 32-bit offsets + __maxnreg__ at the model's registers.
cd "$(dirname "$0")/../.." || exit 1
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/clocks-before.txt
C256="block_x=128,block_y=2,block_z=1,mode=1,vector=2,z_chunk=32 block_x=64,block_y=4,block_z=1,mode=1,vector=2,z_chunk=8 block_x=64,block_y=4,block_z=1,mode=1,vector=2,z_chunk=32 block_x=32,block_y=4,block_z=1,mode=1,vector=2,z_chunk=8 block_x=32,block_y=8,block_z=1,mode=1,vector=2,z_chunk=8 block_x=64,block_y=2,block_z=1,mode=1,vector=4,z_chunk=8 block_x=16,block_y=8,block_z=1,mode=1,vector=4,z_chunk=8 block_x=32,block_y=4,block_z=1,mode=1,vector=2,z_chunk=32 block_x=128,block_y=1,block_z=1,mode=1,vector=2,z_chunk=32 block_x=32,block_y=8,block_z=1,mode=1,vector=4,z_chunk=16"
C512="block_x=128,block_y=2,block_z=1,mode=1,vector=4,z_chunk=64 block_x=64,block_y=4,block_z=1,mode=1,vector=4,z_chunk=64 block_x=32,block_y=8,block_z=1,mode=1,vector=4,z_chunk=16 block_x=16,block_y=8,block_z=1,mode=1,vector=4,z_chunk=8 block_x=32,block_y=8,block_z=1,mode=1,vector=2,z_chunk=8 block_x=64,block_y=8,block_z=1,mode=1,vector=2,z_chunk=8"
for round in 1 2; do
  for n in 256 512; do
    if [ $n = 256 ]; then configs=$C256; else configs=$C512; fi
    for config in $configs; do
      for bin in a c d g; do
        out=$(.device/ab/bin/advisor_$bin validate --pattern stencil3d --n $n --config $config --no-counters --repeats 9 --check-points 2000 --profile profiles/h200.json 2>&1)
        echo "round $round n=$n $bin $(echo "$out" | grep -oE "copy: [0-9]+ GB/s") | $(echo "$out" | grep -E "^1 ")"
      done
    done
  done
done
# one counter pass per binary for two 256^3 configs (DRAM bytes)
for bin in a c d g; do
  for config in block_x=128,block_y=2,block_z=1,mode=1,vector=2,z_chunk=32 block_x=16,block_y=8,block_z=1,mode=1,vector=4,z_chunk=8; do
    .device/ab/bin/advisor_$bin validate --pattern stencil3d --n 256 --config $config --repeats 5 --profile profiles/h200.json --json > $OUT/counters-$bin-${config##*z_chunk=}.json 2>&1
  done
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/clocks-after.txt

for bin in a c d g; do
  cuobjdump -sass .device/ab/bin/advisor_$bin | awk '/Function : /{p=($0 ~ /stencil3d_streaming_vector/)} p' | gzip > $OUT/sass-$bin.txt.gz
done
cd $OUT && tar czf ab-files.tar.gz counters-*.json sass-*.txt.gz clocks-*.txt && rm -f counters-*.json sass-*.txt.gz clocks-*.txt
