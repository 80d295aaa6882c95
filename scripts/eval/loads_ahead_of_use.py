#!/usr/bin/env python3
"""How many global loads a compiled kernel issues before it consumes the first one.

Reads `cuobjdump -sass` output split per function (one file each, as
docs/h200-runs/session7/sass/README.md makes them) and, for each file, takes the straight-line
stretch between two stores/exits with the most LDG instructions (a kernel's interior batch) and
prints its loads and how many of them precede the first floating-point instruction after the
first load: the loads a thread has in flight before it waits (the model's `loads_in_flight`).
Usage: scripts/eval/loads_ahead_of_use.py SASS_FILE...
"""
import re
import sys

OPCODE = re.compile(r"\*/\s+(@!?P\d\s+)?([A-Z][A-Z0-9.]*)")


def opcodes(path):
    with open(path) as handle:
        return [m.group(2) for m in map(OPCODE.search, handle) if m]


def widest_batch(ops):
    stretches, current = [], []
    for op in ops:
        if op.startswith("STG") or op == "EXIT":
            if current:
                stretches.append(current)
            current = []
        else:
            current.append(op)
    if current:
        stretches.append(current)
    return max(stretches, key=lambda s: sum(op.startswith("LDG") for op in s), default=[])


def main(paths):
    for path in paths:
        batch = widest_batch(opcodes(path))
        loads = [i for i, op in enumerate(batch) if op.startswith("LDG")]
        if not loads:
            print("{}: no loads".format(path))
            continue
        first_use = next((i for i, op in enumerate(batch) if op[0] == "F" and i > loads[0]), len(batch))
        ahead = sum(1 for i in loads if i < first_use)
        print("{}: {} loads, {} before the first use".format(path, len(loads), ahead))


if __name__ == "__main__":
    main(sys.argv[1:])
