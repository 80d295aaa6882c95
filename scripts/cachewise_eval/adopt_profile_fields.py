#!/usr/bin/env python3
"""Copies named fields (dotted paths, e.g. dram.store_burst_slowdown) from one device profile
into another, leaving every other value of the target as it was measured. Used when a probe
gains a measurement: the shipped profile takes the new field from a fresh probe run of the same
GPU instead of being replaced by a run whose other values moved by noise (docs/probe.md).
Usage: python3 -m cachewise_eval.adopt_profile_fields SOURCE TARGET FIELD [FIELD ...]
"""
import json
import sys


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.splitlines()[-1])
    source_path, target_path, fields = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(source_path) as file:
        source = json.load(file)
    with open(target_path) as file:
        target = json.load(file)
    if source.get("device", {}).get("name") != target.get("device", {}).get("name"):
        sys.exit("adopt_profile_fields: the profiles are of different devices")
    for field in fields:
        *parents, leaf = field.split(".")
        value, place = source, target
        for key in parents:
            value = value[key]
            place = place[key]
        if leaf not in value:
            sys.exit(f"adopt_profile_fields: {source_path} has no {field}")
        place[leaf] = value[leaf]
    with open(target_path, "w") as file:
        file.write(json.dumps(target, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
