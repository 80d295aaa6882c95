#!/usr/bin/env bash
# Probe run on the GPU machine (through the device tool), from the repository root, with the build
# made here carried along: `cmake -S . -B build-probe -G Ninja -DCACHEWISE_BUILD_BENCHMARKS=OFF
# -DCACHEWISE_BUILD_TESTS=ON && cmake --build build-probe --target advisor probe_gpu_tests
# probe_analysis_tests`, then run this with carry build-probe/bin, build-probe/tests/probe.
#
#   scripts/device/probe.sh full    # tests, two full probes and one --quick probe (the shipped artifacts)
#   scripts/device/probe.sh first   # tests and one full probe (a first look at the curves)
#
# Writes profiles/h200.json (+ -latency.svg) in the working tree there and copies the results, the
# second run and the log under $OUT (at most 8 files). Reads clocks, never sets them.
set -uo pipefail
mode=${1:-full}
build=${BUILD_DIR:-build-probe}
out=${OUT:-/tmp/probe-out}
mkdir -p "$out" profiles
export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
advisor=$build/bin/advisor

timed() { # timed LABEL COMMAND...: runs the command, then prints its wall time
  local label=$1 start=$EPOCHREALTIME status
  shift
  "$@"
  status=$?
  awk -v a="$start" -v b="$EPOCHREALTIME" -v l="$label" -v s="$status" \
    'BEGIN { printf "WALL %-28s %6.1f s (exit %d)\n", l, b - a, s }'
}

{
  nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv
  timed analysis-tests "$build/tests/probe/probe_analysis_tests" --gtest_brief=1
  timed gpu-tests "$build/tests/probe/probe_gpu_tests"
  timed "probe full (run 1)" timeout 300 "$advisor" probe -o profiles/h200.json --force
  if [ "$mode" = full ]; then
    timed "probe full (run 2)" timeout 300 "$advisor" probe -o /tmp/h200-run2.json --force
    timed "probe --quick" timeout 120 "$advisor" probe --quick -o /tmp/h200-quick.json --force
  fi
  "$advisor" show profiles/h200.json
  # The timed kernels' clock reads must bracket their loads: keep the SASS order for review.
  cuobjdump -sass "$advisor" | awk '/Function :/ { keep = ($0 ~ /self_loop|chase_per_hop|script_kernel|chase_kernel|eviction_test/) } keep' |
    grep -E "Function|CS2R|S2UR|LDG|STS|BRA|BAR" > "$out/timed-kernels.sass"
  nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv
} 2>&1 | tee "$out/probe.log"

cp profiles/h200.json profiles/h200-latency.svg "$out/" 2>/dev/null
cp /tmp/h200-run2.json /tmp/h200-run2-latency.svg /tmp/h200-quick.json "$out/" 2>/dev/null
exit 0
