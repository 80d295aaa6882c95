#!/usr/bin/env bash
# Executed warp instructions (smsp__inst_executed.sum) of the compiled kernels against the
# model's count, for fitting and checking the families' overhead instructions (docs/model.md,
# "Calibration values and their sources"). Run ON the GPU machine from the repository root with an advisor binary:
#   scripts/device/instructions.sh BUILD_DIR OUT_DIR [PROFILE]
# gemm: every compiled f32 thread tile at n=512, a few block tiles each (--fix tm,tn, the
# predicted best 6 profiled), and n=1024's predicted best 24; the other families: their
# predicted best 24-32. Also dumps the SASS of the gemm kernels. Never sets clocks.
set -uo pipefail
build=${1:?build dir}
out=${2:?out dir}
profile=${3:-profiles/h200.json}
advisor="$build/bin/advisor"
export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$out/inst"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv | tee "$out/inst/gpu.txt"
if command -v cuobjdump >/dev/null; then
  cuobjdump -sass "$advisor" 2>/dev/null | awk '/Function : .*gemm_tiled/{keep=1} /Function : /&&!/gemm_tiled/{keep=0} keep' >"$out/inst/gemm.sass"
  wc -l "$out/inst/gemm.sass"
fi
run() { # NAME ARGS...: one validate call, its JSON kept, its time printed
  local name=$1
  shift
  local start=$SECONDS
  timeout 120 "$advisor" validate "$@" --json --repeats 2 --profile "$profile" >"$out/inst/$name.json" 2>"$out/inst/$name.err" ||
    echo "$name: failed: $(head -c 300 "$out/inst/$name.err")"
  echo "$name: $((SECONDS - start)) s"
}
for tm in 1 2 4 8; do
  for tn in 1 2 4 8; do
    run "gemm-512-tm$tm-tn$tn" --pattern gemm --n 512 --fix "tm=$tm,tn=$tn" --all --counters 6
  done
done
run gemm-1024-top --pattern gemm --n 1024 --top 24 --counters 24
run stencil3d-256 --pattern stencil3d --n 256 --top 32 --counters 32
run stencil2d-4096 --pattern stencil2d --n 4096 --top 32 --counters 32
run transpose-4096 --pattern transpose --n 4096 --top 32 --counters 32
run copy-16777216 --pattern copy --n 16777216 --top 24 --counters 24
tar -czf "$out/instructions.tar.gz" -C "$out" inst
