#!/usr/bin/env python3
"""Re-predicts every timed config of a validation file with the current model and compares
the ranking against the measured times (docs/model.md, "Checking a model change against the H200").

For each case: Spearman rank correlation of predicted vs measured time, and top-1/best =
measured time of the config the model ranks first / best measured time. Reported for the
predictions stored in the validation file ("before") and for the current binary ("after").
Usage: python3 -m cachewise_eval.rescore [--advisor build-calib/bin/advisor] [--validation FILE]
       [--profile profiles/h200.json] [--jobs 2] [--only REGEX] [--dump FILE]
"""
import argparse
import concurrent.futures
import json
import re
import statistics
import subprocess


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    result = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for t in range(i, j + 1):
            result[order[t]] = (i + j) / 2.0  # ties share their mean rank
        i = j + 1
    return result


def spearman(xs, ys):
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    var = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return cov / var if var > 0 else 0.0


def top1_over_best(predicted, measured):
    chosen = min(range(len(predicted)), key=lambda i: predicted[i])
    return measured[chosen] / min(measured)


def case_name(problem):
    return "{} n={}{}".format(problem["family"], problem["n"],
                              "".join(" {}={}".format(k, problem[k]) for k in ("m", "k") if problem.get(k)))


def simulate(advisor, profile, problem, config):
    command = [advisor, "simulate", "--pattern", problem["family"], "--n", str(problem["n"]),
               "--config", config, "--profile", profile, "--json"]
    for key in ("m", "k"):
        if problem.get(key):
            command += ["--" + key, str(problem[key])]
    if problem.get("dtype"):
        command += ["--dtype", problem["dtype"]]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--advisor", default="build-calib/bin/advisor")
    parser.add_argument("--validation", default="measurements/validation-h200.json")
    parser.add_argument("--profile", default="profiles/h200.json")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--dump", help="also write every re-prediction (simulate --json) to this file")
    parser.add_argument("--only", default="", help="re-predict only the cases whose name (e.g. 'gemm n=1024') matches this regex")
    args = parser.parse_args()
    with open(args.validation) as file:
        cases = json.load(file)

    rows = []
    dumped = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for case in cases:
            problem = case["problem"]
            if not re.search(args.only, case_name(problem)):
                continue
            timed = [c for c in case["candidates"] if c.get("measured", {}).get("median_us")]
            measured = [c["measured"]["median_us"] for c in timed]
            before = [c["predicted"]["time_us"] for c in timed]
            predictions = list(pool.map(lambda c: simulate(args.advisor, args.profile, problem, c["config"]), timed))
            dumped.append({"problem": problem, "configs": [c["config"] for c in timed], "measured_us": measured,
                           "predictions": predictions})
            after = [p["time_us"] for p in predictions]
            rows.append((case_name(problem), len(timed), spearman(before, measured), spearman(after, measured),
                         top1_over_best(before, measured), top1_over_best(after, measured)))

    if args.dump:
        with open(args.dump, "w") as file:
            json.dump(dumped, file)
    print("| case | configs | Spearman before | Spearman after | top-1/best before | top-1/best after |")
    print("|---|---|---|---|---|---|")
    for name, count, s0, s1, t0, t1 in rows:
        print("| {} | {} | {:.3f} | {:.3f} | {:.3f} | {:.3f} |".format(name, count, s0, s1, t0, t1))
    for label, index in (("median", statistics.median), ("worst", max)):
        print("| {} | | {:.3f} | {:.3f} | {:.3f} | {:.3f} |".format(
            label, index(r[2] for r in rows) if label == "median" else min(r[2] for r in rows),
            index(r[3] for r in rows) if label == "median" else min(r[3] for r in rows),
            index(r[4] for r in rows), index(r[5] for r in rows)))


if __name__ == "__main__":
    main()
