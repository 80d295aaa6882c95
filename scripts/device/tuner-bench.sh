#!/usr/bin/env bash
# Tuner convergence benchmark: per family, how many evaluations the model-ranked order and a
# random order need to reach 99% of the exhaustive best (goal: model-ranked <= 3), and what
# the model-ranked widening rule actually spends. Prints a table and writes
# OUT_DIR/tuner-convergence.json.
#
#   scripts/device/tuner-bench.sh [BUILD_DIR=build-kernels] [OUT_DIR=${OUT:-docs}] [PROFILE]
#
# The exhaustive times come from `advisor validate --all --json` (every feasible config timed
# in one process, CUDA events, rotating inputs). When VALIDATION_JSON (default
# measurements/validation-h200.json, written by scripts/device/validate.sh) exists, it is reused and
# no GPU time is spent: this then runs on any machine. Otherwise (on the GPU machine) each
# case is timed here first, without counters, into OUT_DIR/validate-<family>.json.
# The convergence computation is C++ (`advisor tune --convergence-from`, tuner/src/
# convergence.cpp, unit-tested on synthetic timings); this script only loops over cases.
set -euo pipefail
build=${1:-build-kernels}
out=${2:-${OUT:-docs}}
profile=${3:-}
validation=${VALIDATION_JSON:-measurements/validation-h200.json}
advisor="$build/bin/advisor"
export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
[[ -x "$advisor" ]] || { echo "tuner-bench.sh: $advisor not found (build the advisor target first)" >&2; exit 2; }
mkdir -p "$out"

if [[ -f "$validation" ]]; then
  echo "tuner-bench: reusing $validation (no GPU time)" >&2
  "$advisor" tune --convergence-from "$validation" --json "$out/tuner-convergence.json"
  exit 0
fi

profile_args=()
[[ -n "$profile" ]] && profile_args=(--profile "$profile")
# One size per family, beyond L2.
cases=(
  "transpose --n 8192"
  "copy --n 67108864"
  "stencil2d --n 8192"
  "stencil3d --n 384"
  "gemm --n 2048"
)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for case in "${cases[@]}"; do
  read -r family rest <<<"$case"
  echo "tuner-bench: timing every feasible $family $rest config" >&2
  # shellcheck disable=SC2086
  "$advisor" validate --pattern $family $rest --all --no-counters --json --repeats 7 "${profile_args[@]}" \
    >"$out/validate-$family.json"
done
# One list of cases, as validate.sh writes it.
python3 -c 'import json, sys; json.dump([json.load(open(p)) for p in sys.argv[2:]], open(sys.argv[1], "w"))' \
  "$work/cases.json" "$out"/validate-*.json
"$advisor" tune --convergence-from "$work/cases.json" --json "$out/tuner-convergence.json"
