#!/usr/bin/env bash
# Validation of the model against the H200 (run ON the GPU machine, from the repository root):
# for every family, two sizes, the advisor's whole space is timed (`advisor validate --all`),
# counters are read for the predicted best few, the measured best and the predicted worst,
# and the results are rendered into OUT_DIR/validation-h200.md + .json (committed as
# docs/validation-h200.md and measurements/validation-h200.json).
#
#   scripts/device/validate.sh [BUILD_DIR=build-kernels] [OUT_DIR=docs] [PROFILE]
#
# ONLY=REGEX keeps the cases it matches (e.g. ONLY=stencil). Each case may take CASE_TIMEOUT_S seconds (default 90) and all of them TOTAL_TIMEOUT_S
# (default 1800, the report is still written), REPEATS timed launches per config (default 7); a case that fails or runs out of time is
# listed in the report as not measured, and the others still count.
# All measuring is in C++ (validation/, the library behind advisor validate); this script only loops over cases and
# turns their JSON into one report.
set -euo pipefail
build=${1:-build-kernels}
out=${2:-docs}
profile=${3:-}
advisor="$build/bin/advisor"
export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
[[ -x "$advisor" ]] || { echo "validate.sh: $advisor not found (build the advisor target first)" >&2; exit 2; }
profile_args=()
[[ -n "$profile" ]] && profile_args=(--profile "$profile")
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Sizes fill the GPU and exceed L2 at the larger size; gemm stays small because its space
# has ~1000 feasible configs, each timed.
cases=(
  "transpose --n 4096"
  "transpose --n 8192"
  "copy --n 16777216"
  "copy --n 134217728"
  "stencil2d --n 4096"
  "stencil2d --n 8192"
  "stencil3d --n 256"
  "stencil3d --n 512"
  "gemm --n 512"
  "gemm --n 1024"
)
deadline=$((SECONDS + ${TOTAL_TIMEOUT_S:-1800}))
i=0
for case in "${cases[@]}"; do
  read -r family rest <<<"$case"
  [[ "$case" =~ ${ONLY:-.} ]] || continue # ONLY=REGEX runs the matching cases alone
  start=$SECONDS
  limit=$((deadline - SECONDS - 10)) # leave time for the report
  ((limit > ${CASE_TIMEOUT_S:-90})) && limit=${CASE_TIMEOUT_S:-90}
  if ((limit < 5)); then
    echo "$family $rest: skipped, out of time" >"$work/failed-$i.txt"
    i=$((i + 1))
    continue
  fi
  # shellcheck disable=SC2086
  if timeout "$limit" "$advisor" validate --pattern $family $rest --all --json --repeats "${REPEATS:-7}" --counters 3 \
    "${profile_args[@]}" >"$work/case-$i.json" 2>"$work/error-$i.txt"; then
    echo "validate: $family $rest: $((SECONDS - start)) s" >&2
  else
    echo "$family $rest: exit $? after $((SECONDS - start)) s: $(head -c 300 "$work/error-$i.txt")" >"$work/failed-$i.txt"
    cat "$work/failed-$i.txt" >&2
    rm -f "$work/case-$i.json"
  fi
  i=$((i + 1))
done

python3 "$(dirname "${BASH_SOURCE[0]}")/render_validation.py" "$work" "$out"
