#!/usr/bin/env python3
"""Issue 37's goal figures on the measured corpus of public kernels.

For every kernel of measurements/corpus/corpus-h200.json, `advisor suggest --spec S --json`
ranks every candidate of every variant (the corpus's specs, materialized with their guards as
scripts/cachewise_eval/corpus/README.md says); predicted candidates are matched to measured ones by variant and
parameter values, and per kernel:

  top1_over_best    measured time of the predicted best / the measured best (of all measured)
  top3_over_best    best measured time among the predicted top 3 / the measured best
  spearman          rank correlation of predicted and measured time (average ranks for ties)
  ratios            predicted / measured time per matched candidate

Kernels with `steps` per candidate (Rodinia's pyramid height) compare time per step, both sides.
Kernels the advisor cannot predict are kept with their one-line reason and count as misses.
The figures are aggregated for the held-out half (scripts/cachewise_eval/corpus/split.json), the fit half, and
leave-one-kernel-out (the same as the plain figures while nothing is fitted on the corpus).

  python3 -m cachewise_eval.corpus_figures --advisor build/bin/advisor --src .corpus-src \
      [--timeout-s 300] [--out measurements/corpus/figures.json]
"""
import argparse
import concurrent.futures
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from cachewise_eval import corpus_lib, rescore  # rescore: the one rank helper

TOP1_MEDIAN_GOAL = 1.03
TOP1_WORST_GOAL = 1.10
TOP3_WITHIN = 1.02
TOP3_KERNEL_FRACTION_GOAL = 0.90
SPEARMAN_MEDIAN_GOAL = 0.8
RATIO_MEDIAN_BAND = (0.9, 1.1)
RATIO_CANDIDATE_BAND = (0.75, 1.33)
RATIO_CANDIDATE_FRACTION_GOAL = 0.90


# --- statistics (unit-tested in test_corpus_figures.py) ---------------------------------------

def average_ranks(values):
    """1-based ranks, tied values sharing the mean of the ranks they span (rescore.ranks is 0-based)."""
    return [rank + 1 for rank in rescore.ranks(values)]


def spearman(xs, ys):
    """Pearson correlation of the average ranks; None when either side has one distinct value
    (or fewer than two points): no ranking to compare."""
    if len(xs) != len(ys) or len(xs) < 2:
        return None
    rx, ry = average_ranks(xs), average_ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def best_of_top(predicted, measured, k, measured_best):
    """Best measured time among the k candidates predicted fastest, over the measured best.
    predicted and measured are parallel lists; ties in prediction keep the list order."""
    order = sorted(range(len(predicted)), key=lambda i: predicted[i])[:k]
    return min(measured[i] for i in order) / measured_best


def median_or_none(values):
    return statistics.median(values) if values else None


# --- running the advisor ----------------------------------------------------------------------

def materialized_specs(src_root, work):
    """{kernel: {variant: path of its runnable spec}} and {kernel: include folders}."""
    _, kernels = corpus_lib.load_corpus()
    runnable = corpus_lib.materialize(kernels, src_root, Path(work) / "src")
    specs, includes = {}, {}
    for name, variants in runnable.items():
        specs[name] = {}
        for variant, spec in variants.items():
            path = Path(work) / "specs" / ((name + ("--" + variant if variant else "")) + ".json")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(spec, indent=1))
            specs[name][variant] = (path, list(spec.get("parameters", {})))
        includes[name] = corpus_lib.include_dirs(kernels[name], Path(work) / "src")
    return specs, includes


def advisor_flags(advisor):
    text = subprocess.run([advisor, "suggest", "--help"], capture_output=True, text=True).stdout
    return {"includes": bool(re.search(r"(^|\s)-I[\s,]", text)), "wide": "--wide" in text}


def run_advisor(advisor, spec_path, includes, flags, profile, timeout_s):
    """(suggestion JSON, "") or (None, one-line reason)."""
    command = [advisor, "suggest", "--spec", str(spec_path), "--json", "--top", "1000000"]
    if flags["wide"]:
        command.append("--wide")
    if profile:
        command += ["--profile", profile]
    environment = dict(os.environ)
    if flags["includes"]:
        for folder in includes:
            command += ["-I", folder]
    elif includes:  # an advisor without -I: its compilers read CPATH
        environment["CPATH"] = os.pathsep.join(includes + [p for p in [os.environ.get("CPATH")] if p])
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, env=environment)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout_s:.0f} s"
    if result.returncode != 0:
        lines = [line for line in result.stderr.splitlines() if line.strip()] or [f"exit code {result.returncode}"]
        errors = [line for line in lines if "error" in line.lower()]
        return None, (errors or lines)[0][:240]
    try:
        return json.loads(result.stdout), ""
    except json.JSONDecodeError as error:
        return None, f"unreadable JSON from the advisor: {error}"


def candidate_key(variant, params, names):
    return (variant, tuple((name, int(params[name])) for name in names))


# --- per kernel and aggregate figures ---------------------------------------------------------

def kernel_figures(measured_kernel, predictions, errors):
    """predictions: {(variant, params key): predicted time per step, us}; errors: reasons of the
    variants the advisor could not rank."""
    measured = {}
    for c in measured_kernel["candidates"]:
        if c.get("status") != "ok":
            continue
        names = list(c["params"])
        measured[candidate_key(c["variant"], c["params"], names)] = (c["median_us"] / c.get("steps", 1), c)
    measured_best = min(t for t, _ in measured.values())
    matched = [(key, predictions[key], measured[key][0]) for key in measured if key in predictions]
    row = {"half": measured_kernel["half"], "measured_candidates": len(measured), "predicted_candidates": len(predictions),
           "matched": len(matched), "errors": errors}
    if not matched:
        row["reason"] = errors[0] if errors else "no predicted candidate matches a measured one"
        return row
    predicted_us = [p for _, p, _ in matched]
    measured_us = [m for _, _, m in matched]
    best_key = matched[min(range(len(matched)), key=lambda i: predicted_us[i])][0]
    measured_best_key = min(measured, key=lambda k: measured[k][0])
    row.update({
        "top1_over_best": best_of_top(predicted_us, measured_us, 1, measured_best),
        "top3_over_best": best_of_top(predicted_us, measured_us, 3, measured_best),
        "spearman": spearman(predicted_us, measured_us),
        "predicted_best": measured[best_key][1]["id"],
        "measured_best": measured[measured_best_key][1]["id"],
        "measured_best_us": measured_best,
        "candidates": [{"id": measured[key][1]["id"], "predicted_us": round(p, 3), "measured_us": round(m, 3),
                        "ratio": round(p / m, 4)} for key, p, m in matched],
    })
    return row


def aggregate(rows):
    """Goal figures over kernels; a kernel without figures counts as a miss everywhere."""
    kernels = list(rows)
    predicted = [rows[k] for k in kernels if "top1_over_best" in rows[k]]
    missing = [k for k in kernels if "top1_over_best" not in rows[k]]
    top1 = [r["top1_over_best"] for r in predicted] + [math.inf] * len(missing)
    spearmans = [r["spearman"] if r["spearman"] is not None else 0.0 for r in predicted] + [-1.0] * len(missing)
    ratios = [c["ratio"] for r in predicted for c in r["candidates"]]
    all_candidates = sum(rows[k]["measured_candidates"] for k in kernels)
    within = sum(RATIO_CANDIDATE_BAND[0] <= x <= RATIO_CANDIDATE_BAND[1] for x in ratios)
    figures = {
        "kernels": len(kernels),
        "kernels_predicted": len(predicted),
        "kernels_not_predicted": {k: rows[k].get("reason", "") for k in missing},
        "top1_over_best_median": median_or_none(top1),
        "top1_over_best_worst": max(top1) if top1 else None,
        "top3_within_1_02_fraction": sum(r["top3_over_best"] <= TOP3_WITHIN for r in predicted) / len(kernels) if kernels else None,
        "spearman_median": median_or_none(spearmans),
        "ratio_median": median_or_none(ratios),
        "ratio_within_0_75_1_33_fraction": within / all_candidates if all_candidates else None,
        "candidates_measured": all_candidates,
        "candidates_matched": len(ratios),
    }
    figures["goals"] = {
        "top1_median_le_1_03": figures["top1_over_best_median"] is not None and figures["top1_over_best_median"] <= TOP1_MEDIAN_GOAL,
        "top1_worst_le_1_10": figures["top1_over_best_worst"] is not None and figures["top1_over_best_worst"] <= TOP1_WORST_GOAL,
        "top3_within_1_02_on_90pct": (figures["top3_within_1_02_fraction"] or 0) >= TOP3_KERNEL_FRACTION_GOAL,
        "spearman_median_ge_0_8": (figures["spearman_median"] or -1) >= SPEARMAN_MEDIAN_GOAL,
        "ratio_median_in_0_9_1_1": figures["ratio_median"] is not None and RATIO_MEDIAN_BAND[0] <= figures["ratio_median"] <= RATIO_MEDIAN_BAND[1],
        "ratio_90pct_in_0_75_1_33": (figures["ratio_within_0_75_1_33_fraction"] or 0) >= RATIO_CANDIDATE_FRACTION_GOAL,
    }
    return figures


def json_safe(value):
    if isinstance(value, float) and math.isinf(value):
        return "not predicted"
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    return value


def number(value, digits=3):
    return "-" if value is None else value if isinstance(value, str) else f"{value:.{digits}f}"


def markdown(figures):
    """The summary table docs/validation-h200.md leads with: the halves against the goals, then
    one row per kernel."""
    goals = [("top-1/best, median", "top1_over_best_median", "<= 1.03", "top1_median_le_1_03"),
             ("top-1/best, worst", "top1_over_best_worst", "<= 1.10", "top1_worst_le_1_10"),
             ("kernels with best of top 3 within 1.02", "top3_within_1_02_fraction", ">= 0.90", "top3_within_1_02_on_90pct"),
             ("Spearman, median", "spearman_median", ">= 0.8", "spearman_median_ge_0_8"),
             ("predicted/measured, median", "ratio_median", "0.9-1.1", "ratio_median_in_0_9_1_1"),
             ("candidates with predicted/measured in 0.75-1.33", "ratio_within_0_75_1_33_fraction", ">= 0.90", "ratio_90pct_in_0_75_1_33")]
    held, fit = figures["held_out"], figures["fit"]
    lines = [f"| figure | goal | held-out ({held['kernels_predicted']} of {held['kernels']} kernels predicted) | met | "
             f"fit ({fit['kernels_predicted']} of {fit['kernels']}) |", "|---|---|---|---|---|"]
    for label, key, goal, met in goals:
        lines.append(f"| {label} | {goal} | {number(held[key])} | {'met' if held['goals'][met] else 'NOT met'} | {number(fit[key])} |")
    lines += ["", "| kernel | half | candidates predicted/measured | top-1/best | best of top 3/best | Spearman | "
              "predicted/measured median | predicted best | measured best | not predicted because |", "|---|---|---|---|---|---|---|---|---|---|"]
    for name, row in figures["kernels"].items():
        ratios = [c["ratio"] for c in row.get("candidates", [])]
        reason = "; ".join(row["errors"]).replace("|", "\\|")[:160]
        lines.append(f"| {name} | {row['half']} | {row['matched']}/{row['measured_candidates']} | {number(row.get('top1_over_best'))} | "
                     f"{number(row.get('top3_over_best'))} | {number(row.get('spearman'), 2)} | {number(median_or_none(ratios), 2)} | "
                     f"{row.get('predicted_best', '-')} | {row.get('measured_best', '-')} | {reason} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--advisor", default="build/bin/advisor")
    parser.add_argument("--src", default=".corpus-src")
    parser.add_argument("--work", default=None)
    parser.add_argument("--profile", default="profiles/h200.json")
    parser.add_argument("--timeout-s", type=float, default=300, help="per kernel, all its variants together")
    parser.add_argument("--jobs", type=int, default=1, help="kernels run at once")
    parser.add_argument("--measured", default="measurements/corpus/corpus-h200.json")
    parser.add_argument("--only", nargs="*", help="kernel names to run")
    parser.add_argument("--out", default="measurements/corpus/figures.json")
    parser.add_argument("--table", metavar="FIGURES_JSON", help="print the markdown summary of a figures file and stop")
    args = parser.parse_args()
    if args.table:
        print(markdown(json.loads(Path(args.table).read_text())))
        return

    measured = json.loads(Path(args.measured).read_text())["kernels"]
    work = Path(args.work or tempfile.mkdtemp(prefix="cachewise-figures-"))
    specs, includes = materialized_specs(args.src, work)
    flags = advisor_flags(args.advisor)
    # the held-out half first: it is the one the goals are about
    names = sorted(measured, key=lambda n: (measured[n]["half"] != "held_out", n))
    if args.only:
        names = [n for n in names if n in args.only]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    command = "python3 -m cachewise_eval.corpus_figures " + " ".join(sys.argv[1:])
    rows = {}
    lock = threading.Lock()

    def figures_of(name):
        started = time.time()
        predictions, errors = {}, []
        steps = {(c["variant"], tuple(sorted(c["params"].items()))): c.get("steps", 1) for c in measured[name]["candidates"]}
        for variant, (spec_path, parameter_names) in specs[name].items():
            left_s = args.timeout_s - (time.time() - started)  # one budget for all the kernel's variants
            if left_s <= 1:
                errors.append((variant + ": " if variant else "") + f"not run: the kernel's {args.timeout_s:.0f} s were spent")
                continue
            suggestion, error = run_advisor(args.advisor, spec_path, includes[name], flags, args.profile, left_s)
            if suggestion is None:
                errors.append((variant + ": " if variant else "") + error)
                continue
            for ranked in suggestion["ranked"]:
                values = ranked["config_values"]
                params = {p: values[p] for p in parameter_names if p in values}
                if len(params) != len(parameter_names):
                    continue
                per_step = steps.get((variant, tuple(sorted((k, int(v)) for k, v in params.items()))), 1)
                predictions[candidate_key(variant, params, parameter_names)] = ranked["prediction"]["time_us"] / per_step
        row = kernel_figures(measured[name], predictions, errors)
        row["advisor_s"] = round(time.time() - started, 1)
        print(f"{name:18s} {row['half']:9s} {row['advisor_s']:6.1f} s  top1 {row.get('top1_over_best', float('nan')):.3f}  "
              f"top3 {row.get('top3_over_best', float('nan')):.3f}  rho {row.get('spearman')}  {'; '.join(errors)[:100]}", flush=True)
        with lock:
            rows[name] = row
            write(rows)

    def write(rows):
        # a kernel not finished (yet, or when the run is stopped) counts as a miss
        pending = {n: {"half": measured[n]["half"], "measured_candidates": sum(c.get("status") == "ok" for c in measured[n]["candidates"]),
                       "predicted_candidates": 0, "matched": 0, "errors": ["not finished"], "reason": "not finished"}
                   for n in names if n not in rows}
        ordered = {n: rows.get(n, pending.get(n)) for n in names}
        halves = {half: aggregate({k: r for k, r in ordered.items() if r["half"] == half}) for half in ("held_out", "fit")}
        out = {
            "command": command, "commit": commit, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "load_average": os.getloadavg()[0],
            "about": "Issue 37's goal figures; per kernel and per half. No constant of the model is fitted on "
                     "the corpus, so leave-one-kernel-out equals the plain figures.",
            "held_out": halves["held_out"], "fit": halves["fit"],
            "leave_one_kernel_out": "equal to the plain figures: nothing is fitted on the corpus",
            "kernels_not_run": [n for n in names if n not in rows], "kernels": ordered,
        }
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(json_safe(out), indent=1) + "\n")

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for future in [pool.submit(figures_of, name) for name in names]:
            future.result()


if __name__ == "__main__":
    main()
