#!/usr/bin/env python3
"""Renders tests/data/recorded/figures.json (cachewise_eval.held_out) as the Markdown section
that leads docs/validation-h200.md: held-out figures first, in-sample beside them, the unfitted
counters over every recorded run.

    python3 -m cachewise_eval.render_held_out [FIGURES.json]   # prints the section

scripts/device/render_validation.py puts the same section at the head of each new report.
"""
import json
import os
import sys

DEFAULT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "recorded", "figures.json")
FAMILIES = ["transpose", "copy", "stencil2d", "stencil3d", "gemm", "all"]


def ratio(summary, family, key):
    entry = summary.get(family)
    return "-" if entry is None else f"{entry[key]:.3f}"


def percent(summary, family):
    entry = summary.get(family)
    return "-" if entry is None else f"{100 * entry['top_time_error_mean']:.1f}%"


def changed(adopted, point):
    """What a grid point changes from the adopted values, e.g. "memory_levels_combine_exponent 32"."""
    return ", ".join(f"{key} {value:g}" for key, value in sorted(point.items()) if adopted[key] != value)


def held_out_section(figures):
    splits = figures["splits"]
    size, family = splits["leave_one_size_out"]["held_out"], splits["leave_one_family_out"]["held_out"]
    adopted = figures["adopted"]["figures"]
    lines = ["## Accuracy on cases the model was not fitted on", "",
             "Every recorded H200 run whose kernels match today's (tests/data/recorded: runs 11-21, stencil3d "
             "from run 21 only) replayed through today's model by cachewise_eval.held_out, which computes "
             "these figures. Held out: the calibration's values (docs/calibration.md) chosen without the case, "
             "among the adopted ones and " + "; ".join(changed(figures["grid"][0], p) for p in figures["grid"][1:])
             + ", by " + figures["objective"] + ".",
             "",
             "Top-1/best: the measured time of the model's top-1 over the fastest measured config of the "
             "same run (median and worst over the family's runs and sizes). Time error: mean |predicted / "
             "measured - 1| over each run's predicted top 32 (the configs suggest refines).",
             "",
             "| family | top-1/best held out, size (median / worst) | held out, family | in-sample (adopted) | "
             "time error held out, size | held out, family | in-sample | (run, case) pairs |",
             "|---|---|---|---|---|---|---|---|"]
    for name in FAMILIES:
        lines.append(
            f"| {name} | {ratio(size, name, 'top1_over_best_median')} / {ratio(size, name, 'top1_over_best_worst')} "
            f"| {ratio(family, name, 'top1_over_best_median')} / {ratio(family, name, 'top1_over_best_worst')} "
            f"| {ratio(adopted, name, 'top1_over_best_median')} / {ratio(adopted, name, 'top1_over_best_worst')} "
            f"| {percent(size, name)} | {percent(family, name)} | {percent(adopted, name)} | {adopted[name]['pairs']} |")
    lines += ["", "Values chosen per fold:", ""]
    for split, content in splits.items():
        for fold in content["folds"]:
            chosen = changed(figures["grid"][0], fold["chosen"]) or "the adopted values"
            lines.append(f"- {split.replace('_', ' ')}, {fold['fold']}: {chosen}")
    chosen = changed(figures["grid"][0], figures["in_sample"]["chosen"]) or "the adopted values"
    lines += [f"- in-sample fit on every case: {chosen} (profiles/h200.json keeps "
              f"`{figures['adopted']['calibration']}`)", ""]
    bands = figures["time_error_bands"]
    lines += ["Error bands that `suggest` and `simulate` print (measured / predicted, 10th-90th percentile of the "
              "held-out predicted top 10; `all` for a custom kernel): " + ", ".join(
                  f"{name} {band['low_ratio']:.3f}-{band['high_ratio']:.3f}" for name, band in sorted(bands.items())) + ".",
              "", "Counters the calibration does not touch, over every profiled config of every recorded run "
              "(validate profiles each case's predicted top 3, measured best and predicted worst):", "",
              "| counter | configs | MAE | relative error median / worst | worst config (run, case) |",
              "|---|---|---|---|---|"]
    for name, counter in figures["adopted"]["counters"].items():
        worst = counter["worst"][0]
        relative = ("-" if counter["relative_error_median"] is None
                    else f"{100 * counter['relative_error_median']:.1f}% / {100 * counter['relative_error_worst']:.1f}%")
        lines.append(f"| {name} | {counter['configs']} | {counter['mae']:,.3f} | {relative} | `{worst['config']}` "
                     f"({worst['run']}, {worst['case']}): {worst['predicted']:,.2f} vs {worst['measured']:,.2f} |")
    lines.append("")
    return lines


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else DEFAULT
    with open(path) as f:
        print("\n".join(held_out_section(json.load(f))))


if __name__ == "__main__":
    main()
