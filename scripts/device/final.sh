#!/usr/bin/env bash
# The lead's closing run on the GPU machine, from the repository root, with binaries built here
# and carried in .device/final, laid out like a build tree:
#   cmake -S . -B build -G Ninja -DCACHEWISE_BUILD_BENCHMARKS=OFF -DCACHEWISE_BUILD_TESTS=ON
#   cmake --build build --target advisor kernels_tests cupti_tests probe_gpu_tests probe_analysis_tests
#   mkdir -p .device/final/bin .device/final/tests/{kernels,cupti,probe} && cp build/bin/advisor .device/final/bin/
#   cp build/tests/kernels/kernels_tests .device/final/tests/kernels/ && cp build/tests/cupti/cupti_tests .device/final/tests/cupti/
#   cp build/tests/probe/probe_{gpu,analysis}_tests .device/final/tests/probe/
# Runs the gpu tests; with PROBE=1 the probe (scripts/device/probe.sh full: two full probes and a
# --quick one, writing profiles/h200.json there); with NCU_DIAG=1 ncu sections of two stencil3d
# configs; with BANK_DIAG=1 the shared-memory counters of one padded transpose tile alone and in
# company; with DRAM_DIAG=1 the DRAM bytes of copies of 4 KB to 64 MB; the validation report (scripts/device/validate.sh)
# against profiles/h200.json; the tuner's convergence table from it; one measured tune. Everything
# lands in $OUT/results.tar.gz (the device tool returns at most 8 files), the summaries beside it.
# Never sets clocks.
set -uo pipefail
final=.device/final
out=${OUT:-/tmp/final-out}
work=$(mktemp -d)
mkdir -p "$out" "$work/probe"
export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv | tee "$work/gpu.txt"
# GPU_TESTS picks the test binaries (default all three); TUNE_TIMEOUT_S bounds the measured tune.
for test in ${GPU_TESTS:-kernels/kernels_tests cupti/cupti_tests probe/probe_gpu_tests}; do
  echo "== $test"
  "$final/tests/$test" 2>&1 | grep -E "FAILED|PASSED|SKIPPED|tests ran" | tail -n 12
done | tee "$work/gpu-tests.log"
if [ "${PROBE:-0}" = 1 ]; then
  OUT="$work/probe" BUILD_DIR="$final" bash scripts/device/probe.sh full 2>&1 | grep -E "WALL|PASSED|FAILED|wrote" | tee "$work/probe-summary.txt"
fi
REPEATS=${REPEATS:-5} CASE_TIMEOUT_S=${CASE_TIMEOUT_S:-90} TOTAL_TIMEOUT_S=${TOTAL_TIMEOUT_S:-480} \
  bash scripts/device/validate.sh "$final" "$work" profiles/h200.json 2>&1 | tail -n 14
if [ "${NCU_DIAG:-0}" = 1 ]; then
  # Why long z chunks lose on stencil3d n=256 (the model ranks them first): stall reasons and
  # memory throughput of a long-chunk config against the measured best, one launch each.
  for config in block_x=64,block_y=16,block_z=1,mode=1,vector=2,z_chunk=64 block_x=128,block_y=4,block_z=1,mode=1,vector=2,z_chunk=8; do
    timeout 120 ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section Occupancy \
      -k regex:stencil3d --launch-count 1 "$final/bin/advisor" validate --pattern stencil3d --n 256 --config "$config" \
      --no-counters --repeats 1 --profile profiles/h200.json >"$work/ncu-stencil3d-${config//[,=]/_}.txt" 2>&1
  done
fi
# One config through validate's counters, its JSON on stdout (the diagnostics below).
validate_json() { "$final/bin/advisor" validate --pattern "$1" --n "$2" --config "$3" --json --profile profiles/h200.json 2>&1; }
# Reads that JSON on stdin as d (c: its first candidate), runs the Python statements $1 and appends
# what they print to $work/$2.
diag_line() { python3 -c "import json,sys; d=json.load(sys.stdin); c=d['candidates'][0]; $1" 2>&1 | tee -a "$work/$2"; }
if [ "${BANK_DIAG:-0}" = 1 ]; then
  # Conflicts the counter reports for conflict-free padded transposes: do they need company?
  # One warp alone (n=32, one 32x1 block), a few blocks (n=256), the full problem (n=4096).
  for n in 32 256 4096; do
    for block_y in 1 8; do
      config="block_x=32,block_y=$block_y,pad=1,smem=1,tile=32"
      validate_json transpose $n "$config" | diag_line "m=c['measured']['metrics']; print('n=$n $config', *(k.replace('l1tex__data_pipe_lsu_', '').replace('l1tex__data_', '').replace('_pipe_lsu', '').replace('_mem_shared', '') + f'={m[k]:.0f}' for k in sorted(m) if 'shared' in k))" bank-diag.txt
    done
  done
  # A conflicting pattern (stencil2d's 16x2 staged tile): the model's count against the
  # counter with one block per SM (n=64: 128 blocks) and with many (n=4096).
  for n in 64 4096; do
    config="block_x=16,block_y=2,ept_y=1,radius=1,smem=1,vector=1"
    validate_json stencil2d $n "$config" | diag_line "p=c['predicted']['metrics']; m=c['measured']['metrics']; k='l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum'; w='l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum'; print('n=$n stencil2d $config ld conflicts predicted', p[k], 'measured', m[k], 'ld wavefronts predicted', p[w], 'measured', m[w])" bank-diag.txt
  done
fi
if [ "${DRAM_DIAG:-0}" = 1 ]; then
  # The ~4.7 MB of DRAM writes every validated config carries beyond its output: per pass or
  # per byte? A 4 KB, a 4 MB and a 64 MB copy through validate's counters, then the 4 KB
  # copy's kernel alone under ncu (its own cache control, no eviction ranges).
  for n in 1024 1048576 16777216; do
    validate_json copy $n block=128,ept=1,stride=1,vector=4 | diag_line "m=c['measured']['metrics']; print('validate copy n=$n dram read', m['dram__bytes_read.sum'], 'write', m['dram__bytes_write.sum'], 'pass baseline', d['pass_baseline_dram_write_bytes'])" dram-diag.txt
  done
  timeout 120 ncu --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum -k regex:copy --launch-count 1 "$final/bin/advisor" validate \
    --pattern copy --n 1024 --config block=128,ept=1,stride=1,vector=4 --no-counters --repeats 1 --profile profiles/h200.json 2>&1 |
    grep -E "copy|dram__" | tee -a "$work/dram-diag.txt"
fi
"$final/bin/advisor" tune --convergence-from "$work/validation-h200.json" | tee "$work/convergence.txt"
timeout "${TUNE_TIMEOUT_S:-100}" "$final/bin/advisor" tune --pattern transpose --n 4096 --strategy model --profile profiles/h200.json --header "$work/tuned-transpose.h" \
  --json "$work/tuned-transpose.json" 2>&1 | tail -n 15
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv,noheader | tee -a "$work/gpu.txt"
tar -czf "$out/results.tar.gz" -C "$work" .
cp "$work/validation-h200.md" "$work/convergence.txt" "$out/" 2>/dev/null
ls -la "$work" "$work/probe"
