#!/usr/bin/env python3
"""Issue 35's public-code table: every kernel of the fetched repositories that a spec here
describes, run through `advisor suggest --spec S --json` unmodified except the #ifndef guards of
scripts/cachewise_eval/corpus/corpus.json, cold (empty cache) and warm (the same cache again).

  python3 -m cachewise_eval.ingest --advisor build/bin/advisor --src .corpus-src \
      [--work /tmp/ingest] [--timeout-s 600] [--out measurements/public-kernels.md]

The specs are the corpus's (scripts/cachewise_eval/corpus/specs, one per variant) and scripts/cachewise_eval/corpus/public.json
(more kernels of the same repositories, at the authors' default parameters). Include folders
are passed as `-I`, template entries as written (`reduce6<float, THREADS, true>`). Each failure is
classified by its first error line.
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cachewise_eval import corpus_lib

DATA_DEPENDENT = "data-dependent addresses or branches (declare contents)"
# First error line -> why the kernel does not go in.
REASONS = [
    (r"cannot open source file|No such file or directory|fatal error: .*\.h", "an include folder not found"),
    (r"depends on a value loaded from memory", DATA_DEPENDENT),
    (r"cudaDeviceProp.* has no member", "the file's host code does not compile with this CUDA"),
    (r"undeclared register|ptx:\d+", "PTX the extractor does not read"),
    (r"unsupported|not supported", "an instruction or construct the extractor does not follow"),
    (r"outside the block's \d+ bytes", "a shared-memory access outside the block's allocation"),
    (r"outside every buffer", "the source reads or writes outside a buffer (as compute-sanitizer's memcheck would report)"),
    (r"too long to trace", "every candidate's block is too long to trace"),
    (r"timed out", "over the time limit"),
]


def limit_candidates(spec, name, variant, most):
    """The spec with a constraint keeping `most` of its candidates, spread over its list (first,
    last, evenly between): a quicker table with the full parameter lists shown."""
    candidates = corpus_lib.candidates(name, variant, spec)
    if most <= 0 or len(candidates) <= most:
        return spec, len(candidates), len(candidates)
    picked = [candidates[round(i * (len(candidates) - 1) / (most - 1))] for i in range(most)] if most > 1 else candidates[:1]
    choice = " || ".join("(" + " && ".join(f"{k} == {v}" for k, v in c["params"].items()) + ")" for c in picked)
    return dict(spec, constraints=list(spec.get("constraints", [])) + [choice]), most, len(candidates)


def public_kernels(src_root, work, most):
    """(name, spec path, include folders) for the corpus's variant specs and public.json's."""
    _, kernels = corpus_lib.load_corpus()
    public = json.loads((corpus_lib.CORPUS_DIR / "public.json").read_text())["kernels"] if (corpus_lib.CORPUS_DIR / "public.json").exists() else {}
    extra = {}
    for name, entry in public.items():
        spec = dict(entry["spec"])
        kernel = {"specs": {"": spec}, "guards": entry.get("guards", {}), "include_dirs": entry.get("include_dirs", [])}
        extra[name] = kernel
    # one materialization for all: the guards go on after every folder is copied
    everything = corpus_lib.materialize({**kernels, **{"public " + n: k for n, k in extra.items()}}, src_root, Path(work) / "src")
    runnable = {name: everything[name] for name in kernels}
    runnable_extra = {name: everything["public " + name] for name in extra}
    items = []
    specs_dir = Path(work) / "specs"
    specs_dir.mkdir(parents=True, exist_ok=True)
    for group, specs, table in (("corpus", runnable, kernels), ("public", runnable_extra, extra)):
        for name, variants in specs.items():
            for variant, spec in variants.items():
                label = name + (f"/{variant}" if variant else "")
                path = specs_dir / (label.replace("/", "--") + ".json")
                spec, kept, total = limit_candidates(spec, name, variant, most)
                path.write_text(json.dumps(spec, indent=1))
                original = table[name]["specs"][variant]["source"]
                items.append({"name": label, "group": group, "spec": path, "source": original, "entry": spec["entry"],
                              "parameters": spec.get("parameters", {}), "candidates": f"{kept}/{total}",
                              "includes": corpus_lib.include_dirs(table[name], Path(work) / "src"),
                              "guards": sorted({n for names in table[name].get("guards", {}).values() for n in names})})
    return items


def run_once(advisor, item, cache_dir, timeout_s, profile):
    command = [advisor, "suggest", "--spec", str(item["spec"]), "--json", "--top", "3"]
    if profile:
        command += ["--profile", profile]
    for folder in item["includes"]:
        command += ["-I", folder]
    environment = dict(os.environ, CACHEWISE_CACHE_DIR=str(cache_dir))
    started = time.time()
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, env=environment)
    except subprocess.TimeoutExpired:
        return False, time.time() - started, f"timed out after {timeout_s} s"
    seconds = time.time() - started
    if result.returncode != 0:
        lines = [line for line in result.stderr.splitlines() if line.strip()] or ["exit code %d" % result.returncode]
        errors = [line for line in lines if "error" in line.lower()]
        return False, seconds, (errors or lines)[0][:240]
    return True, seconds, ""


def classify(error):
    for pattern, reason in REASONS:
        if re.search(pattern, error):
            return reason
    return ""


def write_table(rows, out, command, commit, load, most):
    worked = [r for r in rows if r["worked"]]
    address_only = [r for r in rows if r["reason"] != DATA_DEPENDENT]
    candidates = ("every candidate of each spec" if most <= 0 else
                  f"at most {most} candidate{'s' if most > 1 else ''} of each spec (spread over its list; "
                  "'candidates run' says how many of how many), not the full spaces")
    lines = [
        "# Public kernels through `advisor suggest`",
        "",
        "Kernels of NVIDIA/cuda-samples, PolyBench-ACC and Rodinia (fetched, never committed; commits in",
        "scripts/cachewise_eval/corpus/corpus.json) run unmodified except `#ifndef` guards around the constants a user",
        "tunes (scripts/cachewise_eval/corpus/corpus.json `guards`). The specs: scripts/cachewise_eval/corpus/specs (the measured corpus of",
        "issue 37, one row per variant) and scripts/cachewise_eval/corpus/public.json. Cold: an empty cache; warm: the same",
        "cache again. 'reason' classifies the first error line.",
        "",
        f"Command: `{command}`; tree {commit}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {load}. "
        f"Run: {candidates}.",
        "",
        f"**{len(worked)} of {len(rows)} go in** "
        f"({sum(r['group'] == 'corpus' and r['worked'] for r in rows)} of {sum(r['group'] == 'corpus' for r in rows)} corpus specs, "
        f"{sum(r['group'] == 'public' and r['worked'] for r in rows)} of {sum(r['group'] == 'public' for r in rows)} others); "
        f"of the {len(address_only)} whose addresses do not depend on loaded data, "
        f"{sum(r['worked'] for r in address_only)} ({100 * sum(r['worked'] for r in address_only) / max(1, len(address_only)):.0f}%).",
        "",
    ]
    reasons = {}
    for r in rows:
        if not r["worked"]:
            reasons[r["reason"] or "other"] = reasons.get(r["reason"] or "other", 0) + 1
    if reasons:
        lines += ["| failures by reason | kernels |", "|---|---|"]
        lines += [f"| {reason} | {count} |" for reason, count in sorted(reasons.items(), key=lambda kv: -kv[1])]
        lines.append("")
    lines += ["| file | entry | parameters (candidates run) | worked | cold s | warm s | first error line | reason |",
              "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        parameters = ", ".join(f"{k}={'/'.join(str(v) for v in vs)}" for k, vs in r["parameters"].items()) or "-"
        error = r["error"].replace("|", "\\|")
        lines.append(f"| {r['source'].lstrip('@')} | `{r['entry']}` | {parameters} ({r['candidates']}) | {'yes' if r['worked'] else 'no'} | "
                     f"{r['cold_s']:.1f} | {r['warm_s']:.1f} | {error} | {r['reason']} |")
    Path(out).write_text("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--advisor", default="build/bin/advisor")
    parser.add_argument("--src", default=".corpus-src")
    parser.add_argument("--work", default=None)
    parser.add_argument("--timeout-s", type=float, default=600)
    parser.add_argument("--profile", default="profiles/h200.json")
    parser.add_argument("--only", nargs="*", help="names (or prefixes) of the rows to run")
    parser.add_argument("--jobs", type=int, default=1, help="rows run at once (each advisor run also compiles on 2 threads)")
    parser.add_argument("--max-candidates", type=int, default=0, help="keep at most this many candidates per spec (0: all)")
    parser.add_argument("--out", default="measurements/public-kernels.md")
    parser.add_argument("--json", default="measurements/public-kernels.json")
    parser.add_argument("--tree", default=None, help="the commit the advisor was built from (default: git's HEAD here)")
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="cachewise-ingest-"))
    items = public_kernels(args.src, work, args.max_candidates)
    if args.only:
        items = [i for i in items if any(i["name"].startswith(p) for p in args.only)]
    load_before = os.getloadavg()[0]

    def ingest(item):
        cache = Path(tempfile.mkdtemp(prefix="cache-", dir=work))
        worked, cold, error = run_once(args.advisor, item, cache, args.timeout_s, args.profile)
        warm = run_once(args.advisor, item, cache, args.timeout_s, args.profile)[1] if worked else 0.0
        reason = "" if worked else classify(error)
        print(f"{item['name']:40s} {'yes' if worked else 'no ':3s} {cold:6.1f} s {warm:6.1f} s {error[:120]}", flush=True)
        return dict(item, spec=str(item["spec"]), worked=worked, cold_s=cold, warm_s=warm, error=error, reason=reason)

    commit = args.tree or subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    command = f"python3 -m cachewise_eval.ingest --advisor {args.advisor} --src {args.src}" + (
        f" --max-candidates {args.max_candidates}" if args.max_candidates else "") + (f" --jobs {args.jobs}" if args.jobs > 1 else "")
    done = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(ingest, item): index for index, item in enumerate(items)}
        for future in concurrent.futures.as_completed(futures):
            done[futures[future]] = future.result()
            rows = [done[i] for i in sorted(done)]  # the table so far, rewritten after every row
            load = (f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after ({os.cpu_count()} cores): the seconds are this "
                    f"machine's under that load" + ("" if len(rows) == len(items) else f"; {len(rows)} of {len(items)} rows run so far"))
            write_table(rows, args.out, command, commit, load, args.max_candidates)
            Path(args.json).write_text(json.dumps({"command": command, "commit": commit, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
