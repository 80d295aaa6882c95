#!/usr/bin/env bash
# Tuner convergence benchmark (run ON the GPU machine, from the repository root): per family,
# every feasible config is measured once (`advisor tune --report-convergence`, exhaustive), and
# from those times it reports how many evaluations the model-ranked order and a random order
# need to reach 99% of the exhaustive best (goal: model-ranked <= 3), and what the
# model-ranked widening rule actually spends. Prints a table; writes
# OUT_DIR/tuner-convergence.json (and one JSON per case beside it).
#
#   scripts/device/tuner-bench.sh [BUILD_DIR=build-kernels] [OUT_DIR=${OUT:-docs}] [PROFILE]
#
# All measuring and the convergence computation are C++ (cli/cmd_tune.cpp, tuner/src/
# convergence.cpp, unit-tested on synthetic timings); this script only loops over cases.
set -euo pipefail
build=${1:-build-kernels}
out=${2:-${OUT:-docs}}
profile=${3:-}
advisor="$build/bin/advisor"
export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
[[ -x "$advisor" ]] || { echo "tuner-bench.sh: $advisor not found (build the advisor target first)" >&2; exit 2; }
profile_args=()
[[ -n "$profile" ]] && profile_args=(--profile "$profile")
mkdir -p "$out"

# One size per family, large enough to leave L2 (the workloads rotate >= 3x L2 of data).
# --max-repeats 30 bounds the cost: each candidate runs in its own process (CUDA context,
# buffers, a CPU-reference check), so a family's exhaustive pass takes about a second a config.
cases=(
  "transpose --n 8192"
  "copy --n 67108864"
  "stencil2d --n 8192"
  "stencil3d --n 384"
  "gemm --n 2048"
)
jsons=()
for case in "${cases[@]}"; do
  read -r family rest <<<"$case"
  json="$out/tuner-convergence-$family.json"
  echo "tuner-bench: $family $rest" >&2
  # shellcheck disable=SC2086
  "$advisor" tune --pattern $family $rest --report-convergence --max-repeats 30 --timeout-s 30 \
    --json "$json" "${profile_args[@]}" >/dev/null
  jsons+=("$json")
done

python3 - "$out/tuner-convergence.json" "${jsons[@]}" <<'PY'
import json, sys
summary_path, paths = sys.argv[1], sys.argv[2:]
rows = []
for path in paths:
    with open(path) as f:
        run = json.load(f)
    for size in run["sizes"]:
        c = size["convergence"]
        rows.append({"problem": size["problem"], "device": run["device"], "best_config": size["config"],
                     "best_ms": c["best_ms"], "candidates": c["candidates"], "good_candidates": c["good_candidates"],
                     "model_evaluations_to_99pct": c["model_evaluations_to_good"],
                     "random_expected_evaluations_to_99pct": c["random_expected_evaluations"],
                     "widening_rule_evaluations": c["model_strategy_evaluations"],
                     "widening_rule_pct_of_best": 100.0 * c["model_strategy_fraction_of_best"],
                     "goal_met": c["model_evaluations_to_good"] <= 3})
header = f"{'problem':<28}{'cands':>6}{'good':>6}{'model':>7}{'random':>8}{'rule':>6}{'rule %best':>11}  goal(model<=3)"
print(header)
for r in rows:
    print(f"{r['problem']:<28}{r['candidates']:>6}{r['good_candidates']:>6}{r['model_evaluations_to_99pct']:>7}"
          f"{r['random_expected_evaluations_to_99pct']:>8.1f}{r['widening_rule_evaluations']:>6}"
          f"{r['widening_rule_pct_of_best']:>11.1f}  {'yes' if r['goal_met'] else 'NO'}")
with open(summary_path, "w") as f:
    json.dump({"fraction_of_best": 0.99, "cases": rows}, f, indent=2)
print(f"wrote {summary_path}")
PY
