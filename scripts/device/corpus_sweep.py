#!/usr/bin/env python3
"""Sweep every candidate of the public-kernel corpus (scripts/cachewise_eval/corpus/corpus.json) on a GPU.

Each candidate is compiled with nvcc (-cubin for the device's sm_XY, -lineinfo, the candidate's
-D parameters; a template entry is instantiated by a generated translation unit that includes
the guarded source and takes the specialization's address), loaded with CuPy, and timed with
CUDA events: buffers filled with seeded random data, the L2 flushed before every timed launch
(a write, then a read, of a buffer of FLUSH_BYTES, so no dirty line of the flush is written back
during the kernel), WARMUPS untimed launches, then RUNS timed ones (median, min, max).

  corpus_sweep.py sweep --src DIR --work DIR --out sweep.json [--jobs 14] [--deadline-s S]
  corpus_sweep.py select --sweep sweep.json --out select.json [--predicted FILE]
  corpus_sweep.py launch --src DIR --work DIR --select select.json --order order.json
      (each selected candidate launched once, for ncu; ncu flushes caches itself)
  corpus_sweep.py dry-run --src DIR --work DIR [--compile N]
      (no GPU: enumerate, materialize, and compile N candidates per kernel with the local nvcc)
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from cachewise_eval import corpus_lib  # noqa: E402

FLUSH_BYTES = 256 << 20  # > 4x the H200's 60 MB L2
WARMUPS = 2
SEED = 20261202


def nvcc_path():
    for candidate in (os.environ.get("CACHEWISE_NVCC"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and Path(candidate).exists():
            return candidate
    raise SystemExit("corpus_sweep: no nvcc found")


# ---------------------------------------------------------------------------------------------
# Compiling


def translation_unit(source, entry):
    text = f'#include "{source}"\n'
    if "<" in entry:  # instantiate the template specialization in device code
        text += f"static void* const corpus_entry_address = (void*)&{entry};\n"
    return text


def compile_candidate(candidate, spec, kernel, root, work, arch):
    """Compile one candidate to a cubin (cached by the inputs' hash). Returns (path, error)."""
    try:
        return _compile(candidate, spec, kernel, root, work, arch)
    except Exception as error:  # a compiler that hangs or is missing fails this candidate only
        return None, f"{type(error).__name__}: {error}"[:300]


def _compile(candidate, spec, kernel, root, work, arch):
    options = [f"-arch={arch}", "-cubin", "-lineinfo", "-std=c++17", "-w"]
    options += [f"-I{d}" for d in corpus_lib.include_dirs(kernel, root)]
    options += [f"-D{name}={value}" for name, value in spec.get("defines", {}).items()]
    options += [f"-D{name}={value}" for name, value in candidate["defines"].items()]
    unit = translation_unit(spec["source"], candidate["entry"])
    key = hashlib.sha256((unit + "\0".join(options) + Path(spec["source"]).read_text(errors="replace")).encode()).hexdigest()[:20]
    folder = Path(work) / "cubin"
    folder.mkdir(parents=True, exist_ok=True)
    cubin = folder / f"{key}.cubin"
    if cubin.exists():
        return str(cubin), None
    # candidates that differ only in their scalar arguments share a cubin: each compile writes
    # files of its own and renames the cubin into place (the same bytes whichever lands last)
    unique = f"{key}.{os.getpid()}.{threading.get_ident()}"
    unit_path = folder / f"{unique}.cu"
    unit_path.write_text(unit)
    result = subprocess.run([nvcc_path(), *options, "-o", str(folder / f"{unique}.cubin"), str(unit_path)],
                            capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        lines = [line for line in (result.stderr + result.stdout).splitlines() if "error" in line] or result.stderr.splitlines() or ["?"]
        return None, lines[0][:300]
    os.replace(folder / f"{unique}.cubin", cubin)
    return str(cubin), None


def elf_function_symbols(path):
    """Names of the FUNC symbols of an ELF64 little-endian file (a cubin)."""
    data = Path(path).read_bytes()
    section_offset, = struct.unpack_from("<Q", data, 0x28)
    entry_size, count = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, section_offset + i * entry_size) for i in range(count)]
    names = []
    for _, kind, _, _, offset, size, link, _, _, symbol_size in sections:
        if kind != 2:  # SHT_SYMTAB
            continue
        strings_offset = sections[link][4]
        for at in range(offset, offset + size, symbol_size):
            name_offset, info = struct.unpack_from("<IB", data, at)
            if info & 0xF == 2:  # STT_FUNC
                end = data.index(b"\0", strings_offset + name_offset)
                names.append(data[strings_offset + name_offset:end].decode())
    return names


def _normalized(text):
    import re
    text = re.sub(r"\s+", "", text)
    text = re.sub(r"(\d+)(?:ull|ul|ll|u|l)\b", r"\1", text)
    return text


def demangle(names):
    for tool in ("c++filt", "cu++filt"):
        path = shutil.which(tool) or (str(Path(nvcc_path()).parent / tool) if (Path(nvcc_path()).parent / tool).exists() else None)
        if path:
            result = subprocess.run([path], input="\n".join(names) + "\n", capture_output=True, text=True)
            if result.returncode == 0:
                return result.stdout.splitlines()[:len(names)]
    return list(names)


def mangled_name(cubin, entry):
    """The symbol of `entry` ('reduce4<float, 256>' or 'transposeNaive') in the cubin."""
    symbols = elf_function_symbols(cubin)
    if entry in symbols:
        return entry
    wanted = _normalized(entry)
    for symbol, readable in zip(symbols, demangle(symbols)):
        name = readable.split("(", 1)[0] if "<" not in readable else readable[:readable.rindex(">") + 1]
        name = name[len("void "):] if name.startswith("void ") else name
        if _normalized(name) == wanted:
            return symbol
    base = corpus_lib.entry_base(entry)
    matches = [s for s in symbols if f"{len(base)}{base}" in s]
    if len(matches) == 1:
        return matches[0]
    raise LookupError(f"entry {entry} not among {symbols[:8]}")


# ---------------------------------------------------------------------------------------------
# Planning


def plan(src, work, kernels_wanted=None):
    corpus, kernels = corpus_lib.load_corpus()
    if kernels_wanted:
        kernels = {k: v for k, v in kernels.items() if k in kernels_wanted}
    root = Path(work) / "src"
    specs = corpus_lib.materialize(kernels, src, root)
    jobs = []
    for name, kernel in kernels.items():
        for variant, spec in specs[name].items():
            for candidate in corpus_lib.candidates(name, variant, spec):
                jobs.append((candidate, spec, kernel))
    return corpus, kernels, root, jobs


def device_arch():
    import cupy
    major, minor = cupy.cuda.Device().compute_capability[:1], cupy.cuda.Device().compute_capability[1:]
    return f"sm_{major}{minor}"


def compile_all(jobs, root, work, arch, workers):
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers)
    return pool, [pool.submit(compile_candidate, candidate, spec, kernel, root, work, arch) for candidate, spec, kernel in jobs]


# ---------------------------------------------------------------------------------------------
# Measuring


class Buffers:
    def __init__(self, cupy):
        self.cupy = cupy

    def fill(self, candidate, kernel, spec):
        """Fresh seeded contents for every buffer of the candidate (the same for every candidate)."""
        cupy = self.cupy
        data = kernel.get("data", {})
        contents = spec.get("contents", {})
        arrays = {}
        for index, (name, size) in enumerate(candidate["buffers"].items()):
            words = max(1, size // 4)
            kind = data.get(name, "f32")
            generator = cupy.random.default_rng(SEED + index)
            if name in contents:
                value = contents[name]["value"] if isinstance(contents[name], dict) else contents[name]
                arrays[name] = contents_array(cupy, value, words, candidate["bindings"])
            elif kind == "zero":
                arrays[name] = cupy.zeros(words, dtype=cupy.uint32)
            elif kind.startswith("i32:"):  # integers uniform in [low, high)
                low, high = (int(v) for v in kind.split(":")[1:])
                arrays[name] = (generator.random(words, dtype=cupy.float32) * (high - low) + low).astype(cupy.int32)
            else:
                arrays[name] = generator.random(words, dtype=cupy.float32)
        return arrays


def contents_array(cupy, expression, words, bindings):
    """Element i = expression (the spec's contents grammar) for i < words, as uint32 (the
    histogram's declared data). Only + - * % / of non-negative integers are used, so the
    expression is evaluated on the device in uint64 with the same truncating division."""
    i = cupy.arange(words, dtype=cupy.uint64)
    names = {k: cupy.uint64(v) for k, v in bindings.items()}
    names["i"] = i
    python = expression.replace("/", "//")
    value = eval(python, {}, names)  # the corpus's own expression (corpus.json), not user input
    return (value % (1 << 32)).astype(cupy.uint32)


def kernel_arguments(cupy, kernel, candidate, arrays):
    values = []
    for name, kind in kernel["signature"]:
        if kind == "ptr":
            values.append(arrays[name])
            continue
        raw = candidate["bindings"][name]
        if kind == "f32":
            values.append(cupy.float32(struct.unpack("<f", struct.pack("<i", raw))[0]))
        elif kind == "u32":
            values.append(cupy.uint32(raw))
        else:
            values.append(cupy.int32(raw))
    return tuple(values)


def set_constants(cupy, module, kernel):
    for name, count in kernel.get("constants", {}).items():
        pointer = module.get_global(name)
        values = cupy.random.default_rng(SEED).random(count, dtype=cupy.float32) / count
        cupy.cuda.runtime.memcpy(pointer.ptr, values.data.ptr, count * 4, cupy.cuda.runtime.memcpyDeviceToDevice)


def measure(cupy, function, grid, block, shared, arguments, flush, runs):
    stream = cupy.cuda.get_current_stream()
    pairs = []
    for r in range(WARMUPS + runs):
        cupy.cuda.runtime.memsetAsync(flush.data.ptr, r & 0xFF, flush.nbytes, stream.ptr)
        flush.sum()  # read back: the lines left in L2 are clean
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record(stream)
        function(tuple(grid), tuple(block), arguments, shared_mem=shared)
        end.record(stream)
        pairs.append((start, end))
    end.synchronize()
    times_us = [cupy.cuda.get_elapsed_time(s, e) * 1000.0 for s, e in pairs[WARMUPS:]]
    return times_us


def runs_for(first_us):
    return 15 if first_us < 1000 else 9 if first_us < 10000 else 7


def sweep(args):
    import cupy
    started = time.time()
    arch = device_arch()
    corpus, kernels, root, jobs = plan(args.src, args.work, args.kernels)
    pool, futures = compile_all(jobs, root, args.work, arch, args.jobs)
    flush = cupy.empty(FLUSH_BYTES // 4, dtype=cupy.float32)
    buffers = Buffers(cupy)
    device = cupy.cuda.runtime.getDeviceProperties(0)
    results = {"meta": {"device": device["name"].decode(), "arch": arch, "sm_count": device["multiProcessorCount"],
                        "l2_bytes": device["l2CacheSize"], "flush_bytes": FLUSH_BYTES, "warmups": WARMUPS, "seed": SEED,
                        "cupy": cupy.__version__, "nvcc": subprocess.run([nvcc_path(), "--version"], capture_output=True,
                                                                          text=True).stdout.strip().splitlines()[-1],
                        "started_unix": started, "repositories": corpus["repositories"]},
               "kernels": {}}
    modules = {}
    previous_kernel = None
    for (candidate, spec, kernel), future in zip(jobs, futures):
        if candidate["kernel"] != previous_kernel:  # keep what is measured if the call is cut short
            Path(args.out).write_text(json.dumps(results, indent=1))
            previous_kernel = candidate["kernel"]
        record = {k: candidate[k] for k in ("variant", "id", "entry", "params", "grid", "block", "threads_per_block", "shared_bytes")}
        entry = results["kernels"].setdefault(candidate["kernel"], {"half": kernel["half"], "spec": kernel["spec"], "candidates": []})
        entry["candidates"].append(record)
        if args.deadline_s and time.time() - started > args.deadline_s:
            record["status"] = "skipped: deadline"
            continue
        cubin, error = future.result()
        if error:
            record["status"] = "compile error: " + error
            continue
        try:
            module = modules.setdefault(cubin, cupy.RawModule(path=cubin))
            function = module.get_function(mangled_name(cubin, candidate["entry"]))
            record["registers"] = function.num_regs
            record["local_bytes"] = function.local_size_bytes
            record["static_shared_bytes"] = function.shared_size_bytes
            set_constants(cupy, module, kernel)
            arrays = buffers.fill(candidate, kernel, spec)
            arguments = kernel_arguments(cupy, kernel, candidate, arrays)
            first = measure(cupy, function, candidate["grid"], candidate["block"], candidate["shared_bytes"], arguments, flush, 1)
            runs = runs_for(first[0])
            times = measure(cupy, function, candidate["grid"], candidate["block"], candidate["shared_bytes"], arguments, flush, runs)
            record.update(median_us=round(statistics.median(times), 3), min_us=round(min(times), 3),
                          max_us=round(max(times), 3), runs=len(times), status="ok")
            del arrays, arguments
        except Exception as error:  # a launch failure is recorded, the sweep goes on
            record["status"] = f"error: {type(error).__name__}: {str(error)[:200]}"
            try:
                cupy.cuda.runtime.deviceSynchronize()
            except Exception:
                pass
        cupy.get_default_memory_pool().free_all_blocks()
    pool.shutdown(wait=False, cancel_futures=True)
    results["meta"]["seconds"] = round(time.time() - started, 1)
    Path(args.out).write_text(json.dumps(results, indent=1))
    for name, entry in results["kernels"].items():
        ok = [c for c in entry["candidates"] if c.get("status") == "ok"]
        best = min(ok, key=lambda c: c["median_us"]) if ok else None
        print(f"{name:18s} {entry['half']:9s} {len(ok):3d}/{len(entry['candidates']):3d} ok"
              + (f"  best {best['id']} {best['median_us']:.1f} us" if best else ""), flush=True)
    print(f"sweep: {results['meta']['seconds']} s", flush=True)


def select(args):
    """Per kernel: the measured best, the median candidate and the slowest (plus, when given, the
    predicted top 3 of --predicted {kernel: [candidate id, ...]}); with --all every candidate."""
    data = json.loads(Path(args.sweep).read_text())
    predicted = json.loads(Path(args.predicted).read_text()) if args.predicted else {}
    chosen = {}
    for name, entry in data["kernels"].items():
        ok = sorted((c for c in entry["candidates"] if c.get("status") == "ok"), key=lambda c: c["median_us"])
        if not ok:
            continue
        ids = [ok[0]["id"], ok[len(ok) // 2]["id"], ok[-1]["id"]] + list(predicted.get(name, [])[:3])
        if args.all:
            ids = [c["id"] for c in ok]
        chosen[name] = list(dict.fromkeys(ids))
    Path(args.out).write_text(json.dumps(chosen, indent=1))
    print(f"select: {sum(len(v) for v in chosen.values())} candidates of {len(chosen)} kernels")


def launch(args):
    """Launch each selected candidate once, in a fixed order (written to --order) for ncu."""
    import cupy
    chosen = json.loads(Path(args.select).read_text())
    corpus, kernels, root, jobs = plan(args.src, args.work, list(chosen))
    arch = device_arch()
    buffers = Buffers(cupy)
    order = []
    for candidate, spec, kernel in jobs:
        if candidate["id"] not in chosen.get(candidate["kernel"], []):
            continue
        cubin, error = compile_candidate(candidate, spec, kernel, root, args.work, arch)
        if error:
            continue
        module = cupy.RawModule(path=cubin)
        function = module.get_function(mangled_name(cubin, candidate["entry"]))
        set_constants(cupy, module, kernel)
        arrays = buffers.fill(candidate, kernel, spec)
        cupy.cuda.runtime.deviceSynchronize()
        function(tuple(candidate["grid"]), tuple(candidate["block"]), kernel_arguments(cupy, kernel, candidate, arrays),
                 shared_mem=candidate["shared_bytes"])
        cupy.cuda.runtime.deviceSynchronize()
        order.append({"kernel": candidate["kernel"], "id": candidate["id"], "entry": candidate["entry"]})
        del arrays
        cupy.get_default_memory_pool().free_all_blocks()
    Path(args.order).write_text(json.dumps(order, indent=1))
    print(f"launch: {len(order)} candidates launched")


def dry_run(args):
    corpus, kernels, root, jobs = plan(args.src, args.work, args.kernels)
    by_kernel = {}
    for candidate, spec, kernel in jobs:
        by_kernel.setdefault(candidate["kernel"], []).append((candidate, spec, kernel))
    print(f"dry-run: {len(jobs)} candidates in {len(by_kernel)} kernels")
    for name, items in by_kernel.items():
        print(f"  {name:18s} {kernels[name]['half']:9s} {len(items):3d} candidates, e.g. {items[0][0]['id']} "
              f"grid {items[0][0]['grid']} block {items[0][0]['block']} entry {items[0][0]['entry']}")
        picked = items[:args.compile] + (items[-1:] if args.compile and len(items) > args.compile else [])
        for candidate, spec, kernel in picked:
            cubin, error = compile_candidate(candidate, spec, kernel, root, args.work, args.arch)
            symbol = mangled_name(cubin, candidate["entry"]) if cubin else None
            print(f"    compile {candidate['id']}: {error or 'ok'} {symbol or ''}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["sweep", "select", "launch", "dry-run"])
    parser.add_argument("--src", help="folder holding the fetched repositories (cuda-samples, PolyBench-ACC, gpu-rodinia)")
    parser.add_argument("--work", default="/tmp/corpus-work")
    parser.add_argument("--out")
    parser.add_argument("--jobs", type=int, default=14)
    parser.add_argument("--deadline-s", type=float, default=0)
    parser.add_argument("--kernels", nargs="*")
    parser.add_argument("--sweep")
    parser.add_argument("--predicted")
    parser.add_argument("--all", action="store_true", help="select: every candidate that ran")
    parser.add_argument("--select")
    parser.add_argument("--order")
    parser.add_argument("--compile", type=int, default=0)
    parser.add_argument("--arch", default="sm_90")
    args = parser.parse_args()
    {"sweep": sweep, "select": select, "launch": launch, "dry-run": dry_run}[args.mode](args)


if __name__ == "__main__":
    main()
