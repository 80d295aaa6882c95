#!/usr/bin/env python3
"""Ranks the benchmark kernels of this folder with `advisor suggest --spec` and prints a table:
cold (empty compile cache) and warm (cache filled) wall seconds and each run's peak resident
memory, plus the built-in `suggest` cases. A run over the cap is killed and shown as "> CAP s".

usage: kernel_bench.py --advisor build/bin/advisor [--profile profiles/h200.json]
                       [--cap-s 180] [--warm-runs 3] [--only NAME,...]
"""
import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# name, advisor arguments after the profile (spec files are relative to this folder)
KERNEL_CASES = [
    ("gemm n=4096 (36)", ["--spec", "gemm_register_tiled.json"]),
    ("grid-stride sum 800M (396)", ["--spec", "sum_grid_stride.json"]),
    ("convolution 17x17 4096^2 (151)", ["--spec", "convolution_17x17.json"]),
    ("jacobi, kernel only (20)", ["--spec", "jacobi_kernel_only.json"]),
    ("jacobi, with host code (20)", ["--spec", "jacobi_with_host.json"]),
]


def builtin_cases(repo):
    transpose = repo / "examples" / "kernels" / "transpose.json"
    return [
        ("transpose n=4096, 1 candidate", ["--spec", str(transpose), "--param", "TILE_DIM=32", "--param", "BLOCK_ROWS=8",
                                           "--param", "PAD=1"]),
        ("suggest stencil3d n=256", ["--pattern", "stencil3d", "--n", "256"]),
        ("suggest gemm n=2048", ["--pattern", "gemm", "--n", "2048"]),
    ]


def run_once(command, env, cap_s):
    """(wall seconds or None when over the cap, peak RSS MiB, exit code)."""
    start = time.monotonic()
    child = subprocess.Popen(command, env=env, cwd=HERE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             start_new_session=True)
    deadline = start + cap_s
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            wall = time.monotonic() - start
            child.returncode = os.waitstatus_to_exitcode(status)
            err = child.stderr.read().decode(errors="replace").strip().splitlines()
            if child.returncode != 0:
                print(f"  exit {child.returncode}: {err[-1] if err else ''}", file=sys.stderr)
            return wall, usage.ru_maxrss / 1024, child.returncode
        if time.monotonic() > deadline:
            os.killpg(child.pid, signal.SIGKILL)
            _, _, usage = os.wait4(child.pid, 0)
            return None, usage.ru_maxrss / 1024, -9
        time.sleep(0.05)


def fmt_wall(wall, cap_s):
    return f"> {cap_s:.0f} s" if wall is None else f"{wall:.2f} s"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--advisor", required=True)
    parser.add_argument("--profile", default=None)
    parser.add_argument("--cap-s", type=float, default=180)
    parser.add_argument("--warm-runs", type=int, default=3)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    repo = HERE.parent.parent
    advisor = str(Path(args.advisor).resolve())
    profile = str(Path(args.profile).resolve()) if args.profile else str(repo / "profiles" / "h200.json")
    only = [s for s in args.only.split(",") if s]
    print(f"load average at start: {os.getloadavg()[0]:.2f}; cap {args.cap_s:.0f} s; warm: median of {args.warm_runs}")
    print("| case | cold wall | cold peak RSS | warm wall (median) | warm peak RSS |")
    print("|---|---|---|---|---|")
    cases = [(n, a, True) for n, a in KERNEL_CASES] + [(n, a, False) for n, a in builtin_cases(repo)]
    for name, case_args, compiles in cases:
        if only and not any(o in name for o in only):
            continue
        command = [advisor, "suggest", "--profile", profile, "--top", "3"] + case_args
        with tempfile.TemporaryDirectory(prefix="cachewise-bench-") as cache:
            env = dict(os.environ, CACHEWISE_CACHE_DIR=cache)
            cold = ("—", "—")
            if compiles:
                wall, rss, _ = run_once(command, env, args.cap_s)
                cold = (fmt_wall(wall, args.cap_s), f"{rss:.0f} MiB")
                if wall is None:  # the warm run would only hit the cap again
                    print(f"| {name} | {cold[0]} | {cold[1]} | — | — |", flush=True)
                    continue
            walls, peaks = [], []
            for _ in range(max(1, args.warm_runs)):
                wall, rss, _ = run_once(command, env, args.cap_s)
                peaks.append(rss)
                if wall is None:
                    walls = None
                    break
                walls.append(wall)
            warm = fmt_wall(None if walls is None else statistics.median(walls), args.cap_s)
            print(f"| {name} | {cold[0]} | {cold[1]} | {warm} | {max(peaks):.0f} MiB |", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
