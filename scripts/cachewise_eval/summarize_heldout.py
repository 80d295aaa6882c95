#!/usr/bin/env python3
"""Summarizes the held-out validation cases of scripts/device/heldout.sh (one `advisor validate
--all --json` per case) into one small JSON: per case the top-1/best of the sweep and of the
side-by-side re-timing, the predicted rank of the measured best, the predicted-time error of the
predicted top 10, and per profiled config the predicted and measured counters.

    python3 -m cachewise_eval.summarize_heldout HELDOUT_DIR OUT.json
"""
import json
import statistics
import sys

COUNTERS = ["dram__bytes_read.sum", "dram__bytes_write.sum", "l1tex__t_sector_hit_rate.pct", "lts__t_sector_hit_rate.pct",
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
            "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
            "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum"]


def rounded(value):
    """Counts to whole numbers, rates to 0.01: the precision the comparison needs."""
    return None if value is None else round(value, 2)


def main():
    folder, out = sys.argv[1], sys.argv[2]
    cases = []
    i = 0
    while True:
        try:
            data = json.load(open(f"{folder}/case-{i}.json"))
        except FileNotFoundError:
            break
        i += 1
        s = data["summary"]
        ranked = sorted(data["candidates"], key=lambda c: c["predicted_rank"])
        top = [c for c in ranked[:10] if c["measured"].get("median_us")]
        errors = [c["predicted"]["time_us"] / c["measured"]["median_us"] - 1 for c in top]
        profiled = []
        for c in data["candidates"]:
            m = c["measured"].get("metrics")
            if not m:
                continue
            p = c["predicted"]["metrics"]
            profiled.append({"config": c["config"], "predicted_rank": c["predicted_rank"],
                             "predicted": {k: rounded(p.get(k)) for k in COUNTERS if k in m},
                             "measured": {k: rounded(m.get(k)) for k in COUNTERS if k in m}})
        cases.append({"problem": data["problem"], "candidates": s["candidates"], "top1_config": s["top1_config"],
                      "best_config": s["best_config"], "best_predicted_rank": s["best_predicted_rank"],
                      "top1_over_best_sweep": s["top1_over_best"], "top1_over_best_timed_again": s["confirmed_top1_over_best"],
                      "best_fraction_of_copy": s["best_fraction_of_copy"], "checked_all_correct": s["checked_all_correct"],
                      "top10_mean_abs_time_error": statistics.mean(abs(e) for e in errors) if errors else None,
                      "top10_mean_time_error": statistics.mean(errors) if errors else None,
                      "profiled": profiled})
    json.dump({"source": "scripts/device/heldout.sh .device $OUT (advisor validate --pattern F --n N [--dtype D] --all --json "
                         "--repeats 5 --counters 3 --profile profiles/h200.json per case)",
               "cases": cases}, open(out, "w"), separators=(",", ":"))


if __name__ == "__main__":
    main()
