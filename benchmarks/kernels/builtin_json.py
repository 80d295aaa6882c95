#!/usr/bin/env python3
"""Writes `advisor suggest --json --top 1000` of every built-in family in f32, f64 and f16 (the
sizes of docs/advisor.md's performance table) and of the example kernel specs into OUT_DIR, with
`elapsed_ms` removed, so that two builds' outputs can be compared with `diff -r`.

usage: builtin_json.py --advisor build/bin/advisor --out OUT_DIR
"""
import argparse
import json
import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
FAMILIES = [("transpose", "4096"), ("copy", "16777216"), ("stencil2d", "4096"), ("stencil3d", "256"), ("gemm", "2048")]
SPECS = ["examples/kernels/transpose.json", "examples/kernels/transpose_template.json", "examples/kernels/spmv.json"]


def strip(value):
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k != "elapsed_ms"}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--advisor", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    profile = str(REPO / "profiles" / "h200.json")
    runs = [(f"{family}-{n}-{dtype}", ["--pattern", family, "--n", n, "--dtype", dtype])
            for family, n in FAMILIES for dtype in ("f32", "f64", "f16")]
    runs += [(Path(spec).stem, ["--spec", str(REPO / spec)]) for spec in SPECS]
    for name, case in runs:
        command = [str(Path(args.advisor).resolve()), "suggest", "--profile", profile, "--json", "--top", "1000"] + case
        result = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ))
        text = json.dumps(strip(json.loads(result.stdout)), indent=1, sort_keys=True) if result.returncode == 0 else result.stderr
        (out / f"{name}.json").write_text(text + "\n")
        print(name, "exit", result.returncode, flush=True)


if __name__ == "__main__":
    main()
