#!/usr/bin/env python3
"""What a block costs an SM on the GPU, for the time model's `blocks` term (issue 37).

Three CuPy experiments, each timed with CUDA events (warm-up, then the median of REPEATS
launches, min and max kept) and, where the kernel can, counted in cycles with clock64():
  dispatch  empty blocks: N = SMs x k blocks of T threads; the slope of time over blocks per SM
            is what retiring one block and starting the next costs when blocks do nothing;
  overlap   the same total work (threads x FMA chain) cut into blocks of T threads: how much of
            the dispatch cost stays exposed once blocks carry work and several are resident;
  barrier   K __syncthreads() in a loop, one block per SM and RESIDENT blocks per SM: SM cycles per
            barrier (clock64 on thread 0 around the loop, median over blocks).
Usage (on the GPU machine): python3 scripts/device/block_costs.py OUT_DIR
Writes OUT_DIR/block-costs.json and prints a table. Never sets clocks; it reads them.
"""
import json
import statistics
import subprocess
import sys

import cupy as cp

REPEATS = 21
SOURCE = r"""
extern "C" __global__ void empty_blocks(int* sink, int flag) {
  if (flag == 12345 && threadIdx.x == 0) sink[blockIdx.x] = 1;  // never true: keeps the kernel
}
extern "C" __global__ void fma_chain(float* sink, int steps) {
  float x = threadIdx.x * 1e-3f, y = 1.0f;
  for (int i = 0; i < steps; ++i) y = fmaf(y, x, 0.5f);
  if (y == 12345.0f) sink[blockIdx.x] = y;                       // never true: keeps the chain
}
extern "C" __global__ void barriers(long long* cycles, int count) {
  __shared__ int word;
  if (threadIdx.x == 0) word = 0;
  __syncthreads();
  long long start = clock64();
  for (int i = 0; i < count; ++i) {
    if (threadIdx.x == (i & (blockDim.x - 1))) word += 1;
    __syncthreads();
  }
  long long end = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = end - start;
}
"""


def clocks():
    query = ["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,clocks.max.sm", "--format=csv,noheader,nounits"]
    try:
        return subprocess.run(query, capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"nvidia-smi failed: {error}"


def time_us(kernel, grid, block, args):
    start, end = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(3):
        kernel((grid,), (block,), args)
    samples = []
    for _ in range(REPEATS):
        start.record()
        kernel((grid,), (block,), args)
        end.record()
        end.synchronize()
        samples.append(cp.cuda.get_elapsed_time(start, end) * 1e3)
    return {"median_us": statistics.median(samples), "min_us": min(samples), "max_us": max(samples)}


def slope(points):
    """Least-squares slope and intercept of (x, y) points."""
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in points)
    return sxy / sxx, mean_y - sxy / sxx * mean_x


def main():
    out_dir = sys.argv[1]
    device = cp.cuda.Device(0)
    attributes = device.attributes
    sms = attributes["MultiProcessorCount"]
    clock_mhz = attributes["ClockRate"] / 1000.0
    module = cp.RawModule(code=SOURCE, options=("-arch=sm_90",))
    empty, fma, barrier = (module.get_function(name) for name in ("empty_blocks", "fma_chain", "barriers"))
    sink = cp.zeros(1 << 22, dtype=cp.float32)
    result = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "sms": sms,
              "clock_rate_attribute_mhz": clock_mhz, "clocks_before": clocks(), "repeats": REPEATS}

    dispatch = []
    for threads in (32, 128, 256, 512, 1024):
        rows = []
        for per_sm in (8, 16, 32, 64, 128, 256):
            timing = time_us(empty, sms * per_sm, threads, (sink, cp.int32(0)))
            rows.append({"blocks_per_sm": per_sm, **timing})
        us_per_block, intercept_us = slope([(r["blocks_per_sm"], r["median_us"]) for r in rows])
        dispatch.append({"threads": threads, "rows": rows, "us_per_block_per_sm": us_per_block, "intercept_us": intercept_us})
    result["dispatch"] = dispatch

    overlap = []
    total_threads = sms * 2048 * 8
    for steps in (64, 512):
        for threads in (32, 64, 128, 256, 512, 1024):
            timing = time_us(fma, total_threads // threads, threads, (sink, cp.int32(steps)))
            overlap.append({"fma_steps": steps, "threads": threads, "blocks": total_threads // threads, **timing})
    result["overlap"] = overlap

    barrier_rows = []
    count = 4096
    cycles = cp.zeros(sms * 16, dtype=cp.int64)
    for threads in (32, 64, 128, 256, 512, 1024):
        for per_sm in (1, 4):
            if threads * per_sm > 2048:
                continue
            grid = sms * per_sm
            barrier((grid,), (threads,), (cycles, cp.int32(count)))
            cp.cuda.runtime.deviceSynchronize()
            per_block = cp.asnumpy(cycles[:grid]).tolist()
            timing = time_us(barrier, grid, threads, (cycles, cp.int32(count)))
            barrier_rows.append({"threads": threads, "blocks_per_sm": per_sm, "barriers": count,
                                 "cycles_per_barrier_median": statistics.median(per_block) / count,
                                 "cycles_per_barrier_min": min(per_block) / count,
                                 "cycles_per_barrier_max": max(per_block) / count, **timing})
    result["barrier"] = barrier_rows
    result["clocks_after"] = clocks()

    with open(f"{out_dir}/block-costs.json", "w") as file:
        json.dump(result, file, indent=1)
    print(f"{result['device']}, {sms} SMs; clocks (sm, mem, max sm MHz) before: {result['clocks_before']}, after: {result['clocks_after']}")
    print("dispatch: empty blocks, time over blocks per SM")
    for row in dispatch:
        print(f"  {row['threads']:5d} threads: {row['us_per_block_per_sm'] * 1e3:8.1f} ns per block per SM, intercept {row['intercept_us']:.2f} us; "
              + ", ".join(f"{r['blocks_per_sm']}:{r['median_us']:.1f}" for r in row["rows"]))
    print("overlap: the same work in blocks of T threads (median us)")
    for row in overlap:
        print(f"  {row['fma_steps']:4d} FMA steps, {row['threads']:5d} threads x {row['blocks']:6d} blocks: {row['median_us']:9.2f} "
              f"({row['min_us']:.2f}-{row['max_us']:.2f})")
    print("barrier: SM cycles per __syncthreads (clock64, median over blocks)")
    for row in barrier_rows:
        print(f"  {row['threads']:5d} threads, {row['blocks_per_sm']} block(s)/SM: {row['cycles_per_barrier_median']:6.1f} "
              f"({row['cycles_per_barrier_min']:.1f}-{row['cycles_per_barrier_max']:.1f})")


if __name__ == "__main__":
    main()
