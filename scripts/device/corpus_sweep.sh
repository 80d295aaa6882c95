#!/usr/bin/env bash
# The public-kernel corpus sweep on the GPU machine (issue 37): every candidate timed, then ncu
# counters for the measured best, median and slowest candidate of each kernel.
#
# Here:   bash scripts/device/corpus_sweep.sh --carry /work/main/.carry-corpus SRC
#         copies this script, scripts/cachewise_eval (the corpus and its loader) and the corpus's source folders of SRC (the fetched
#         repositories, unmodified) into the carry folder;
# There:  bash .carry-corpus/scripts/device/corpus_sweep.sh        ($OUT receives 6-7 files)
# Knobs: SWEEPS (whole sweeps, default 1), DEADLINE_S (sweep stops timing after it, default 400), NCU_TIMEOUT_S (default 120),
# NCU_ALL=1 (counters of every candidate), PREDICTED (a JSON {kernel: [candidate id, ...]} of predicted top 3s to profile too).
set -u
if [ "${1:-}" = "--carry" ]; then
  dest=$2 src=$3 here=$(cd "$(dirname "$0")/../.." && pwd)
  rm -rf "$dest" && mkdir -p "$dest/scripts/device" "$dest/src"
  cp -r "$here/scripts/cachewise_eval" "$dest/scripts/"
  cp "$here/scripts/device/corpus_sweep.py" "$here/scripts/device/corpus_sweep.sh" "$dest/scripts/device/"
  python3 - "$src" "$dest/src" "$here/scripts" <<'PY'
import shutil, sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from cachewise_eval import corpus_lib
_, kernels = corpus_lib.load_corpus()
for kernel in kernels.values():
    for folder in corpus_lib.kernel_files(kernel):
        source, target = corpus_lib.resolve(folder, sys.argv[1]), corpus_lib.resolve(folder, sys.argv[2])
        target.mkdir(parents=True, exist_ok=True)
        for item in source.iterdir():
            if item.is_file():
                shutil.copy2(item, target / item.name)
PY
  find "$dest" -name __pycache__ -prune -exec rm -rf {} +
  du -sh "$dest"
  exit 0
fi

carry=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-/tmp/corpus-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
sweep="python3 $carry/scripts/device/corpus_sweep.py"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit,persistence_mode,temperature.gpu \
  --format=csv > "$OUT/gpu.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,temperature.gpu,power.draw,utilization.gpu --format=csv -lms 500 \
  > "$OUT/clocks.csv" 2>&1 &
logger=$!
for run in $(seq 1 "${SWEEPS:-1}"); do  # SWEEPS=2: a second whole sweep, sweep-run2.json (repeatability)
  name=sweep; [ "$run" = 1 ] || name=sweep-run$run
  $sweep sweep --src "$carry/src" --work /tmp/corpus-work --out "$OUT/$name.json" --jobs "${JOBS:-14}" \
    --deadline-s "${DEADLINE_S:-400}" >> "$OUT/sweep-log.txt" 2>&1
  echo "$name exit $?" >> "$OUT/sweep-log.txt"
done
kill "$logger"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu --format=csv >> "$OUT/gpu.txt" 2>&1
cat "$OUT/sweep-log.txt"

$sweep select --sweep "$OUT/sweep.json" --out /tmp/corpus-select.json ${PREDICTED:+--predicted "$PREDICTED"} ${NCU_ALL:+--all}
regex=$(python3 -c "
import json, sys
sys.path.insert(0, '$carry/scripts')
from cachewise_eval import corpus_lib
_, kernels = corpus_lib.load_corpus()
chosen = json.load(open('/tmp/corpus-select.json'))
names = sorted({corpus_lib.entry_base(s['entry']) for k in chosen for s in kernels[k]['specs'].values()})
print('|'.join(names))")
metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,sm__cycles_elapsed.avg,smsp__inst_executed.sum,gpu__time_duration.sum
timeout "${NCU_TIMEOUT_S:-120}" ncu --clock-control none --metrics "$metrics" --kernel-name-base demangled \
  --kernel-name "regex:($regex)" --export /tmp/corpus-ncu --force-overwrite \
  $sweep launch --src "$carry/src" --work /tmp/corpus-work --select /tmp/corpus-select.json --order "$OUT/ncu-order.json" \
  > /tmp/corpus-ncu-log.txt 2>&1
echo "ncu exit $?" >> /tmp/corpus-ncu-log.txt
ncu --import /tmp/corpus-ncu.ncu-rep --csv --page raw > "$OUT/ncu.csv" 2>> /tmp/corpus-ncu-log.txt
grep -v "==PROF== Profiling" /tmp/corpus-ncu-log.txt >> "$OUT/sweep-log.txt"
tail -5 /tmp/corpus-ncu-log.txt
