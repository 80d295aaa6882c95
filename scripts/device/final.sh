#!/usr/bin/env bash
# The lead's closing run on the GPU machine, from the repository root, with binaries built here
# and carried in .device/final (advisor in bin/, the gpu test binaries beside it):
#   cmake -S . -B build -G Ninja -DCACHEWISE_BUILD_BENCHMARKS=OFF -DCACHEWISE_BUILD_TESTS=ON
#   cmake --build build --target advisor kernels_tests cupti_tests probe_gpu_tests
#   mkdir -p .device/final/bin && cp build/bin/advisor .device/final/bin/ &&
#   cp build/tests/{kernels/kernels_tests,cupti/cupti_tests,probe/probe_gpu_tests} .device/final/
# Runs the gpu tests, the validation report (scripts/device/validate.sh), the tuner's
# convergence table from it, and one measured tune; results under $OUT. Never sets clocks.
set -uo pipefail
final=.device/final
out=${OUT:-/tmp/final-out}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv | tee "$out/gpu.txt"
for test in kernels_tests cupti_tests probe_gpu_tests; do
  echo "== $test"
  "$final/$test" 2>&1 | tail -n 3
done | tee "$out/gpu-tests.log"
REPEATS=5 CASE_TIMEOUT_S=40 TOTAL_TIMEOUT_S=330 bash scripts/device/validate.sh "$final" "$out" profiles/h200.json 2>&1 | tail -n 12
"$final/bin/advisor" tune --convergence-from "$out/validation-h200.json" | tee "$out/convergence.txt"
timeout 100 "$final/bin/advisor" tune --pattern transpose --n 4096 --strategy model --header "$out/tuned-transpose.h" \
  --json "$out/tuned-transpose.json" 2>&1 | tail -n 15
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv,noheader | tee -a "$out/gpu.txt"
