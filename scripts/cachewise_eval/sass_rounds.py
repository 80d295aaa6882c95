#!/usr/bin/env python3
"""The SASS rounds the kernel facts read: measurements/sass/stencil-loads-by-stretch.txt.

Runs `cuobjdump -sass` on a binary holding the kernels library (only the GPU machine has
cuobjdump), splits it per function, and prints loads_ahead_of_use.py's line for every function
whose name matches --match, named by its function and template arguments as the facts
generator (tools/kernel_facts/kernel_facts.cpp) reads them: "stencil2d_globalIfLi1ELi1EE: ...".
Then `ninja kernel_facts` on a machine with nvcc carries them into model/data.
Usage: python3 -m cachewise_eval.sass_rounds BINARY [--match stencil] > measurements/sass/stencil-loads-by-stretch.txt
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

from cachewise_eval import loads_ahead_of_use

# The kernels live in an anonymous namespace: ..._GLOBAL__N__<hash>_<n>_<file>_cu_<hash><len><name>I...E
SCOPED_NAME = re.compile(r"_GLOBAL__N_\w*?_cu_[0-9a-f]{8}(\d+)")


def template_arguments(text, start):
    """The I...E run starting at text[start] (source names skipped by length, literals L...E)."""
    at, depth = start + 1, 1
    while depth:
        char = text[at]
        if char.isdigit():
            digits = re.match(r"\d+", text[at:]).group(0)
            at += len(digits) + int(digits)
            continue
        if char == "L":
            at = text.index("E", at) + 1
            continue
        depth += {"I": 1, "E": -1}.get(char, 0)
        at += 1
    return text[start:at]


def function_key(mangled):
    """"_ZN...10copy_wordsIjEEvPKT_..." -> "copy_wordsIjE"; None for a name not in that shape."""
    match = SCOPED_NAME.search(mangled)
    if not match:
        return None
    length = int(match.group(1))
    name_end = match.end() + length
    name = mangled[match.end():name_end]
    if name_end >= len(mangled) or mangled[name_end] != "I":
        return name
    return name + template_arguments(mangled, name_end)


def split_functions(sass_text):
    functions, current = {}, None
    for line in sass_text.splitlines():
        found = re.search(r"Function : (\S+)", line)
        if found:
            current = function_key(found.group(1))
            if current is not None:
                functions[current] = []
            continue
        if current is not None:
            functions[current].append(line)
    return functions


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--match", default="stencil", help="regular expression on the function key")
    args = parser.parse_args()
    sass = subprocess.run(["cuobjdump", "-sass", args.binary], check=True, capture_output=True, text=True).stdout
    with tempfile.TemporaryDirectory() as directory:
        os.chdir(directory)
        functions = split_functions(sass)
        keys = sorted(key for key in functions if re.search(args.match, key))
        for key in keys:
            with open(key, "w") as handle:
                handle.write("\n".join(functions[key]) + "\n")
        loads_ahead_of_use.main(keys)


if __name__ == "__main__":
    main()
