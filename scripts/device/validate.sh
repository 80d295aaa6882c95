#!/usr/bin/env bash
# Validation of the model against the H200 (run ON the GPU machine, from the repository root):
# for every family, two sizes, the advisor's whole space is timed (`advisor validate --all`),
# counters are read for the predicted best few, the measured best and the predicted worst,
# and the results are rendered into docs/validation-h200.md + .json.
#
#   scripts/device/validate.sh [BUILD_DIR=build-kernels] [OUT_DIR=docs] [PROFILE]
#
# Each case may take CASE_TIMEOUT_S seconds (default 90) and all of them TOTAL_TIMEOUT_S
# (default 1800, the report is still written), REPEATS timed launches per config (default 7); a case that fails or runs out of time is
# listed in the report as not measured, and the others still count.
# All measuring is in C++ (cli/cmd_validate.cpp); this script only loops over cases and
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

python3 - "$work" "$out" <<'PY'
import datetime, glob, json, os, statistics, sys

work, out = sys.argv[1], sys.argv[2]
def numbered(pattern):
    return sorted(glob.glob(os.path.join(work, pattern)), key=lambda p: int(p.rsplit("-", 1)[1].split(".")[0]))

cases = [json.load(open(p)) for p in numbered("case-*.json")]
failures = [open(p).read().strip() for p in numbered("failed-*.txt")]

def sectors_per_request(metrics, op):
    requests = metrics.get(f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum", 0.0)
    sectors = metrics.get(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum", 0.0)
    return sectors / requests if requests else 0.0

# Derived quantities compared per profiled config: (label, unit, function of a metric map).
quantities = [
    ("L1 hit %", "pct", lambda m: m.get("l1tex__t_sector_hit_rate.pct")),
    ("L2 hit %", "pct", lambda m: m.get("lts__t_sector_hit_rate.pct")),
    ("sectors/req ld", "ratio", lambda m: sectors_per_request(m, "ld")),
    ("sectors/req st", "ratio", lambda m: sectors_per_request(m, "st")),
    ("bank conflicts", "count", lambda m: m.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", 0.0)
                                          + m.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", 0.0)),
    ("DRAM MB", "count", lambda m: (m.get("dram__bytes_read.sum", 0.0) + m.get("dram__bytes_write.sum", 0.0)) / 1e6),
    ("L2 sectors (M)", "count", lambda m: (m.get("lts__t_sectors_op_read.sum", 0.0) + m.get("lts__t_sectors_op_write.sum", 0.0)) / 1e6),
]

def fmt(value, digits=1):
    return "-" if value is None else f"{value:,.{digits}f}"

lines, errors, ratios, bandwidth_rows = [], {q[0]: [] for q in quantities}, [], []
device = cases[0]["device"] if cases else "?"
copy_bw = [c["copy_bandwidth_gb_per_s"] for c in cases]
lines.append("# Validation on " + device)
lines.append("")
lines.append(f"Generated {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC by `scripts/device/validate.sh` "
             f"(`advisor validate --all --json` per case). Profile: `{cases[0]['profile'] if cases else '?'}`. "
             "Counters are read with CUPTI's Range Profiler (kernel replay) after evicting L2; times are "
             f"CUDA-event medians of {cases[0]['candidates'][0]['measured']['repeats'] if cases else '?'} launches per config, "
             "rotating through input sets larger than 3x L2.")
lines.append("")
lines.append(f"Device-to-device copy bandwidth in the same run: {min(copy_bw):,.0f}-{max(copy_bw):,.0f} GB/s (bytes read + written)."
             if copy_bw else "No case was measured.")
lines.append("")
lines.extend(f"- Not measured: {failure}" for failure in failures)
if failures:
    lines.append("")
for case in cases:
    p, s = case["problem"], case["summary"]
    title = f"{p['family']} n={p['n']}" + (f" m={p['m']}" if p["m"] else "") + (f" k={p['k']}" if p["k"] else "") + f" {p['dtype']}"
    ratios.append((s["top1_over_best"], title))
    bandwidth_rows.append((p["family"], title, s["best_bandwidth_gb_per_s"], case["copy_bandwidth_gb_per_s"], s["best_config"]))
    lines.append(f"## {title}")
    lines.append("")
    lines.append(f"{s['candidates']} configs timed. Advisor top-1 `{s['top1_config']}`: {s['top1_measured_us']:,.1f} us; "
                 f"best measured `{s['best_config']}` (predicted rank {s['best_predicted_rank']}): {s['best_measured_us']:,.1f} us; "
                 f"**top-1/best = {s['top1_over_best']:.3f}**; best = {100 * s['best_fraction_of_copy']:.1f}% of copy bandwidth. "
                 f"Checked against the CPU reference: {'all correct' if s['checked_all_correct'] else '**MISMATCH**'}.")
    lines.append("")
    header = "| rank | config | time us pred / meas | " + " | ".join(q[0] + " pred / meas" for q in quantities) + " |"
    lines.append(header)
    lines.append("|" + "---|" * (3 + len(quantities)))
    for row in case["candidates"]:
        measured = row["measured"].get("metrics")
        if measured is None:
            continue
        predicted = row["predicted"]["metrics"]
        cells = [str(row["predicted_rank"]), f"`{row['config']}`",
                 f"{row['predicted']['time_us']:,.1f} / {row['measured']['median_us']:,.1f}"]
        for label, unit, get in quantities:
            pv, mv = get(predicted), get(measured)
            cells.append(f"{fmt(pv)} / {fmt(mv)}")
            if pv is not None and mv is not None:
                # A rate's error is in points already; counts also get a relative error.
                relative = None if unit == "pct" or not mv else abs(pv - mv) / abs(mv)
                errors[label].append((abs(pv - mv), relative))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")

summary = ["## Summary", "", "| quantity | MAE | mean relative error | configs |", "|---|---|---|---|"]
for label, unit, _ in quantities:
    pairs = errors[label]
    if not pairs:
        continue
    mae = statistics.mean(e for e, _ in pairs)
    relative = [r for _, r in pairs if r is not None]
    summary.append(f"| {label} | {mae:,.2f} | {100 * statistics.mean(relative):.1f}% | {len(pairs)} |" if relative
                   else f"| {label} | {mae:,.2f} | - | {len(pairs)} |")
summary.append("")
if ratios:
    values = [r for r, _ in ratios]
    worst = max(ratios)
    summary.append(f"Advisor top-1 measured time / best measured time in the exhaustive sweep: median "
                   f"**{statistics.median(values):.3f}**, worst **{worst[0]:.3f}** ({worst[1]}).")
    summary.append("")
summary.append("| family | case | best measured GB/s | copy GB/s | % of copy | best config |")
summary.append("|---|---|---|---|---|---|")
for family, title, best, copy, config in bandwidth_rows:
    if family in ("transpose", "stencil2d", "stencil3d", "copy"):
        summary.append(f"| {family} | {title} | {best:,.0f} | {copy:,.0f} | {100 * best / copy:.1f}% | `{config}` |")
summary.append("")
summary.append("Target: best transpose/stencil/copy >= 90% of device-to-device copy bandwidth.")
summary.append("")

head = 6 + (len(failures) + 1 if failures else 0)
text = "\n".join(lines[:head] + summary + lines[head:]) + "\n"
open(os.path.join(out, "validation-h200.md"), "w").write(text)
json.dump(cases, open(os.path.join(out, "validation-h200.json"), "w"), indent=1)
print("\n".join(summary))
PY
