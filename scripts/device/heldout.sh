#!/usr/bin/env bash
# Held-out validation cases: sizes and dtypes the time model's calibration never saw (the fitted
# ten are scripts/device/validate.sh's). Run ON the GPU machine from the repository root with an
# advisor binary built from kernels that are today's:
#   scripts/device/heldout.sh BUILD_DIR OUT_DIR
# Per case: every feasible config timed (--all, REPEATS launches each, median), counters of the
# predicted best 3, the measured best and the predicted worst; plus the naive 32x8 transpose
# (no shared memory) at n=8192 with its counters. Writes OUT_DIR/heldout.tar.gz of one JSON per
# case and the GPU's clocks before and after. Never sets clocks.
set -uo pipefail
build=${1:?build dir}
out=${2:?out dir}
advisor="$build/bin/advisor"
export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
work=$(mktemp -d)/heldout
mkdir -p "$work" "$out"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv >"$work/gpu-before.txt"
cases=(
  "transpose --n 2048"
  "transpose --n 4096 --dtype f64"
  "transpose --n 8192 --dtype f16"
  "copy --n 33554432 --dtype f64"
  "copy --n 67108864 --dtype f16"
  "stencil2d --n 2048"
  "stencil2d --n 4096 --dtype f64"
  "stencil3d --n 384"
  "stencil3d --n 256 --dtype f16"
  "gemm --n 768"
  "gemm --n 512 --dtype f64"
)
i=0
for case in "${cases[@]}"; do
  start=$SECONDS
  # shellcheck disable=SC2086
  timeout "${CASE_TIMEOUT_S:-100}" "$advisor" validate --pattern $case --all --json --repeats "${REPEATS:-5}" --counters 3 \
    --profile profiles/h200.json >"$work/case-$i.json" 2>"$work/error-$i.txt"
  echo "case $i ($case): exit $? in $((SECONDS - start)) s $(head -c 200 "$work/error-$i.txt")"
  i=$((i + 1))
done
timeout 60 "$advisor" validate --pattern transpose --n 8192 --config block_x=32,block_y=8,pad=0,smem=0,tile=32 --json \
  --repeats "${REPEATS:-5}" --profile profiles/h200.json >"$work/naive-transpose-8192.json" 2>"$work/naive-error.txt"
echo "naive transpose n=8192: exit $?"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv >"$work/gpu-after.txt"
cat "$work/gpu-before.txt" "$work/gpu-after.txt"
tar -czf "$out/heldout.tar.gz" -C "$(dirname "$work")" heldout
