#!/usr/bin/env bash
# Tuning across GPUs on a 2-GPU host (issue 27): `advisor tune --gpus all` against one GPU on a
# user-style kernel (examples/kernels/transpose.json) and a built-in family (wall time, picks,
# which GPU measured what); `mpirun -np 3 ... --mpi` (rank 0 coordinates, ranks 1-2 measure)
# with rank 1 SIGKILLed mid-run, once with --enable-recovery (the job goes on) and once
# without (Open MPI aborts; a second run resumes from the journal); and `advisor merge-tuned`
# of the measured results, compiled and checked against this GPU's name. Writes everything to
# OUT_DIR and prints a summary table.
#
#   scripts/device/multi_gpu.sh [BUILD_DIR=build-kernels] [OUT_DIR=${OUT:-multi-gpu}]
#
# Needs a CUDA build of advisor with MPI (libopenmpi-dev found at configure time), mpirun,
# and at least 2 GPUs (exits 77 otherwise). Device time: about 10 minutes on 2 H200s.
set -euo pipefail
build=${1:-build-kernels}
out=${2:-${OUT:-multi-gpu}}
advisor="$(cd "$(dirname "$build/bin/advisor")" && pwd)/advisor"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
spec="$root/examples/kernels/transpose.json"
export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
[[ -x "$advisor" ]] || { echo "multi_gpu.sh: $advisor not found (build the advisor target first)" >&2; exit 2; }
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
if (( gpus < 2 )); then
  echo "multi_gpu.sh: SKIPPED: $gpus GPU(s), need 2"
  exit 77
fi
mkdir -p "$out"
cd "$out"
nvidia-smi -L | tee gpus.txt

# Wall seconds of a command (its stdout dropped; redirect its stderr around the call).
seconds() {
  local start
  start=$(date +%s.%N)
  "$@" >/dev/null
  echo "$(date +%s.%N) - $start" | bc | xargs printf '%.1f'
}
pick() { grep "^inline constexpr Config" "$1" | head -3; }
kernel=(tune --spec "$spec" --size "width=4096,height=4096" --size "width=8192,height=8192" --strategy exhaustive)
family=(tune --pattern transpose --n 8192 --strategy exhaustive --budget 24)
# One bucket under MPI, so its journal is the file named (several buckets: FILE.<bucket>.jsonl).
# --timeout-s 20: a rank silent for 23 s holding a candidate is taken for dead.
mpi_kernel=(tune --spec "$spec" --size "width=8192,height=8192" --strategy exhaustive --timeout-s 20)

echo "== user kernel: 1 GPU vs --gpus all" >&2
t_kernel_1=$(seconds "$advisor" "${kernel[@]}" --gpus 0 --header kernel-1gpu.h --json kernel-1gpu.json --journal kernel-1gpu.jsonl 2>kernel-1gpu.err)
t_kernel_n=$(seconds "$advisor" "${kernel[@]}" --gpus all --header kernel-all.h --json kernel-all.json --journal kernel-all.jsonl 2>kernel-all.err)
echo "== built-in transpose n=8192: 1 GPU vs --gpus all" >&2
t_family_1=$(seconds "$advisor" "${family[@]}" --gpus 0 --header family-1gpu.h --json family-1gpu.json 2>family-1gpu.err)
t_family_n=$(seconds "$advisor" "${family[@]}" --gpus all --header family-all.h --json family-all.json --journal family-all.jsonl 2>family-all.err)

# The rank of an mpirun child process, from its environment.
rank_of() { tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p'; }
# mpirun -np 3 (2 measuring ranks) with extra mpirun options; SIGKILLs rank 1 once 4 rounds are journaled.
mpi_killed() {
  local name=$1
  shift
  mpirun -np 3 "$@" "$advisor" "${mpi_kernel[@]}" --mpi --journal "$name.jsonl" --header "$name.h" --json "$name.json" \
    >"$name.out" 2>"$name.err" &
  local launcher=$! victim=""
  for _ in $(seq 1 3000); do
    local journaled
    journaled=$(grep -c '"round":0' "$name.jsonl" 2>/dev/null || true)
    (( ${journaled:-0} >= 4 )) && break
    sleep 0.1
  done
  for pid in $(pgrep -P $launcher || true); do [[ "$(rank_of "$pid")" == 1 ]] && victim=$pid; done
  [[ -n "$victim" ]] && kill -9 "$victim" && echo "killed rank 1 (pid $victim)" >>"$name.err"
  local status=0
  wait $launcher || status=$?
  echo $status
}
echo "== mpirun -np 3 --mpi --enable-recovery, rank 1 killed" >&2
t0=$SECONDS
status_recovery=$(mpi_killed mpi-recovery --enable-recovery)
t_mpi_recovery=$((SECONDS - t0))
echo "== mpirun -np 3 --mpi without recovery, rank 1 killed, then resumed" >&2
status_abort=$(mpi_killed mpi-resumed)
journaled_before_resume=$(grep -c '"round":0' mpi-resumed.jsonl || true)
status_resume=0
mpirun -np 3 "$advisor" "${mpi_kernel[@]}" --mpi --journal mpi-resumed.jsonl --header mpi-resumed.h --json mpi-resumed.json \
  >mpi-resumed-2.out 2>mpi-resumed-2.err || status_resume=$?

echo "== merge-tuned" >&2
"$advisor" merge-tuned kernel-all.json --header merged.h >merge.out
device_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
# merge-tuned's macro spelling (device_target_name): "NVIDIA " dropped, upper case, '_' between.
target=$(sed 's/^NVIDIA //' <<<"$device_name" | tr '[:lower:]' '[:upper:]' | sed 's/[^A-Z0-9]\{1,\}/_/g; s/^_//; s/_$//')
cat >merged_check.cpp <<EOF
#include <cstdio>
#include "merged.h"
namespace tuned = cachewise_tuned::transpose_tiled;
int main() {
  const auto& mine = tuned::config_for_device("$device_name", 8192, 8192);
  const auto& other = tuned::config_for_device("Some Other GPU", 8192, 8192);
  std::printf("$device_name 8192x8192: TILE_DIM=%lld BLOCK_ROWS=%lld PAD=%lld (%.4g ms, measured %d); unknown device: TILE_DIM=%lld BLOCK_ROWS=%lld PAD=%lld (static)\n",
              (long long)mine.TILE_DIM, (long long)mine.BLOCK_ROWS, (long long)mine.PAD, mine.time_ms,
              (int)tuned::target::from_measurement, (long long)other.TILE_DIM, (long long)other.BLOCK_ROWS, (long long)other.PAD);
}
EOF
g++ -std=c++17 -O1 merged_check.cpp -o merged_check "-DCACHEWISE_TARGET_$target" && ./merged_check | tee merged_check.txt

{
  echo "| run | wall s | exit | pick |"
  echo "|---|---|---|---|"
  echo "| kernel, --gpus 0 | $t_kernel_1 | 0 | $(pick kernel-1gpu.h | tr '\n' ' ') |"
  echo "| kernel, --gpus all | $t_kernel_n | 0 | $(pick kernel-all.h | tr '\n' ' ') |"
  echo "| transpose n=8192, --gpus 0 | $t_family_1 | 0 | $(pick family-1gpu.h | tr '\n' ' ') |"
  echo "| transpose n=8192, --gpus all | $t_family_n | 0 | $(pick family-all.h | tr '\n' ' ') |"
  echo "| kernel, mpirun --enable-recovery, rank 1 killed | $t_mpi_recovery | $status_recovery | $(pick mpi-recovery.h 2>/dev/null | tr '\n' ' ') |"
  echo "| kernel, mpirun, rank 1 killed (abort) | - | $status_abort | $journaled_before_resume rounds journaled |"
  echo "| kernel, mpirun, resumed | - | $status_resume | $(pick mpi-resumed.h 2>/dev/null | tr '\n' ' ') |"
} | tee summary.md
echo "rounds per GPU (kernel, --gpus all): $(cat kernel-all.*.jsonl | grep -o '"uuid":"[^"]*"' | sort | uniq -c | tr '\n' ' ')" | tee -a summary.md
echo "rounds per rank (mpi-recovery): $(grep -o '"rank":[0-9]*' mpi-recovery.jsonl | sort | uniq -c | tr '\n' ' ')" | tee -a summary.md
grep -h "taken for dead" mpi-recovery.err | tee -a summary.md || true
