#!/usr/bin/env bash
# ncu sections of configs the model orders wrongly, side by side with the measured best (run ON
# the GPU machine, from the repository root, with binaries laid out as scripts/device/final.sh
# says). One launch of each config's kernel, after advisor validate's warm-up. Clocks are never
# set: --clock-control none (ncu's default locks them to base while it profiles).
#
#   scripts/device/ncu-compare.sh BUILD_DIR OUT_DIR "family n config" ...
#
# Writes OUT_DIR/ncu-<family>-<n>-<config>.txt per config and OUT_DIR/ncu-summary.txt: duration,
# DRAM and L2 throughput, achieved occupancy and the top warp stall reasons of each.
# EXTRA_METRICS="name.sum name2.avg ..." adds raw metrics (those the device's ncu does not list
# are dropped, with a line saying so, so that one unknown name does not lose the run).
set -uo pipefail
build=$1
out=$2
shift 2
export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$out"
metric_args=()
if [ -n "${EXTRA_METRICS:-}" ]; then
  known=$(ncu --query-metrics 2>/dev/null | awk '{print $1}')
  kept=()
  for metric in $EXTRA_METRICS; do
    if grep -qx "${metric%%.*}" <<<"$known"; then kept+=("$metric"); else echo "ncu lists no metric ${metric%%.*}: dropped" | tee -a "$out/ncu-summary.txt"; fi
  done
  [ ${#kept[@]} -gt 0 ] && metric_args=(--metrics "$(IFS=,; echo "${kept[*]}")")
fi
for item in "$@"; do
  read -r family n config <<<"$item"
  file="$out/ncu-$family-$n-${config//[,=]/_}.txt"
  timeout 150 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
    --section WarpStateStats --section SchedulerStats --section LaunchStats "${metric_args[@]}" \
    -k "regex:$family" --launch-skip 2 --launch-count 1 \
    "$build/bin/advisor" validate --pattern "$family" --n "$n" --config "$config" --no-counters --repeats 3 \
    --profile profiles/h200.json >"$file" 2>&1
  {
    echo "== $family n=$n $config"
    grep -E "^ +(Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per Thread|Warp Cycles Per Issued Instruction|Issued Warp Per Scheduler|No Eligible|Active Warps Per Scheduler|Eligible Warps Per Scheduler)" "$file"
    grep -iE "stall|cycles being stalled" "$file" | head -n 6
    for metric in ${EXTRA_METRICS:-}; do grep -E "^ +$metric " "$file"; done
  } | tee -a "$out/ncu-summary.txt"
done
