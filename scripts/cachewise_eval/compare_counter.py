#!/usr/bin/env python3
"""Re-predicts every config of a validation file whose counters were read and prints one
counter predicted against measured, per config, with the mean relative error: how a model
change moves one count before the GPU sees it (docs/model.md, "Checking a model change against the H200").
Usage: python3 -m cachewise_eval.compare_counter [--advisor build/bin/advisor] [--validation FILE]
       [--profile profiles/h200.json] [--metric lts__t_sectors_op_read.sum] [--only REGEX]
"""
import argparse
import concurrent.futures
import json
import re

from cachewise_eval.rescore import simulate  # the same `advisor simulate --json` call


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--advisor", default="build/bin/advisor")
    parser.add_argument("--validation", default="measurements/validation-h200.json")
    parser.add_argument("--profile", default="profiles/h200.json")
    parser.add_argument("--metric", default="lts__t_sectors_op_read.sum")
    parser.add_argument("--only", default="", help="regex on the family name")
    args = parser.parse_args()
    with open(args.validation) as file:
        cases = json.load(file)
    jobs = [(case["problem"], candidate) for case in cases for candidate in case["candidates"]
            if "metrics" in candidate["measured"] and re.search(args.only, case["problem"]["family"])]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        predictions = list(pool.map(lambda job: simulate(args.advisor, args.profile, job[0], job[1]["config"]), jobs))
    errors = []
    for (problem, candidate), prediction in zip(jobs, predictions):
        predicted = prediction["metrics"][args.metric]
        measured = candidate["measured"]["metrics"][args.metric]
        error = predicted / measured - 1 if measured else 0.0
        errors.append(abs(error))
        print("{:<10} {:>10} {:<62} {:>14.0f} {:>14.0f} {:+7.1%}".format(
            problem["family"], problem["n"], candidate["config"], predicted, measured, error))
    if errors:
        print("{}: mean |predicted / measured - 1| {:.1%} over {} configs".format(
            args.metric, sum(errors) / len(errors), len(errors)))


if __name__ == "__main__":
    main()
