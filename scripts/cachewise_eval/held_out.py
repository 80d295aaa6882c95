#!/usr/bin/env python3
"""Chooses the time model's calibration on some recorded H200 cases and reports on the others.

    python3 -m cachewise_eval.held_out predict ADVISOR PROFILE CACHE            # the grid, top 32
    python3 -m cachewise_eval.held_out predict ADVISOR PROFILE CACHE --top 100000 --points adopted
    python3 -m cachewise_eval.held_out report PROFILE CACHE FIGURES.json

`predict` runs `ADVISOR suggest --top T --json` for every recorded case
(tests/data/recorded/spaces.json) once per point of GRID_POINTS (or the adopted one),
PROFILE's calibration with the point's values, and keeps the ranked configs' predicted times
and the counters of the configs any run profiled (CACHE/<point>_top<T>.json). With T = 32
suggest ranks as a user sees it (screen all, refine the best 32); T = 100000 refines every
config, as `advisor validate --all` does: the counters of every profiled config. `report`
reads them with the recorded measurements (tests/data/recorded/run*.json) and:

- fits: per split, the grid point with the smallest objective on the fit cases (OBJECTIVE);
- reports the held-out cases with their split's point and every case with the point fitted on
  all of them (in-sample), and with PROFILE's own calibration as it is (the adopted one);
- splits: leave one size out (fit on the larger size of every family, report the smaller,
  and the reverse), leave one family out (fit on four families, report the fifth);
- error bands: per family the 10th-90th percentile of measured / predicted time over the
  predicted top 10 of that family's cases held out by leave-one-size-out; for any other
  kernel ("all"), the same over every family held out by leave-one-family-out;
- writes FIGURES.json (what the docs print; render_held_out renders it). These figures are
  computed here only: tests/advisor/replay checks the model on hand-derived values instead.
"""
import argparse
import concurrent.futures
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

RECORDED = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "recorded")
# One constant at a time around the adopted values (a full grid costs minutes of a 2-core
# machine per point): the two that were fitted to the validation cases, the measured loaded
# DRAM factor and the assumed block-launch cycles (docs/calibration.md); the rest stay as
# PROFILE has them.
ADOPTED = {"memory_levels_combine_exponent": 16.0, "loaded_cache_latency_factor": 2.0,
           "loaded_dram_latency_factor": 3.0, "block_launch_cycles": 150.0}
GRID_POINTS = [ADOPTED,
               {**ADOPTED, "loaded_cache_latency_factor": 3.0},
               {**ADOPTED, "memory_levels_combine_exponent": 8.0},
               {**ADOPTED, "loaded_cache_latency_factor": 1.5},
               {**ADOPTED, "memory_levels_combine_exponent": 32.0},
               {**ADOPTED, "loaded_dram_latency_factor": 2.0},
               {**ADOPTED, "loaded_dram_latency_factor": 4.0},
               {**ADOPTED, "block_launch_cycles": 0.0},
               {**ADOPTED, "block_launch_cycles": 300.0}]
OBJECTIVE = ("the mean over the fit (run, case) pairs of top-1/best (measured time of the predicted best "
             "over the fastest measured) + 0.25 x the mean |predicted / measured - 1| over each pair's "
             "predicted top 32")
COUNTERS = {
    "L1 hit %": ("l1tex__t_sector_hit_rate.pct", None),
    "L2 hit %": ("lts__t_sector_hit_rate.pct", None),
    "sectors/req ld": ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
    "sectors/req st": ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
    "bank conflicts": ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "+l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
    "DRAM MB": ("dram__bytes_read.sum", "+dram__bytes_write.sum"),
    "DRAM read MB": ("dram__bytes_read.sum", None),
}


def point_name(point):
    return "_".join(f"{key}={point[key]:g}" for key in sorted(point))


def grid_points():
    return GRID_POINTS


def load_recorded():
    with open(os.path.join(RECORDED, "spaces.json")) as f:
        spaces = {case["case"]: case for case in json.load(f)["cases"]}
    runs = []
    for name in sorted(os.listdir(RECORDED)):
        if name.startswith("run") and name.endswith(".json"):
            with open(os.path.join(RECORDED, name)) as f:
                runs.append(json.load(f))
    return spaces, runs


def config_text(keys, values):
    return ",".join(f"{k}={v}" for k, v in zip(keys, values))


# ----- predict -----------------------------------------------------------------------------

def predict_case(advisor, profile_path, space, profiled, top):
    problem = space["problem"]
    command = [advisor, "suggest", "--pattern", problem["family"], "--n", str(problem["n"]), "--top", str(top),
               "--json", "--profile", profile_path]
    for key in ("m", "k"):
        if problem[key]:
            command += [f"--{key}", str(problem[key])]
    suggestion = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
    by_config = {c["config"]: (i + 1, c["prediction"]) for i, c in enumerate(suggestion["ranked"])}
    times, ranks, metrics = [], [], {}
    for values in space["configs"]:
        config = config_text(space["keys"], values)
        rank, prediction = by_config.get(config, (None, None))
        times.append(prediction["time_us"] if prediction else None)
        ranks.append(rank)
        if prediction and config in profiled:
            metrics[config] = prediction["metrics"]
    return {"times_us": times, "ranks": ranks, "metrics": metrics, "calibration": suggestion.get("calibration")}


def predict(args):
    spaces, runs = load_recorded()
    profiled = {key: set() for key in spaces}
    for run in runs:
        for case in run["cases"]:
            profiled[case["case"]].update(c["config"] for c in case["counters"])
    with open(args.profile) as f:
        profile = json.load(f)
    os.makedirs(args.cache, exist_ok=True)
    jobs = []
    for point in (grid_points() if args.points == "all" else [ADOPTED]):
        name = f"{point_name(point)}_top{args.top}"
        if os.path.exists(os.path.join(args.cache, name + ".json")):
            continue
        document = json.loads(json.dumps(profile))
        for key, value in point.items():
            document["calibration"][key]["value"] = value
        path = os.path.join(tempfile.mkdtemp(), "profile.json")
        with open(path, "w") as f:
            json.dump(document, f)
        jobs.append((name, path))

    def run_point(job):
        name, path = job
        result = {key: predict_case(args.advisor, path, space, profiled[key], args.top) for key, space in spaces.items()}
        with open(os.path.join(args.cache, name + ".json"), "w") as f:
            json.dump(result, f)
        return name

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name in pool.map(run_point, jobs):
            print("predicted", name, file=sys.stderr)


# ----- figures -----------------------------------------------------------------------------

def pair_figures(space, case, predicted):
    """top-1/best and the predicted top's time errors of one (run, case), under one prediction."""
    measured = case["times_us"]
    timed = [i for i, t in enumerate(measured) if t is not None]
    ranked = sorted((i for i in timed if predicted["ranks"][i] is not None), key=lambda i: predicted["ranks"][i])
    best = min(measured[i] for i in timed)
    errors = [abs(predicted["times_us"][i] / measured[i] - 1) for i in ranked]
    residuals = [measured[i] / predicted["times_us"][i] for i in ranked[:10]]
    return {"top1_over_best": measured[ranked[0]] / best, "top_errors": errors, "top10_residuals": residuals}


def objective(pairs):
    ratios = [p["top1_over_best"] for p in pairs]
    errors = [e for p in pairs for e in p["top_errors"]]
    return statistics.fmean(ratios) + 0.25 * statistics.fmean(errors)


def summarize(pairs_by_case):
    """Per family and overall: top-1/best median and worst, the predicted top 32's mean time error."""
    out = {}
    families = sorted({key.split()[0] for key in pairs_by_case})
    for family in families + ["all"]:
        pairs = [p for key, ps in pairs_by_case.items() if family in ("all", key.split()[0]) for p in ps]
        ratios = [p["top1_over_best"] for p in pairs]
        worst_case = max(((p["top1_over_best"], key) for key, ps in pairs_by_case.items()
                          if family in ("all", key.split()[0]) for p in ps))[1]
        out[family] = {"pairs": len(pairs),
                       "top1_over_best_median": round(statistics.median(ratios), 4),
                       "top1_over_best_worst": round(max(ratios), 4),
                       "worst_case": worst_case,
                       "top_time_error_mean": round(statistics.fmean(e for p in pairs for e in p["top_errors"]), 4)}
    return out


def counter_value(metrics, name):
    """A counter of COUNTERS from CUPTI-named metrics (DRAM in MB); None when absent."""
    numerator, denominator = COUNTERS[name]
    value = metrics.get(numerator)
    if value is None:
        return None
    scale = 1e6 if "bytes" in numerator else 1.0
    if denominator is None:
        return value / scale
    if denominator.startswith("+"):
        other = metrics.get(denominator[1:])
        return None if other is None else (value + other) / scale
    requests = metrics.get(denominator)
    return value / requests if requests else None


def counter_figures(spaces, runs, predicted):
    """MAE, relative errors and the worst configs of each unfitted counter, over every profiled
    config of every run."""
    out = {}
    for name in COUNTERS:
        rows = []
        for run in runs:
            for case in run["cases"]:
                for profiled in case["counters"]:
                    measured = dict(zip(case["counter_names"], profiled["values"]))
                    model = predicted[case["case"]]["metrics"].get(profiled["config"])
                    m = counter_value(measured, name)
                    p = counter_value(model, name) if model else None
                    if m is None or p is None:
                        continue
                    rows.append((abs(p - m), p, m, run["run"], case["case"], profiled["config"]))
        rows.sort(key=lambda r: r[0], reverse=True)
        relative = [r[0] / r[2] for r in rows if r[2] > 0]
        out[name] = {"configs": len(rows), "mae": round(statistics.fmean(r[0] for r in rows), 4),
                     "relative_error_median": round(statistics.median(relative), 4) if relative else None,
                     "relative_error_worst": round(max(relative), 4) if relative else None,
                     "worst": [{"error": round(r[0], 3), "predicted": round(r[1], 3), "measured": round(r[2], 3),
                                "run": r[3], "case": r[4], "config": r[5]} for r in rows[:3]]}
    return out


def percentile(values, fraction):
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def report(args):
    spaces, runs = load_recorded()
    points = grid_points()
    cache = {}
    for point in points:
        path = os.path.join(args.cache, point_name(point) + "_top32.json")
        if os.path.exists(path):  # a point not predicted (yet) is left out of the fit
            with open(path) as f:
                cache[point_name(point)] = json.load(f)
    points = [p for p in points if point_name(p) in cache]
    with open(args.profile) as f:
        calibration = json.load(f)["calibration"]
    adopted = cache[point_name({key: calibration[key]["value"] for key in ADOPTED})]
    # Every config refined (what `advisor validate --all` predicts): the counters of every
    # profiled config.
    with open(os.path.join(args.cache, point_name(ADOPTED) + "_top100000.json")) as f:
        every_config = json.load(f)
    cases = sorted(spaces)

    def pairs(prediction, keys):
        out = {}
        for run in runs:
            for case in run["cases"]:
                if case["case"] in keys:
                    out.setdefault(case["case"], []).append(pair_figures(spaces[case["case"]], case, prediction[case["case"]]))
        return out

    per_point = {name: pairs(prediction, cases) for name, prediction in cache.items()}

    def fit(keys):
        return min(points, key=lambda p: objective([x for k in keys for x in per_point[point_name(p)][k]]))

    sizes = {}
    for key in cases:
        sizes.setdefault(key.split()[0], []).append((spaces[key]["problem"]["n"], key))
    smaller = {sorted(v)[0][1] for v in sizes.values()}
    larger = {sorted(v)[-1][1] for v in sizes.values()}
    splits = {"leave_one_size_out": [("smaller sizes held out", larger, smaller), ("larger sizes held out", smaller, larger)],
              "leave_one_family_out": [(f"{family} held out", {k for k in cases if not k.startswith(family + " ")},
                                        {k for k in cases if k.startswith(family + " ")}) for family in sorted(sizes)]}
    figures = {"objective": OBJECTIVE, "grid": points, "splits": {}}
    held_out_pairs = {}
    for split, folds in splits.items():
        held = {}
        fold_out = []
        for label, fit_keys, report_keys in folds:
            chosen = fit(sorted(fit_keys))
            fold_out.append({"fold": label, "fit_cases": sorted(fit_keys), "held_out_cases": sorted(report_keys), "chosen": chosen})
            for key in report_keys:
                held[key] = per_point[point_name(chosen)][key]
        held_out_pairs[split] = held
        figures["splits"][split] = {"folds": fold_out, "held_out": summarize(held)}
    everything = fit(cases)
    figures["in_sample"] = {"chosen": everything, "figures": summarize(per_point[point_name(everything)])}
    figures["adopted"] = {"calibration": calibration["name"], "figures": summarize(pairs(adopted, cases)),
                          "counters": counter_figures(spaces, runs, every_config)}
    bands = {}
    for family in sorted(sizes):
        residuals = [r for key, ps in held_out_pairs["leave_one_size_out"].items() if key.startswith(family + " ")
                     for p in ps for r in p["top10_residuals"]]
        bands[family] = {"low_ratio": round(percentile(residuals, 0.1), 4), "high_ratio": round(percentile(residuals, 0.9), 4),
                         "residuals": len(residuals)}
    residuals = [r for ps in held_out_pairs["leave_one_family_out"].values() for p in ps for r in p["top10_residuals"]]
    bands["all"] = {"low_ratio": round(percentile(residuals, 0.1), 4), "high_ratio": round(percentile(residuals, 0.9), 4),
                    "residuals": len(residuals)}
    figures["time_error_bands"] = bands
    with open(args.figures, "w") as f:
        json.dump(figures, f, indent=1, sort_keys=True)
        f.write("\n")


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("predict")
    p.add_argument("advisor")
    p.add_argument("profile")
    p.add_argument("cache")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--top", type=int, default=32, help="configs suggest ranks and refines (every one: validate --all)")
    p.add_argument("--points", choices=["all", "adopted"], default="all")
    r = sub.add_parser("report")
    r.add_argument("profile")
    r.add_argument("cache")
    r.add_argument("figures")
    args = parser.parse_args()
    (predict if args.command == "predict" else report)(args)


if __name__ == "__main__":
    main()
