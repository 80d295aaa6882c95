#!/usr/bin/env python3
"""Writes a calibration (docs/calibration.md) into a device profile's `calibration` section.

    python3 -m cachewise_eval.write_calibration CALIBRATION.json PROFILE.json

CALIBRATION.json is one calibration object (name, values with their sources); the profile is
rewritten in place with its other sections unchanged (keys sorted, indent 2, as save_profile
writes it).
"""
import json
import sys


def main():
    calibration_path, profile_path = sys.argv[1:3]
    with open(calibration_path) as f:
        calibration = json.load(f)
    with open(profile_path) as f:
        profile = json.load(f)
    profile["calibration"] = calibration
    with open(profile_path, "w") as f:
        f.write(json.dumps(profile, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
