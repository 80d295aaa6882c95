#!/usr/bin/env python3
"""Merge the device files of scripts/device/corpus_sweep.sh into the committed corpus data.

  python3 -m cachewise_eval.summarize_sweep --out measurements/corpus [--ncu DIR ...] PRIMARY_DIR [OTHER_DIR ...]

PRIMARY_DIR/sweep.json gives each candidate's median, min, max and runs; every other sweep
(PRIMARY_DIR/sweep-run*.json, OTHER_DIR/sweep*.json) adds its median to `repeat_median_us`; the
ncu CSVs of the --ncu folders (default: all the folders) add `counters`, the first folder's
first (units converted to bytes, microseconds, cycles).
"""
import argparse
import csv
import json
import re
import statistics
import sys
from pathlib import Path

from cachewise_eval import corpus_lib

METRICS = ["dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sector_hit_rate.pct",
           "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "sm__cycles_elapsed.avg",
           "smsp__inst_executed.sum", "gpu__time_duration.sum"]
SCALE = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "ns": 1e-3, "us": 1, "usecond": 1, "ms": 1e3, "msecond": 1e3,
         "s": 1e6, "nsecond": 1e-3, "": 1, "%": 1, "cycle": 1, "inst": 1, "Kcycle": 1e3, "Mcycle": 1e6, "Kinst": 1e3, "Minst": 1e6}
NAMES = {"dram__bytes_read.sum": "dram__bytes_read.sum_bytes", "dram__bytes_write.sum": "dram__bytes_write.sum_bytes",
         "gpu__time_duration.sum": "gpu__time_duration.sum_us"}


def read_ncu(directory):
    """{(kernel, candidate id): {metric: value}} of one device call's ncu.csv + ncu-order.json."""
    csv_path, order_path = Path(directory) / "ncu.csv", Path(directory) / "ncu-order.json"
    if not csv_path.exists() or not order_path.exists():
        return {}
    rows = list(csv.reader(csv_path.open()))
    header, units, data = rows[0], rows[1], rows[2:]
    order = json.loads(order_path.read_text())
    if len(order) != len(data):
        raise SystemExit(f"{directory}: {len(data)} ncu rows for {len(order)} launches")
    counters = {}
    for launched, row in zip(order, data):
        name = row[header.index("Kernel Name")]
        if corpus_lib.entry_base(launched["entry"]) not in name:
            raise SystemExit(f"{directory}: ncu row '{name}' is not {launched['entry']}")
        values = {}
        for metric in METRICS:
            column = header.index(metric)
            values[NAMES.get(metric, metric)] = round(float(row[column].replace(",", "")) * SCALE[units[column]], 3)
        counters[(launched["kernel"], launched["id"])] = values
    return counters


def clock_summary(directory):
    path = Path(directory) / "clocks.csv"
    busy_sm, memory = [], []
    for line in path.read_text().splitlines()[1:]:
        fields = [f.strip() for f in line.split(",")]
        if len(fields) < 6 or not fields[1].endswith("MHz"):
            continue
        memory.append(int(fields[2].split()[0]))
        if int(fields[5].split()[0]) > 0:
            busy_sm.append(int(fields[1].split()[0]))
    return {"sm_mhz_while_busy": sorted(set(busy_sm)), "busy_samples": len(busy_sm), "memory_mhz": sorted(set(memory))}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("primary")
    parser.add_argument("others", nargs="*")
    parser.add_argument("--out", default="measurements/corpus")
    parser.add_argument("--ncu", action="append", default=[], help="folders whose ncu.csv give counters, first wins")
    args = parser.parse_args()
    _, kernels = corpus_lib.load_corpus()
    primary = json.loads((Path(args.primary) / "sweep.json").read_text())
    repeats = sorted(Path(args.primary).glob("sweep-run*.json")) + [p for d in args.others for p in sorted(Path(d).glob("sweep*.json"))]
    repeat_medians = []
    for path in repeats:
        sweep = json.loads(path.read_text())
        repeat_medians.append({(k, c["id"]): c.get("median_us") for k, v in sweep["kernels"].items() for c in v["candidates"]})
    counters = {}
    for directory in reversed(args.ncu or [args.primary, *args.others]):  # the first folder's counters win
        counters.update(read_ncu(directory))
    out = {"about": "Measured corpus of public kernels on one H200 (issue 37). Per kernel: its half of the split "
                    "(scripts/cachewise_eval/corpus/split.json), its spec, and per candidate the launch, ptxas resources, median/min/max "
                    "of `runs` timed launches (L2 flushed before each) in microseconds, the medians of the repeat sweeps, "
                    "and ncu counters where taken. Kernels with `steps_per_launch` advance that many time steps per launch "
                    "(Rodinia's pyramid height): compare them by median_us / steps_per_launch.",
           "device": primary["meta"], "clocks": [clock_summary(d) for d in [args.primary, *args.others] if (Path(d) / "clocks.csv").exists()],
           "repeat_sweeps": [str(p.parent.name + "/" + p.name) for p in repeats],
           "counters_from": [str(Path(d).name + "/ncu.csv") for d in (args.ncu or [args.primary, *args.others])], "kernels": {}}
    flat = []
    for name, entry in primary["kernels"].items():
        kernel = kernels[name]
        steps = kernel.get("steps_per_launch")
        record = {"half": kernel["half"], "spec": "scripts/cachewise_eval/corpus/" + kernel["spec"],
                  "source": sorted({s["source"] for s in kernel["specs"].values()})}
        if steps:
            record["steps_per_launch"] = steps
        candidates = []
        for c in entry["candidates"]:
            item = {k: c[k] for k in ("id", "variant", "entry", "params", "grid", "block", "shared_bytes") if k in c}
            for k in ("registers", "static_shared_bytes", "local_bytes", "median_us", "min_us", "max_us", "runs", "status"):
                if k in c:
                    item[k] = c[k]
            item["repeat_median_us"] = [r.get((name, c["id"])) for r in repeat_medians]
            if steps:
                spec = kernel["specs"][c["variant"] or ""]
                item["steps"] = corpus_lib.evaluate(steps, dict(spec.get("args", {}), **c["params"]))
            if (name, c["id"]) in counters:
                item["counters"] = counters[(name, c["id"])]
            candidates.append(item)
            flat.append({"kernel": name, "half": kernel["half"], **{k: item.get(k) for k in ("id", "median_us", "min_us", "max_us", "runs")},
                         **{f"repeat{i + 2}_median_us": v for i, v in enumerate(item["repeat_median_us"])},
                         "registers": item.get("registers"), "steps": item.get("steps", 1),
                         **{m: item.get("counters", {}).get(m) for m in [NAMES.get(x, x) for x in METRICS]}})
        record["candidates"] = candidates
        out["kernels"][name] = record
    shifts = [abs(row["repeat2_median_us"] / row["median_us"] - 1) for row in flat if row.get("repeat2_median_us") and row["median_us"]]
    if shifts:
        out["repeatability"] = {"median_abs_shift_repeat2": round(statistics.median(shifts), 4),
                                "p90_abs_shift_repeat2": round(sorted(shifts)[int(0.9 * len(shifts))], 4),
                                "max_abs_shift_repeat2": round(max(shifts), 4)}
    target = Path(args.out)
    target.mkdir(parents=True, exist_ok=True)
    (target / "corpus-h200.json").write_text(json.dumps(out, indent=1) + "\n")
    with (target / "corpus-h200.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(flat[0]))
        writer.writeheader()
        writer.writerows(flat)
    print(f"{len(flat)} candidates of {len(out['kernels'])} kernels, {sum('counters' in c for k in out['kernels'].values() for c in k['candidates'])} with counters;"
          f" repeatability {out.get('repeatability')}")


if __name__ == "__main__":
    main()
