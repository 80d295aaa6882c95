#!/usr/bin/env python3
"""Summarizes scripts/device/user_kernels.sh (user-style kernels measured on a GPU) against the
front end's ranking of the same candidates, into one small JSON and a Markdown table.

    python3 -m cachewise_eval.summarize_user_kernels ADVISOR PROFILE RUN_DIR OUT.json

RUN_DIR is the unpacked user-kernels folder (tuned-NAME.json: every candidate's measured median
from `advisor tune --strategy exhaustive`; validate-NAME.json: the predicted top 3 with their
counters, predicted and measured). The ranking comes from `ADVISOR suggest --spec SPEC --json`
on PROFILE, here, for every candidate. Per kernel: top-1/best (measured time of the predicted
best over the fastest measured), the predicted rank of the measured best, the predicted over
measured time of every candidate, and the counters of the validated configs.
"""
import json
import os
import statistics
import subprocess
import sys

SPECS = [os.path.join("tests", "frontend", "kernels", name) for name in sorted(os.listdir(os.path.join("tests", "frontend", "kernels")))
         if name.endswith(".json")] + [os.path.join("examples", "kernels", name) for name in ("transpose.json", "spmv.json")]
COUNTERS = ["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
            "l1tex__t_sector_hit_rate.pct", "lts__t_sector_hit_rate.pct", "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum",
            "dram__bytes_read.sum", "dram__bytes_write.sum"]


def predicted_ranking(advisor, profile, spec):
    out = subprocess.run([advisor, "suggest", "--spec", spec, "--profile", profile, "--top", "100000", "--json"], check=True,
                         capture_output=True, text=True).stdout
    return [(c["config"], c["prediction"]["time_us"]) for c in json.loads(out)["ranked"]]


def config_text(config):
    return config if isinstance(config, str) else ",".join(f"{k}={v}" for k, v in sorted(config.items()))


def summarize(advisor, profile, folder, spec):
    name = os.path.splitext(os.path.basename(spec))[0]
    with open(os.path.join(folder, f"tuned-{name}.json")) as f:
        evaluations = json.load(f)["sizes"][0]["results"]["evaluations"]
    measured_ms = {}
    for e in evaluations:
        if e["ok"]:
            measured_ms[e["config"]] = e["median_ms"]  # the last round's (a contender measured again) wins
    ranking = [(config_text(c), t) for c, t in predicted_ranking(advisor, profile, spec)]
    ranked = [(c, t) for c, t in ranking if c in measured_ms]
    best_config = min(measured_ms, key=measured_ms.get)
    predicted_best = ranked[0][0]
    ratios = [t / (measured_ms[c] * 1000.0) for c, t in ranked]
    case = {"kernel": name, "spec": spec, "candidates": len(measured_ms),
            "predicted_best": predicted_best, "measured_best": best_config,
            "top1_over_best": round(measured_ms[predicted_best] / measured_ms[best_config], 4),
            "predicted_rank_of_best": [c for c, _ in ranked].index(best_config) + 1,
            "predicted_over_measured_time": {"median": round(statistics.median(ratios), 3), "min": round(min(ratios), 3),
                                             "max": round(max(ratios), 3)},
            "times_us": [{"config": c, "predicted": round(t, 2), "measured": round(measured_ms[c] * 1000.0, 2)} for c, t in ranked]}
    try:
        with open(os.path.join(folder, f"validate-{name}.json")) as f:
            validated = json.load(f)["candidates"]
    except (OSError, ValueError):
        validated = []
    case["counters"] = [{"config": config_text(v["config"]),
                         "predicted": {k: round(v["predicted"]["metrics"].get(k, float("nan")), 2) for k in COUNTERS},
                         "measured": {k: round(v["measured"]["metrics"].get(k, float("nan")), 2) for k in COUNTERS}} for v in validated]
    return case


def main():
    advisor, profile, folder, out = sys.argv[1:5]
    cases = [summarize(advisor, profile, folder, spec) for spec in SPECS]
    with open(out, "w") as f:
        json.dump({"profile": profile, "cases": cases}, f, separators=(",", ":"))
        f.write("\n")
    print("| kernel | candidates | predicted best | measured best | top-1/best | rank of best | predicted / measured time (median, range) |")
    print("|---|---:|---|---|---:|---:|---|")
    for c in cases:
        r = c["predicted_over_measured_time"]
        print(f"| {c['kernel']} | {c['candidates']} | {c['predicted_best']} | {c['measured_best']} | {c['top1_over_best']:.3f} | "
              f"{c['predicted_rank_of_best']} | {r['median']:.2f} ({r['min']:.2f}-{r['max']:.2f}) |")


if __name__ == "__main__":
    main()
