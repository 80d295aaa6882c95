#!/usr/bin/env bash
# User kernels on the GPU: the test suite's user-style kernels (tests/frontend/kernels/*.json,
# never used to fit anything) and the example transpose, each measured exhaustively by
# `advisor tune --spec` and its predicted top 3 read through `advisor validate --spec`; then the
# tuner's failure paths on a real GPU (a candidate that traps, a run killed and resumed), and
# the gpu-labelled tests. Run ON the GPU machine from the repository root with binaries built
# here and carried, laid out like a build tree:
#   scripts/device/user_kernels.sh BUILD_DIR OUT_DIR
# Writes OUT_DIR/user-kernels.tar.gz (one JSON per kernel and step, the logs, the GPU's clocks
# before and after) and OUT_DIR/summary.txt. Never sets clocks.
set -uo pipefail
build=${1:?build dir}
out=${2:?out dir}
advisor="$build/bin/advisor"
export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CACHEWISE_CACHE_DIR=$(mktemp -d)
work=$(mktemp -d)/user-kernels
mkdir -p "$work" "$out"
log="$out/summary.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv >"$work/gpu-before.txt"

step() { # NAME TIMEOUT_S COMMAND...: runs it, its stdout to NAME.json, stderr to NAME.err
  local name=$1 limit=$2 start=$SECONDS
  shift 2
  timeout "$limit" "$@" >"$work/$name.json" 2>"$work/$name.err"
  echo "$name: exit $? in $((SECONDS - start)) s $(tail -c 300 "$work/$name.err" | tr '\n' ' ')" | tee -a "$log"
}

for spec in tests/frontend/kernels/*.json examples/kernels/transpose.json examples/kernels/spmv.json; do
  name=$(basename "$spec" .json)
  step "tune-$name" 150 "$advisor" tune --spec "$spec" --strategy exhaustive --max-repeats "${REPEATS:-30}" \
    --profile profiles/h200.json --json "$work/tuned-$name.json" --journal "$work/journal-$name.jsonl"
  step "validate-$name" 120 "$advisor" validate --spec "$spec" --top 3 --repeats "${REPEATS:-30}" --json --profile profiles/h200.json
done

# A candidate that traps (BLOCK=256) is marked failed; the other two are measured.
step tune-trap 120 "$advisor" tune --spec scripts/device/kernels/scale_trap.json --strategy exhaustive \
  --profile profiles/h200.json --json "$work/tuned-trap.json" --journal "$work/journal-trap.jsonl" --header "$work/tuned-trap.h"

# Kill a measuring run part-way, then resume it from its journal.
journal="$work/journal-killed.jsonl"
"$advisor" tune --spec examples/kernels/transpose.json --strategy exhaustive --max-repeats 100 --profile profiles/h200.json \
  --journal "$journal" >"$work/killed-first.json" 2>"$work/killed-first.err" &
pid=$!
for _ in $(seq 1 120); do
  [ -s "$journal" ] && [ "$(wc -l <"$journal")" -ge 6 ] && break
  sleep 0.5
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
echo "killed after $(wc -l <"$journal") journal lines" | tee -a "$log"
step tune-resumed 150 "$advisor" tune --spec examples/kernels/transpose.json --strategy exhaustive --max-repeats 100 \
  --profile profiles/h200.json --journal "$journal" --json "$work/tuned-resumed.json" --header "$work/tuned-resumed.h"
echo "resumed: $(grep -c '\[journal\]' "$work/tune-resumed.err") candidates from the journal, $(grep -c '^tune: ' "$work/tune-resumed.err") reported" | tee -a "$log"

# The many-GPU path on this host's GPUs (one here): devices listed in a child, one measuring
# child per GPU, the device named in the journal.
step tune-gpus-all 150 "$advisor" tune --spec examples/kernels/transpose.json --strategy exhaustive --gpus all \
  --profile profiles/h200.json --json "$work/tuned-gpus-all.json" --journal "$work/journal-gpus-all.jsonl"
echo "--gpus all: $(grep -c '"device"' "$work/journal-gpus-all.jsonl" 2>/dev/null) journal lines naming a device" | tee -a "$log"

tar -czf "$out/user-kernels.tar.gz" -C "$(dirname "$work")" user-kernels # in case the tests below outlast the call

# The gpu-labelled tests: the test binaries and the two CMake-script tests (run as ctest would);
# GPU_TESTS=0 leaves the test binaries out.
[ "${GPU_TESTS:-1}" = 1 ] && for test in kernels/kernels_tests cupti/cupti_tests probe/probe_gpu_tests; do
  echo "== $test" >>"$log"
  timeout 300 "$build/tests/$test" >"$work/$(basename "$test").log" 2>&1
  echo "exit $?: $(grep -E "PASSED|FAILED|SKIPPED" "$work/$(basename "$test").log" | tr '\n' ' ' | tail -c 400)" | tee -a "$log"
done
timeout 200 cmake -DADVISOR="$advisor" -DSPEC=examples/autotune-kernel/kernels/transpose.json -DWORK_DIR="$work/tune-kernel-on-gpu" \
  -P tests/tuner/tune_kernel_on_gpu.cmake >"$work/tune-kernel-on-gpu.log" 2>&1
echo "cli.tune_kernel_on_gpu: exit $? $(tail -c 300 "$work/tune-kernel-on-gpu.log" | tr '\n' ' ')" | tee -a "$log"
timeout 200 cmake -DADVISOR="$advisor" -DWORK_DIR="$work/tune-on-gpu" -P tests/tuner/tune_on_gpu.cmake >"$work/tune-on-gpu.log" 2>&1
echo "cli.tune_on_gpu: exit $? $(tail -c 300 "$work/tune-on-gpu.log" | tr '\n' ' ')" | tee -a "$log"
timeout 200 cmake -DADVISOR="$advisor" -DSPEC=examples/kernels/spmv.json -DWORK_DIR="$work/tune-spmv-on-gpu" \
  -P tests/tuner/tune_spmv_on_gpu.cmake >"$work/tune-spmv-on-gpu.log" 2>&1
echo "cli.tune_spmv_contents_on_gpu: exit $? $(tail -c 300 "$work/tune-spmv-on-gpu.log" | tr '\n' ' ')" | tee -a "$log"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv >"$work/gpu-after.txt"
cat "$work/gpu-before.txt" "$work/gpu-after.txt" | tee -a "$log"
cp "$log" "$work/summary.txt"
tar -czf "$out/user-kernels.tar.gz" -C "$(dirname "$work")" user-kernels
