#!/usr/bin/env python3
"""Extracts the recorded H200 validation runs into compact replay data (tests/data/recorded/).

    python3 -m cachewise_eval.extract_recorded [--source-commit COMMIT] [--out tests/data/recorded]

Sources: the `validation-h200.json` of runs 11-20 under docs/h200-runs/ and run 21's
docs/validation-h200.json, read from git at --source-commit (default 34d4fc7, the commit that
recorded run 21; docs/h200-runs leaves the tree after it). Each was written by
`scripts/device/validate.sh` (`advisor validate --pattern F --n N --all --json --repeats 5
--counters 3` per case) from the binaries of RUNS[run]["kernels"].

spaces.json: per case (problem) its keys and every config timed in any run, sorted. Kept per
run and case: the copy bandwidth of the same run, the measured median time of every config in
spaces.json's order (us, 2 decimals; null where the run did not time it), and the measured
counters of the configs that were profiled (validate's predicted top 3, measured best and
predicted worst), with the recorded top-1 and best configs. Predictions are not kept: the
replay predicts again with today's model.

Exclusion rule: a (run, family) is kept only when the family's device code is the same at the
run's kernel commit as at HEAD, comments and whitespace ignored. Device code of a family: its
kernel source (transpose.cu, copy.cu, gemm.cu; stencil.cu's stencil2d part before
stencil3d_blocked, its stencil3d part from there to launch_stencil2d) plus the shared device
headers (batched_moves.cuh, numeric.cuh) and launch.cu. What was excluded, and why, is written
into each run's file.
"""
import argparse
import json
import os
import re
import subprocess

RUNS = {
    "run11": {"path": "docs/h200-runs/session5/run11/validation-h200.json", "kernels": "c32f907"},
    "run12": {"path": "docs/h200-runs/session6/run12/validation-h200.json", "kernels": "3c9eb89"},
    "run13": {"path": "docs/h200-runs/session7/run13/validation-h200.json", "kernels": "cd8431d"},
    "run14": {"path": "docs/h200-runs/session7/run14/validation-h200.json", "kernels": "b12312f"},
    "run15": {"path": "docs/h200-runs/session8/run15/validation-h200.json", "kernels": "a08890d"},
    "run16": {"path": "docs/h200-runs/session8/run16/validation-h200.json", "kernels": "be98d6b"},
    "run17": {"path": "docs/h200-runs/session8/run17/validation-h200.json", "kernels": "1e2465f"},
    "run18": {"path": "docs/h200-runs/session8/run18/validation-h200.json", "kernels": "6dae8ab"},
    "run19": {"path": "docs/h200-runs/session9/run19/validation-h200.json", "kernels": "9add43b"},
    "run20": {"path": "docs/h200-runs/session10/run20/validation-h200.json", "kernels": "3126522"},
    "run21": {"path": "docs/validation-h200.json", "kernels": "f46f9e6"},
}
COMMAND = ("REPEATS=5 CASE_TIMEOUT_S=90 TOTAL_TIMEOUT_S=450 bash scripts/device/final.sh "
           "(validate.sh: advisor validate --pattern F --n N --all --json --repeats 5 --counters 3)")
SHARED_DEVICE_FILES = ["kernels/src/batched_moves.cuh", "kernels/src/numeric.cuh", "kernels/src/launch.cu"]
FAMILY_FILES = {"transpose": "kernels/src/transpose.cu", "copy": "kernels/src/copy.cu", "gemm": "kernels/src/gemm.cu"}


def git_show(commit, path):
    return subprocess.run(["git", "show", f"{commit}:{path}"], capture_output=True, text=True, check=True).stdout


def without_comments(text):
    return re.sub(r"\s+", " ", re.sub(r"//[^\n]*", "", text)).strip()


def stencil_part(text, family):
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if "stencil3d_blocked" in line)
    while not lines[start].startswith("template"):
        start -= 1
    end = next(i for i, line in enumerate(lines) if line.startswith("void launch_stencil2d"))
    return "\n".join(lines[:start] if family == "stencil2d" else lines[start:end])


def device_code(commit, family):
    if family in FAMILY_FILES:
        parts = [git_show(commit, FAMILY_FILES[family])]
    else:
        parts = [stencil_part(git_show(commit, "kernels/src/stencil.cu"), family)]
    parts += [git_show(commit, path) for path in SHARED_DEVICE_FILES]
    return [without_comments(part) for part in parts]


def compact_number(name, value):
    """Counts (.sum) are whole numbers; rates and ratios keep 3 decimals."""
    return int(round(value)) if name.endswith(".sum") else round(value, 3)


def case_key(problem):
    return f"{problem['family']} n={problem['n']} m={problem['m']} k={problem['k']} {problem['dtype']}"


def config_values(config, keys):
    values = dict(item.split("=") for item in config.split(","))
    return [int(values[k]) for k in keys]


def space_of(case):
    """The case's configs as value lists over its sorted keys (the order of spaces.json)."""
    keys = sorted(item.split("=")[0] for item in case["candidates"][0]["config"].split(","))
    return {"problem": case["problem"], "keys": keys,
            "configs": sorted(config_values(c["config"], keys) for c in case["candidates"])}


def compact_case(case, space):
    index = {tuple(values): i for i, values in enumerate(space["configs"])}
    times = [None] * len(space["configs"])
    counters = []
    for candidate in case["candidates"]:
        measured = candidate["measured"]
        times[index[tuple(config_values(candidate["config"], space["keys"]))]] = round(measured["median_us"], 2)
        if "metrics" in measured:
            names = sorted(measured["metrics"])
            counters.append({"config": candidate["config"],
                             "values": [compact_number(name, measured["metrics"][name]) for name in names]})
            counter_names = names
    summary = case["summary"]
    return {"case": case_key(case["problem"]),
            "copy_bandwidth_gb_per_s": round(case["copy_bandwidth_gb_per_s"], 1),
            "times_us": times,
            "counter_names": counter_names,
            "counters": counters,
            "recorded_top1_config": summary["top1_config"],
            "recorded_best_config": summary["best_config"]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source-commit", default="34d4fc7")
    parser.add_argument("--out", default="tests/data/recorded")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    head = {family: device_code("HEAD", family) for family in ["transpose", "copy", "stencil2d", "stencil3d", "gemm"]}
    documents = {run: json.loads(git_show(args.source_commit, info["path"])) for run, info in RUNS.items()}
    spaces = {}
    for cases in documents.values():
        for case in cases:
            space = space_of(case)
            known = spaces.setdefault(case_key(case["problem"]), space)
            for values in space["configs"]:
                if values not in known["configs"]:
                    known["configs"].append(values)
    for space in spaces.values():
        space["configs"].sort()
    with open(os.path.join(args.out, "spaces.json"), "w") as f:
        f.write(json.dumps({"cases": [{"case": key, **space} for key, space in sorted(spaces.items())]},
                           separators=(",", ":")) + "\n")
    for run, info in RUNS.items():
        kept, excluded = [], []
        for case in documents[run]:
            family = case["problem"]["family"]
            if device_code(info["kernels"], family) == head[family]:
                kept.append(compact_case(case, spaces[case_key(case["problem"])]))
            else:
                excluded.append({"case": case_key(case["problem"]),
                                 "reason": f"{family}'s device code at {info['kernels']} differs from HEAD's"})
        document = {"run": run,
                    "source": f"{info['path']} at commit {args.source_commit}",
                    "kernel_commit": info["kernels"],
                    "device": documents[run][0]["device"],
                    "command": COMMAND,
                    "excluded": excluded,
                    "cases": kept}
        with open(os.path.join(args.out, f"{run}.json"), "w") as f:
            f.write(json.dumps(document, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
