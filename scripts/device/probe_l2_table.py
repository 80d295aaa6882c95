#!/usr/bin/env python3
"""Prints the L2 latency / capacity and L1 bandwidth values of probe profiles, by each method.

Usage: probe_l2_table.py OLD_PROFILE NEW_PROFILE [NEW_PROFILE ...]

The first profile is the one in the tree (older methods); the others are new probe runs. Second
methods are read from each value's provenance text (the probe writes them there). A missing
file or field prints as n/a, so a partial run still gives a table.
"""
import json
import re
import sys

MIB = 1024 * 1024


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"{path}: {e}", file=sys.stderr)
        return None


def field(profile, *keys):
    node = profile
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def value(profile, *keys):
    node = field(profile, *keys)
    return node.get("value") if isinstance(node, dict) else None


def method(profile, *keys):
    node = field(profile, *keys)
    return node.get("method", "") if isinstance(node, dict) else ""


def confidence(profile, *keys):
    node = field(profile, *keys)
    return node.get("confidence", "?") if isinstance(node, dict) else "?"


def grab(pattern, text, group=1):
    match = re.search(pattern, text or "")
    return match.group(group) if match else "n/a"


def num(x, scale=1.0, digits=1):
    return "n/a" if x is None else f"{x / scale:.{digits}f}"


def per_sm(profile, which):
    c = next((c for c in (profile or {}).get("curves", [])
              if c.get("name", "").startswith("L2 full-cycle chase per SM") and which in c["name"]), None)
    if not c or not c.get("points"):
        return "n/a"
    ys = sorted(y for _, y in c["points"])
    return f"{ys[0]:.0f}..{ys[-1]:.0f} (median {ys[len(ys) // 2]:.0f}, {len(ys)} SMs)"


def rows(profile):
    near_m = method(profile, "l2", "near_hit_latency_cycles")
    far_m = method(profile, "l2", "far_hit_latency_cycles")
    dram_m = method(profile, "dram", "latency_cycles")
    cap_m = method(profile, "l2", "capacity_bytes")
    near_cap_m = method(profile, "l2", "near_capacity_bytes")
    l1_m = method(profile, "l1", "read_bandwidth_gb_per_s")
    return [
        ("L2 near latency (cycles)", num(value(profile, "l2", "near_hit_latency_cycles")),
         "first-touch " + grab(r"first-touch test: ([-0-9.]+) cycles", near_m), confidence(profile, "l2", "near_hit_latency_cycles")),
        ("L2 far latency (cycles)", num(value(profile, "l2", "far_hit_latency_cycles")),
         "first-touch " + grab(r"first-touch test: ([-0-9.]+) cycles", far_m), confidence(profile, "l2", "far_hit_latency_cycles")),
        ("DRAM latency (cycles)", num(value(profile, "dram", "latency_cycles")),
         "chase plateau " + grab(r"DRAM plateau \([^)]*\): ([-0-9.]+) cycles", dram_m), confidence(profile, "dram", "latency_cycles")),
        ("near per SM (chase)", "", per_sm(profile, "near plateau"), ""),
        ("far per SM (chase)", "", per_sm(profile, "far plateau"), ""),
        ("L2 capacity (MiB)", num(value(profile, "l2", "capacity_bytes"), MIB),
         "chase step " + grab(r"DRAM: knee between ([^)]*?) \(", cap_m), confidence(profile, "l2", "capacity_bytes")),
        ("L2 near capacity (MiB)", num(value(profile, "l2", "near_capacity_bytes"), MIB),
         "near hits " + grab(r"plateau hit fraction\): ([0-9.]+ [KMG]iB)", near_cap_m),
         confidence(profile, "l2", "near_capacity_bytes")),
        ("L1 read bandwidth (GB/s)", num(value(profile, "l1", "read_bandwidth_gb_per_s"), 1, 0),
         "clock64 " + grab(r"MHz \(clock64 over %globaltimer, measured right after\) = ([0-9.]+) GB/s", l1_m) +
         ", old kernel " + grab(r"plain loads\): ([0-9.]+) GB/s", l1_m),
         confidence(profile, "l1", "read_bandwidth_gb_per_s")),
    ]


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    old = load(argv[1])
    runs = [(path, load(path)) for path in argv[2:]]
    print("== L2 / L1 values by method (first column: the profile in the tree, older methods)")
    for index, (path, profile) in enumerate(runs, 1):
        print(f"-- run {index}: {path}" + ("" if profile else " (missing)"))
        if not profile:
            continue
        old_rows = rows(old) if old else None
        print(f"{'value':28} {'in tree':>10} {'new':>12}  {'second method':40} confidence")
        for i, (name, new_value, second, conf) in enumerate(rows(profile)):
            before = old_rows[i][1] if old_rows else "n/a"
            print(f"{name:28} {before:>10} {new_value:>12}  {second:40} {conf}")
        print("near/far text:", grab(r"plateaus \(6% tolerance\): (.*?); (?:SM|per-SM|cross)", method(profile, "l2", "near_hit_latency_cycles")))
        print("per-SM spread:", grab(r"per-SM spread (.*?); cross-check", method(profile, "l2", "near_hit_latency_cycles")))
        print("first-touch:", grab(r"(first-touch test from SM.*)$", method(profile, "l2", "near_hit_latency_cycles")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
