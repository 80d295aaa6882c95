#!/usr/bin/env bash
# advisor tune --mpi under `mpirun --oversubscribe -np 3` on this host, fake GPUs: the result
# is the serial run's; a measuring rank killed mid-run (SIGKILL) loses only its candidate in
# flight with mpirun --enable-recovery, and without it Open MPI ends the job and a second run
# resumes from the journal. Exit 77 (skipped) without mpirun or without MPI in this build.
# Usage: mpi_tune.sh ADVISOR SPEC PROFILE FAKES WORK_DIR (ADVISOR: the advisor_fake_gpus test executable)
set -euo pipefail
advisor=$1 spec=$2 profile=$3 fakes=$4 work=$5
rm -rf "$work" && mkdir -p "$work" && cd "$work"

if ! command -v mpirun >/dev/null; then
  echo "SKIPPED: no mpirun"
  exit 77
fi
answer=$(CACHEWISE_FAKE_DEVICES=$fakes "$advisor" tune --spec "$spec" --mpi --profile "$profile" 2>&1 || true)
if grep -q "built without MPI" <<<"$answer"; then
  echo "SKIPPED: advisor built without MPI"
  exit 77
fi
export CACHEWISE_FAKE_DEVICES=$fakes OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 ASAN_OPTIONS=detect_leaks=0 # Open MPI's own allocations are not ours
unset CUDA_VISIBLE_DEVICES
tune=(tune --spec "$spec" --size "width=256,height=256" --strategy exhaustive --profile "$profile" --timeout-s 8)
fail() { echo "FAIL: $*" >&2; exit 1; }

# What a header and a results file select and measured, for comparing runs.
picks() { grep "^inline constexpr Config" "$1"; }
times() { grep -E '"(config|median_ms|ok)"' "$1"; }
first_rounds() { grep -c '"round":0' "$1" || true; }

"$advisor" "${tune[@]}" --header serial.h --json serial.json >/dev/null 2>&1
grep -q "/\*BLOCK_ROWS\*/ 8, /\*PAD\*/ 1, /\*TILE_DIM\*/ 32, /\*time_ms\*/ 0.5}" serial.h || fail "serial pick: $(picks serial.h)"

# 1. No failure: the ranks finish in bounded time, with the serial run's results.
timeout 120 mpirun -np 3 -x CACHEWISE_FAKE_DEVICES "$advisor" "${tune[@]}" --mpi --header mpi.h --json mpi.json --journal mpi.jsonl >/dev/null \
  2>mpi.err || fail "mpirun exited $?: $(tail -3 mpi.err)"
[ "$(picks mpi.h)" = "$(picks serial.h)" ] || fail "--mpi picked $(picks mpi.h)"
[ "$(times mpi.json)" = "$(times serial.json)" ] || fail "--mpi measured other times than the serial run"
{ grep -q '"rank":1' mpi.jsonl && grep -q '"rank":2' mpi.jsonl; } || fail "ranks 1 and 2 did not both measure"
grep -q '"rank":0' mpi.jsonl && fail "rank 0 measured; it only coordinates"

# A built-in family over two sizes: two runs in one MPI session, each the serial run's.
family=(tune --pattern transpose --n 64 --n 128 --profile "$profile" --timeout-s 8)
"$advisor" "${family[@]}" --header family-serial.h >/dev/null 2>&1
timeout 120 mpirun -np 3 -x CACHEWISE_FAKE_DEVICES "$advisor" "${family[@]}" --mpi --header family-mpi.h >/dev/null 2>family.err ||
  fail "mpirun (family) exited $?: $(tail -3 family.err)"
[ "$(grep '^#define' family-mpi.h)" = "$(grep '^#define' family-serial.h)" ] || fail "--mpi (family) picked $(grep '^#define' family-mpi.h)"

# The rank of an mpirun child process, from its environment.
rank_of() { tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p'; }
# Starts mpirun in the background with extra mpirun options, kills rank 1 once 3 rounds are journaled.
run_and_kill_rank_1() {
  local journal=$1
  shift
  timeout 120 mpirun -np 3 -x CACHEWISE_FAKE_DEVICES "$@" "$advisor" "${tune[@]}" --mpi --journal "$journal" \
    --header killed.h --json killed.json >killed.out 2>killed.err &
  local launcher=$!
  for _ in $(seq 1 600); do
    [ "$(first_rounds "$journal" 2>/dev/null)" -ge 3 ] 2>/dev/null && break
    sleep 0.05
  done
  local victim=""
  for pid in $(pgrep -P "$(pgrep -P $launcher -x mpirun || echo $launcher)" || true); do
    [ "$(rank_of "$pid")" = 1 ] && victim=$pid
  done
  [ -n "$victim" ] || fail "no rank 1 process found under mpirun"
  kill -9 "$victim"
  local status=0
  wait "$launcher" || status=$?
  echo "$status"
}

# 2. --enable-recovery: the job goes on; rank 1's candidate in flight is handed out again.
status=$(run_and_kill_rank_1 recovered.jsonl --enable-recovery)
[ "$status" = 0 ] || fail "mpirun --enable-recovery exited $status after the kill: $(tail -3 killed.err)"
grep -q "rank 1 is silent past 11000 ms; taken for dead" killed.err || fail "rank 0 did not notice the dead rank: $(cat killed.err)"
[ "$(picks killed.h)" = "$(picks serial.h)" ] || fail "after the kill --mpi picked $(picks killed.h)"
[ "$(times killed.json)" = "$(times serial.json)" ] || fail "after the kill --mpi measured other times than the serial run"
[ "$(first_rounds recovered.jsonl)" = 18 ] || fail "expected 18 first rounds journaled, got $(first_rounds recovered.jsonl)"

# 3. Without it Open MPI ends the job; a second run resumes from the journal.
rm -f killed.h killed.json
status=$(run_and_kill_rank_1 resumed.jsonl)
[ "$status" != 0 ] || fail "mpirun went on after a rank died without --enable-recovery"
[ ! -e killed.h ] || fail "the aborted job wrote a header"
before=$(first_rounds resumed.jsonl)
timeout 120 mpirun -np 3 -x CACHEWISE_FAKE_DEVICES "$advisor" "${tune[@]}" --mpi --journal resumed.jsonl --header killed.h \
  --json killed.json >/dev/null 2>resumed.err || fail "the resumed run exited $?: $(tail -3 resumed.err)"
[ "$(first_rounds resumed.jsonl)" = 18 ] || fail "resumed: $(first_rounds resumed.jsonl) first rounds journaled (had $before), not 18"
[ "$(grep -c '"from_journal": true' killed.json)" -ge "$before" ] || fail "the resumed run measured journaled candidates again"
[ "$(picks killed.h)" = "$(picks serial.h)" ] || fail "resumed --mpi picked $(picks killed.h)"
echo "--mpi: serial results with 3 ranks, after a killed rank (recovery), and resumed after Open MPI's abort ($before of 18 journaled)"
