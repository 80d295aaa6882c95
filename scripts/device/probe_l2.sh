#!/usr/bin/env bash
# The probe's L2 latency, capacity and L1 bandwidth methods on the GPU machine (through the
# device tool), from the repository root:
#
#   bash scripts/device/probe_l2.sh
#
# Builds advisor and the probe tests with cmake + ninja -j16 (make without ninja) in BUILD_DIR (default
# /tmp/cachewise-probe-l2, outside the tree), runs the probe's GPU tests (ctest -L gpu -R probe),
# then two full probes (`advisor probe`, not --quick), and prints a table of the values each
# method gave last. Results, 8 files under $OUT: probe.json, probe-latency.svg,
# probe-run2.json, probe-run2-latency.svg, ctest.log, probe_l2.log, table.txt, kernels.sass. Clocks are only
# read (nvidia-smi queries before and after), never set. The whole run keeps within
# BUDGET_S (default 450 s): each step gets what is left of it, so one that hangs cannot stop the
# table; a step that fails is reported and the next one runs.
set -euo pipefail
out=${OUT:-/tmp/probe-l2-out}
build=${BUILD_DIR:-/tmp/cachewise-probe-l2}
budget=${BUDGET_S:-450}
mkdir -p "$out"
log="$out/probe_l2.log"
: >"$log"
export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH

say() { echo "$*" | tee -a "$log"; }

# step NAME CAP_S COMMAND...: runs COMMAND with at most CAP_S seconds and what is left of the
# budget (keeping 30 s for the table), logs its output and wall time, never stops the script.
step() {
  local name=$1 cap=$2 left status start=$SECONDS
  shift 2
  left=$((budget - SECONDS - 30))
  ((left < cap)) && cap=$left
  if ((cap < 5)); then
    say "STEP $name: skipped (budget of ${budget} s spent)"
    return 0
  fi
  say "STEP $name (limit ${cap} s): $*"
  status=0
  timeout --kill-after=10 "$cap" "$@" >>"$log" 2>&1 || status=$?
  say "STEP $name: exit $status after $((SECONDS - start)) s"
  return 0
}

clocks() { nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv 2>&1 | tee -a "$log" || true; }

say "== probe_l2.sh at $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv 2>&1 | tee -a "$log" || true
say "-- clocks before"
clocks

generator=Ninja
command -v ninja >/dev/null 2>&1 || generator="Unix Makefiles" # same targets, built by make
step configure 120 cmake -S . -B "$build" -G "$generator" -DCMAKE_BUILD_TYPE=Release -DCACHEWISE_WITH_CUDA=ON \
  -DCACHEWISE_BUILD_TESTS=ON -DCACHEWISE_BUILD_BENCHMARKS=OFF
step build 300 cmake --build "$build" -j16 --target advisor probe_gpu_tests probe_analysis_tests
advisor="$build/bin/advisor"
tests="$build/tests/probe"
prebuilt=${PREBUILT_DIR:-.device/probe-l2} # binaries built elsewhere (carried), used only when this build failed
if [[ ! -x "$advisor" && -x "$prebuilt/bin/advisor" ]]; then
  advisor="$prebuilt/bin/advisor"
  tests="$prebuilt/tests/probe"
fi
say "advisor: $([[ -x "$advisor" ]] && echo "$advisor" || echo "not built")"

# The L1 read kernel's loads as ptxas left them: 8 LDG.E.128 per iteration of its timed loop.
step l1-read-sass 60 bash -c "cuobjdump -sass '$advisor' | awk '/Function : .*l1_read_kernel/{f=1;next} /Function : /{f=0} f' | grep -cE 'LDG.E.128'"
step analysis-tests 60 "$tests/probe_analysis_tests" --gtest_brief=1
if [[ -f "$build/CTestTestfile.cmake" ]]; then
  step gpu-tests 150 bash -c "ctest --test-dir '$build' -L gpu -R probe --output-on-failure --timeout 140 >'$out/ctest.log' 2>&1; status=\$?; tail -n 30 '$out/ctest.log'; exit \$status"
else
  step gpu-tests 150 bash -c "'$tests/probe_gpu_tests' >'$out/ctest.log' 2>&1; status=\$?; tail -n 30 '$out/ctest.log'; exit \$status"
fi

if [[ -x "$advisor" ]]; then
  step "probe run 1" 120 "$advisor" probe -o "$out/probe.json" --force
  step "probe run 2" 120 "$advisor" probe -o "$out/probe-run2.json" --force
else
  say "no advisor binary: probes skipped"
fi
say "-- clocks after"
clocks
# The new timed kernels' SASS order (clock reads around the loads, loads not merged), for review.
if [[ -x "$advisor" ]] && command -v cuobjdump >/dev/null 2>&1; then
  cuobjdump -sass "$advisor" 2>/dev/null |
    awk '/Function :/ { keep = ($0 ~ /first_load_kernel|l1_read_kernel|chase_kernel/) } keep' |
    grep -E "Function|CS2R|S2UR|LDG|STS|BRA|BAR" >"$out/kernels.sass" || true
fi

python3 scripts/device/probe_l2_table.py profiles/h200.json "$out/probe.json" "$out/probe-run2.json" \
  >"$out/table.txt" 2>&1 || echo "table: exit $?" >>"$out/table.txt"
cat "$out/table.txt" >>"$log"
cat "$out/table.txt"
exit 0
