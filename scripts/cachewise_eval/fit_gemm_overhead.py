#!/usr/bin/env python3
"""Fits the compiled gemm's overhead instructions (the profile calibration's gemm_overhead,
docs/calibration.md) to measured smsp__inst_executed.sum: per warp, overhead = measured - the model's
memory + FMA count (run with a model that declares no gemm overhead, as the committed runs did)
= k-steps x (bk x inner[tm, tn] + tile elements per thread x per_element + per_step).
The committed runs counted one shared load per fragment element and kk; the model now issues the
compiled kernel's (model/data/kernel_facts_sm90.json: fragment_loads per kk_per_group kk, merged
along kk), so each run's count is lowered by the loads nvcc merged away before the fit.
Needs numpy (Debian: python3-numpy).
Usage: python3 -m cachewise_eval.fit_gemm_overhead [measurements/instructions]
"""
import glob
import json
import sys

import numpy as np


def merged_away_per_kk(facts_path="model/data/kernel_facts_sm90.json"):
    """(tm, tn) -> the f32 kernel's shared loads per kk fewer than tm + tn."""
    with open(facts_path) as file:
        kernels = json.load(file)["kernels"]
    merged = {}
    for k in kernels:
        if k["kernel"].startswith("gemm_tiled<float, "):
            tm, tn = (int(v) for v in k["kernel"][len("gemm_tiled<float, "):-1].split(", "))
            merged[(tm, tn)] = tm + tn - len(k["fragment_loads"]) / k["kk_per_group"]
    return merged


def configs(folder):
    merged = merged_away_per_kk()
    for path in sorted(glob.glob(f"{folder}/gemm-*.json")):
        with open(path) as file:
            data = json.load(file)
        n = data["problem"]["n"]
        for candidate in data["candidates"]:
            measured = candidate.get("measured", {}).get("metrics")
            if not measured or "smsp__inst_executed.sum" not in measured:
                continue
            c = {k: int(v) for k, v in (kv.split("=") for kv in candidate["config"].split(","))}
            threads = (c["bm"] // c["tm"]) * (c["bn"] // c["tn"])
            yield {"name": f"n={n} {candidate['config']}", "tile": (c["tm"], c["tn"]), "bk": c["bk"],
                   "warps": (n // c["bm"]) * (n // c["bn"]) * threads / 32, "steps": n // c["bk"],
                   "elements": (c["bm"] + c["bn"]) * c["bk"] / threads,
                   "measured": measured["smsp__inst_executed.sum"],
                   "counted": candidate["predicted"]["metrics"]["smsp__inst_executed.sum"]
                   - (n // c["bm"]) * (n // c["bn"]) * threads / 32 * n * merged[(c["tm"], c["tn"])]}


def main():
    rows = list(configs(sys.argv[1] if len(sys.argv) > 1 else "measurements/instructions"))
    tiles = sorted({r["tile"] for r in rows})
    index = {t: i for i, t in enumerate(tiles)}
    features = np.zeros((len(rows), len(tiles) + 2))
    for i, r in enumerate(rows):
        features[i, index[r["tile"]]] = r["steps"] * r["bk"]
        features[i, len(tiles)] = r["steps"] * r["elements"]
        features[i, len(tiles) + 1] = r["steps"]
    per_warp = np.array([(r["measured"] - r["counted"]) / r["warps"] for r in rows])
    fit = np.linalg.lstsq(features, per_warp, rcond=None)[0]
    errors = [abs(features[i] @ fit * r["warps"] + r["counted"] - r["measured"]) / r["measured"] for i, r in enumerate(rows)]
    print(f"{len(rows)} configs; per tile element {fit[len(tiles)]:.1f}, per k-step {fit[len(tiles) + 1]:.1f}")
    print("per inner-product step, tm x tn:", ", ".join(f"{t[0]}x{t[1]} {fit[index[t]]:.1f}" for t in tiles))
    print(f"error of the total: mean {100 * np.mean(errors):.1f}%, worst {100 * max(errors):.1f}% "
          f"({rows[int(np.argmax(errors))]['name']})")


if __name__ == "__main__":
    main()
