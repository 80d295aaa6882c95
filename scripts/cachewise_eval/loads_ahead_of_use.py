#!/usr/bin/env python3
"""How a compiled kernel's global loads go out: in how many latency rounds.

Reads `cuobjdump -sass` output split per function (one file each, as
measurements/README.md makes them) and cuts each into stretches -- code between
an EXIT or a backward branch (a loop's back edge) and the next, so a loop body counts once:
a kernel's compiled path and its rolled loop are separate stretches -- and walks each in order. A load joins the
current round; an instruction reading a register that a load of the current round writes
waits for it, which closes the round: the loads issued after it are the next round, one more
latency. Stores do not wait. Prints, per stretch with loads, how many precede the first wait
and the loads per round (the model keeps the largest round in flight).
Usage: python3 -m cachewise_eval.loads_ahead_of_use SASS_FILE...
"""
import re
import sys

INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9.]*)\s*([^;]*);")
REGISTER = re.compile(r"\bR(\d+)\b")


def instructions(path):
    with open(path) as handle:
        for match in map(INSTRUCTION.search, handle):
            if match:
                yield int(match.group(1), 16), match.group(3), match.group(4)


def stretches(code):
    found, current = [], []
    for address, op, operands in code:
        target = re.search(r"0x([0-9a-f]+)\s*$", operands)
        backward = op.startswith("BRA") and target and int(target.group(1), 16) <= address
        if op == "EXIT" or backward:
            found.append(current)
            current = []
        else:
            current.append((op, operands))
    found.append(current)
    return found


def loaded_registers(op, destination):
    first = int(REGISTER.search(destination).group(1))
    width = 4 if ".128" in op else 2 if ".64" in op else 1
    return range(first, first + width)


def rounds(stretch):
    """Loads per round, and how many loads precede the first wait."""
    per_round, in_flight, before_first_wait = [0], set(), None
    for op, operands in stretch:
        fields = [field.strip() for field in operands.split(",")]
        sources = fields if op.startswith("STG") else fields[1:]
        if in_flight and any(int(r) in in_flight for r in REGISTER.findall(",".join(sources))):
            before_first_wait = per_round[0] if before_first_wait is None else before_first_wait
            per_round.append(0)
            in_flight = set()
        if op.startswith("LDG"):
            per_round[-1] += 1
            in_flight.update(loaded_registers(op, fields[0]))
        elif fields and fields[0] and not op.startswith("STG"):
            in_flight.difference_update(int(r) for r in REGISTER.findall(fields[0]))
    groups = [count for count in per_round if count]
    return groups, sum(groups) if before_first_wait is None else before_first_wait


def main(paths):
    for path in paths:
        lines = []
        for stretch in stretches(instructions(path)):
            groups, ahead = rounds(stretch)
            if groups:
                lines.append("{} loads, {} before the first use, rounds {}".format(sum(groups), ahead, groups))
        print("{}: {}".format(path, "; ".join(lines) if lines else "no loads"))


if __name__ == "__main__":
    main(sys.argv[1:])
